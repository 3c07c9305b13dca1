"""Hostile text: characters that hide themselves and names that pass for options.

Blueprint descriptions may hold the bidirectional controls of Trojan Source (CVE-2021-42574): in a generated module
they would reorder the code an editor shows, in a terminal the text it prints. Contributor Insights keys come from
the account's traffic, anything at all. Generated code shows each such character as its escape (`\\u202e`, as text)
in its docstrings and comments; terminal output shows it escaped too (ESC as `\\x1b`). The script
`calibrate --print-queries` prints passes every name as `--option=value` (a table named `--endpoint-url` stays a
table name) and uses only the rule names DynamoDB gives, read at run time from `aws`, so every report lands inside
`insights/`.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.calibrate_support import ORDERS, TABLE, as_declared, insight_report
from tests.support.client_support import module_text, stacks_of
from tests.support.hostile_support import SHOP_TEXT, lay_out, replace

# The Trojan Source set, and control characters the loader lets through (tab, line feed) or that come from outside
# the blueprint (ESC, C1's CSI, DEL).
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
CONTROLS = "\x1b\x9b\x7f"
HIDDEN = set(BIDI + CONTROLS + "\u2028\u2029\r\x00")
# An editor that honours the overrides would show the `"""` and `exit(1)` out of place: raw, they could end the
# docstring or pass for a comment.
TROJAN = 'access \u202e""" ;exit(1) #\u2066 check\u2069\u202c done'


def shop(tmp_path: Path, old: str, new: str) -> Path:
    lay_out(tmp_path, {"shop.yaml": replace(old, new, SHOP_TEXT)})
    return tmp_path / "shop.yaml"


def described(tmp_path: Path) -> Path:
    """The shop blueprint with a description, written as YAML escapes, that holds every bidirectional control."""
    escaped = json.dumps(TROJAN + " \t" + BIDI)  # JSON's escapes are YAML's: the file itself is plain ASCII
    return shop(tmp_path, 'customer: {entity: Customer, where: {customerId: "="}, rps: 20}',
                f'customer: {{entity: Customer, where: {{customerId: "="}}, rps: 20, description: {escaped}}}')


def test_a_python_docstring_shows_bidirectional_controls_as_escapes(tmp_path):
    text = module_text(described(tmp_path), "python")
    assert not HIDDEN & set(text)
    # the docstring's value holds the escapes as text too: `help()` shows no reordering either
    docstring = next(ast.get_docstring(node, clean=False) for node in ast.walk(ast.parse(text))
                     if isinstance(node, ast.FunctionDef) and node.name == "customer")
    assert docstring is not None and docstring.startswith('access \\u202e""" ;exit(1) #\\u2066 check\\u2069')
    assert "\\u061c" in docstring and "\t" in docstring  # a tab is no hiding character


def test_a_typescript_doc_comment_shows_bidirectional_controls_as_escapes(tmp_path):
    text = module_text(described(tmp_path), "typescript")
    assert not HIDDEN & set(text)
    assert '/** access \\u202e""" ;exit(1) #\\u2066 check\\u2069\\u202c done' in text


def test_the_header_shows_the_blueprint_path_on_its_one_line(tmp_path):
    # the path as the command line named it: a file name may hold a line break, `"""` or an override
    from tablewright.client import python, typescript
    from tablewright.client.model import client_of

    source = 'shop\u202e.yaml"""\nimport os; os.system("x")\n# \u2028x'
    client = client_of(stacks_of(described(tmp_path)), source)
    module = python.render(client)
    assert not HIDDEN & set(module)
    docstring = ast.get_docstring(ast.parse(module), clean=False)
    assert docstring is not None and docstring.startswith(
        'Data access for blueprint `shop` 1.0.0 (shop\\u202e.yaml"""\\x0aimport os; os.system("x")\\x0a# \\u2028x)')
    header = typescript.render(client).split("\n\n")[0]
    assert not HIDDEN & set(header)
    assert all(line.startswith("//") for line in header.splitlines())


def test_one_set_of_characters_is_escaped_everywhere_and_errors_show_it_too(run_cli, tmp_path):
    from tablewright.text import HIDDEN as ESCAPED

    assert {char for char in map(chr, range(0x3000)) if ESCAPED.fullmatch(char)} >= HIDDEN | {"\n", "\t"}
    code, out, err = run_cli("lint", str(tmp_path / "shop\u202e\x1b[2J.yaml"))  # a name quoted in an error
    assert code == 2 and "shop\\u202e\\x1b[2J.yaml" in err and not HIDDEN & set(out + err), err


def test_terminal_reports_show_a_description_escaped(run_cli, tmp_path):
    shop(tmp_path, "version: 1.0.0", "version: 1.0.0\ndescription: \"the shop\\u202e\\u2066 nimda\"")
    code, out, err = run_cli("list", tmp_path)
    assert code == 0, err
    assert "the shop\\u202e\\u2066 nimda" in out and not HIDDEN & set(out), out


def test_terminal_reports_show_contributor_insights_keys_escaped(run_cli, tmp_path):
    # ESC already became `?` on its way (tablewright.review.pull.printable); the rest is escaped once, at the end
    key = "ORDER#o-1\u202e1-o\u2066\x9b2J\x1b[2J\x7f"
    report = insight_report(tmp_path / "insights", f"DynamoDBContributorInsights-PKT-{TABLE}-1764000000000",
                            {key: 120}, 120)
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *as_declared(tmp_path),
                             "--insights", report)
    assert code == 1, err
    assert not HIDDEN & set(out), out
    assert "`ORDER#o-1\\u202e1-o\\u2066\\u009b2J?[2J?`" in out


# The printed script, against a fake `aws` ---------------------------------------------------------------------

FAKE_AWS = r'''#!PYTHON
"""Stands in for the AWS CLI: records its arguments; lists hostile rule names beside one DynamoDB would give."""
import json, os, sys
args = sys.argv[1:]
with open(os.environ["AWS_CALLS"], "a") as calls:
    calls.write(json.dumps(args) + "\n")
if args[:2] == ["dynamodb", "describe-contributor-insights"]:
    print("\t".join(json.loads(os.environ["RULES"])))
else:
    print("{}")
'''
VALID_RULE = "DynamoDBContributorInsights-PKC---endpoint-url-1764000000000"
HOSTILE_RULES = [
    "../../outside",  # a path out of insights/
    "DynamoDBContributorInsights-PKC-../../../outside-1",  # the right start, then a path
    "/tmp/absolute",
    "--endpoint-url=http://attacker.example",  # an option of `aws`
    "DynamoDBContributorInsights-PKC-t-1 --endpoint-url=http://attacker.example",
    "*",  # a glob
    ".hidden",
    "$(touch pwned)",
    "DynamoDBContributorInsights-\x1b[2J-1",
    "None",  # what `--output text` prints for a table without rules
]


@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_the_printed_script_passes_names_as_values_and_writes_inside_insights(shell, run_cli, tmp_path):
    blueprint = shop(tmp_path / "blueprints", "name: shop_main", 'name: "--endpoint-url"')
    code, script, err = run_cli("calibrate", blueprint, "--print-queries")
    assert code == 0, err
    fake = tmp_path / "bin" / "aws"
    fake.parent.mkdir()
    fake.write_text(FAKE_AWS.replace("PYTHON", sys.executable))
    fake.chmod(0o755)
    work, calls = tmp_path / "work", tmp_path / "calls.jsonl"
    work.mkdir()
    before = {path for path in tmp_path.rglob("*")}
    run = subprocess.run([shell, "-e", "-c", script], cwd=work, capture_output=True, text=True, timeout=60, env={
        **os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}", "AWS_CALLS": str(calls),
        "RULES": json.dumps([*HOSTILE_RULES, VALID_RULE])})
    written = {path.relative_to(tmp_path).as_posix() for path in set(tmp_path.rglob("*")) - before}
    assert written == {"calls.jsonl", "work/queries-shop.json", "work/metrics-shop.json", "work/insights",
                       f"work/insights/{VALID_RULE}.json"}, run.stderr
    assert run.returncode == 0, run.stderr
    argv = [json.loads(line) for line in calls.read_text().splitlines()]
    assert ["dynamodb", "describe-contributor-insights", "--region=us-east-1", "--table-name=--endpoint-url",
            "--query", "ContributorInsightsRuleList[]", "--output", "text"] in argv
    assert not [arg for args in argv for arg in args if arg.startswith("--endpoint-url")]
    rules = [arg for args in argv for arg in args if arg.startswith("--rule-name")]
    assert rules == [f"--rule-name={VALID_RULE}"] * 2  # for the table and for its GSI
    skipped = [line for line in run.stderr.splitlines() if line.startswith("skipped the rule name")]
    assert len(skipped) == 2 * (len(HOSTILE_RULES) - 1) and "\x1b" not in run.stderr
