"""The help that closes each command's `--help`: its exit codes and example command lines."""

from __future__ import annotations

from tablewright.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, EXIT_WINDOW


def epilog(failed: str | None, examples: list[str], window: str | None = None) -> str:
    """The exit codes (modules/tablewright/errors.py) and example command lines closing a command's --help."""
    lines = ["exit codes:", f"  {EXIT_OK}  ok",
             f"  {EXIT_FAILED}  " + (f"failed: {failed}" if failed else "not used by this command"),
             f"  {EXIT_BAD_INPUT}  bad input: a blueprint, plan, file or argument is wrong (one located message "
             "with its fix)",
             f"  {EXIT_INTERNAL}  internal error: a bug in Tablewright (--debug prints the traceback)"]
    if window:
        lines.append(f"  {EXIT_WINDOW}  with --detailed-exitcode: {window}")
    return "\n".join([*lines, "", "examples:", *(f"  {example}" for example in examples)])


EPILOGS: dict[str, str] = {
    "synth": epilog(None, ["tablewright synth", "tablewright synth blueprints/orders.yaml --env prod --locked",
                           "tablewright synth --changed-since origin/main --out cdktf.out"]),
    "explain": epilog(None, ["tablewright explain blueprints/orders.yaml --env prod",
                             "tablewright explain blueprints/orders.yaml --format markdown > DESIGN.md",
                             "tablewright explain blueprints/orders.yaml --env prod --resolved"]),
    "verify": epilog("an access pattern or an index returned other items than the design says",
                     ["tablewright verify blueprints/orders.yaml", "tablewright verify --format json"]),
    "lint": epilog("a lint error (--strict: a warning too), or a breaking change without a major version",
                   ["tablewright lint --strict", "tablewright lint blueprints/orders.yaml --format sarif > "
                    "lint.sarif", "tablewright lint blueprints/orders.yaml --against "
                    "origin/main:blueprints/orders.yaml"]),
    "capacity": epilog(None, ["tablewright capacity blueprints/orders.yaml --env prod",
                              "tablewright capacity blueprints/orders.yaml --env prod --format infracost "
                              "> usage.yml",
                              "tablewright capacity --format infracost --out-dir infracost"]),
    "simulate": epilog(None, ["tablewright simulate blueprints/orders.yaml --env prod",
                              "tablewright simulate --format json > simulation.json",
                              "tablewright simulate blueprints/orders.yaml --format markdown"]),
    "calibrate": epilog("observed traffic exceeds the declared rates beyond the tolerance, or was throttled",
                        ["tablewright calibrate blueprints/orders.yaml --env prod --print-queries > query.sh",
                         "tablewright calibrate blueprints/orders.yaml --env prod --metrics metrics.json",
                         "tablewright calibrate --env prod --metrics p1.json p2.json --insights insights/*.json"]),
    "client": epilog(None, ["tablewright client blueprints/orders.yaml --lang python --out app/db",
                            "tablewright client --lang typescript --out src/db"]),
    "review": epilog("with --detailed-exitcode: a change is blocked (it would lose data or protection)",
                     ["tablewright review --base origin/main:blueprints/orders.yaml --head blueprints/orders.yaml",
                      "tablewright review --changed-since origin/main --plan-dir plans --detailed-exitcode"],
                     window="a change needs the maintenance window, none is blocked"),
    "gate": epilog("the plan must not be applied now (a change is blocked, or waits for the window)",
                   ["terraform show -json plan.out > plan.json && tablewright gate --plan plan.json",
                    "tablewright gate --plan plan.json --blueprint blueprints/orders.yaml --detailed-exitcode"],
                   window="only window changes wait for the window (1 stays blocked)"),
    "migrate": epilog("run: items left unmigrated; verify: items not where the later design reads them",
                      ["tablewright migrate plan blueprints/orders.yaml --against origin/main --max-wcu 200",
                       "tablewright migrate run blueprints/orders.yaml --against origin/main --max-wcu 200",
                       "tablewright migrate run ... --segments 8 --segment 3   # one worker of eight",
                       "tablewright migrate verify blueprints/orders.yaml --against origin/main"]),
    "list": epilog(None, ["tablewright list", "tablewright list blueprints --format json"]),
    "new": epilog(None, ["tablewright new billing", "tablewright new billing --dir services"]),
    "adopt": epilog(None, ["aws dynamodb describe-table --table-name orders > table.json",
                           "tablewright adopt table.json --name orders"]),
    "schema": epilog(None, ["tablewright schema", "tablewright schema --out schema"]),
    "init": epilog(None, ["tablewright init", "tablewright init infra --backend s3 --state-bucket acme-tfstate "
                          "--ci gitlab"]),
    "local": epilog(None, ["tablewright local --empty   # then, in another shell, the export lines it printed",
                           "tablewright local blueprints/orders.yaml --env dev --items 20 --port 4570"]),
    "terraform": epilog("Terraform's own exit code once it runs (-detailed-exitcode: 2 is changes)",
                        ["tablewright terraform orders-dev --endpoint http://127.0.0.1:4566 -- init",
                         "tablewright terraform orders-dev --endpoint http://127.0.0.1:4566 -- plan -out plan.out",
                         "tablewright terraform orders-prod -- plan -out plan.out"]),
}
TOP_EPILOG = (epilog("what it means depends on the command: see `tablewright COMMAND --help`",
                     ["tablewright new billing", "tablewright lint --strict", "tablewright synth"],
                     window="review and gate: a change waits for the maintenance window")
              + "\n\nEvery command also takes --debug (on an internal error, exit 3, print the traceback) and"
              "\n--root DIR (the project: default, the nearest directory up from here with cdktf.json, else with"
              "\nblueprints/)."
              "\nColour: on a terminal only; NO_COLOR=1 turns it off.")
