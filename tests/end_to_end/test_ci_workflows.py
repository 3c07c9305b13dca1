"""The CI workflows `tablewright init` writes (GitHub Actions, GitLab CI) and the Atlantis example: every command
they call parses with the real CLI, their shell steps run, they follow their platform's schema and actionlint."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
import yaml

from tablewright.cli import build_parser
from tablewright.errors import TablewrightError
from tablewright.report.comment import MARKER
from tablewright.scaffold import Choices, project_files
from tests.conftest import ROOT
from tests.support.repository import Repository
from tests.support.terraform_support import missing_tool

EXAMPLES = {  # file: the commands it must call
    "github-actions.yml": {"review", "gate", "synth", "lint"},
    "gitlab-ci.yml": {"review", "gate", "synth"},
    "atlantis/repos.yaml": {"gate", "synth"},
}
# What `init` writes for each CI (a file of the repository it scaffolds), by the name the tests use.
WRITTEN = {"github-actions.yml": (".github/workflows/tablewright.yml", "github"),
           "gitlab-ci.yml": (".gitlab-ci.yml", "gitlab")}


def example(name: str) -> str:
    """The CI workflow `init` writes (region eu-west-1), or an example under examples/."""
    if name not in WRITTEN:
        return (ROOT / "examples" / name).read_text()
    path, ci = WRITTEN[name]
    files = project_files(Choices(project="infra", version="1.2.3", region="eu-west-1", backend="local", ci=ci))
    return files[PurePosixPath(path)]


def tablewright_calls(text: str) -> list[list[str]]:
    """Every `python .../main.py ...` or `tablewright ...` command line outside comments, its shell variables
    replaced by a word."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    calls = re.findall(r"(?:python (?:\S+/)?main\.py|(?<![\w/.-])tablewright) ([^;|&>\n]*)",
                       code.replace("\\\n", " "))
    return [[re.sub(r"\$\{\{[^}]*\}\}|\$\{[^}]*\}|\$\w+|\$\(.*?\)", "X", word) for word in shlex.split(call)]
            for call in calls]


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_command_of_the_examples_parses_with_the_real_cli(name):
    text = example(name)
    yaml.safe_load(text)
    calls = tablewright_calls(text)
    assert {call[0] for call in calls} >= EXAMPLES[name]
    for words in calls:
        build_parser().parse_args(words)  # raises on an unknown command or option
    if name != "github-actions.yml":  # GitHub applies every stack on main; the pull request job reviews
        assert any(call[0] == "synth" and "--changed-since" in call for call in calls)
    assert any(call[0] == "gate" and "--detailed-exitcode" in call for call in calls)


def test_the_workflows_find_the_comment_by_its_marker():
    from tablewright.review import gitlab_note

    assert MARKER in example("github-actions.yml") and gitlab_note.MARKER == MARKER
    assert "python -m tablewright.review.gitlab_note review.md" in example("gitlab-ci.yml")
    for name in ("github-actions.yml", "gitlab-ci.yml"):
        assert any(call[0] == "review" and "--changed-since" in call
                   for call in tablewright_calls(example(name))), name


def test_the_extractor_sees_a_wrong_option(tmp_path):
    """The examples test itself: an option the CLI does not have is caught."""
    [words] = tablewright_calls("run: tablewright synth blueprints/*.yaml --changed-snice main\n# tablewright x\n")
    with pytest.raises(TablewrightError, match="unrecognized arguments: --changed-snice"):
        build_parser().parse_args(words)


def test_a_changed_request_is_visible_at_the_top_of_the_pull_request_comment(repo, run_cli):
    """The detail of each stack is folded; what the application must change is not."""
    repo.overlay("shop.yaml", {"access_patterns": {"customer": {"where": {"email": "="}}}})
    code, out, err = run_cli("review", *repo.blueprints, "--changed-since", "main")
    assert code == 0, err
    top = out.split("<details>")[0]
    assert "> **Application:** requests the application sends change:" in top
    assert "> - `shop`: `customer`: GetItem on the table (PK = CUSTOMER#{customerId} AND SK = PROFILE) -&gt; " in top


@pytest.mark.terraform
def test_the_pull_request_job_of_the_github_workflow_runs(tmp_path):
    """The review job's own shell steps, run as GitHub runs them: the installed Tablewright (as `pip install -r
    base/requirements-tablewright.txt` leaves it, on PATH) on the pull request's checkout (`head`, which adds a
    blueprint), the lint report, the review comment, one Infracost usage file per stack and the lock check all
    produced."""
    workflow = yaml.safe_load(example("github-actions.yml"))
    steps = {step.get("name"): step for step in workflow["jobs"]["review"]["steps"]}
    assert {"run": "pip install -r base/requirements-tablewright.txt"} in workflow["jobs"]["review"]["steps"]
    head = Repository(tmp_path / "head")
    head.git("update-ref", "refs/remotes/origin/main", "HEAD")  # where the pull request branched
    (head.root / "blueprints" / "billing.yaml").write_text(
        (ROOT / "blueprints" / "orders.yaml").read_text().replace("blueprint: orders", "blueprint: billing")
        .replace("name: orders_main", "name: billing_main"))
    head.commit("a new blueprint")
    summary = tmp_path / "summary.md"
    env = {**os.environ, "BASE_REF": "main", "ENVIRONMENT": "prod", "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1",
           "GITHUB_STEP_SUMMARY": str(summary),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for name in ("Lint (annotations in the PR) and review",
                 "Infracost usage files (one per stack, ../infracost/<stack>.yml), for an Infracost step"):
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", steps[name]["run"]], cwd=head.root, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
    assert json.loads((tmp_path / "lint.sarif").read_text())["runs"]
    review = (tmp_path / "review.md").read_text()
    assert review.startswith(MARKER) and "`blueprints/billing.yaml`" in review
    assert summary.read_text() == review  # what a fork's pull request shows instead of the comment
    assert sorted(path.name for path in (tmp_path / "infracost").iterdir()) == [
        "billing-dev.yml", "billing-prod.yml", "crm-dev.yml", "crm-prod.yml", "orders-dev.yml", "orders-prod.yml",
        "shop.yml"]
    locked = steps["The design locks are committed with the blueprints"]["run"]
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", locked], cwd=head.root, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 2 and "blueprints/billing.yaml has no design lock" in done.stderr  # as it should


def workflow() -> dict:
    return yaml.safe_load(example("github-actions.yml"))


def job_text(job: dict) -> str:
    return json.dumps(job)


def test_no_example_names_a_blueprint_so_every_one_discovers_them_as_tablewright_does():
    """Each command takes every blueprint under blueprints/ (or cdktf.json's list): no glob, no list of paths."""
    for name in EXAMPLES:
        for words in tablewright_calls(example(name)):
            assert not any(word.startswith("blueprints/") for word in words), (name, words)
            assert getattr(build_parser().parse_args(words), "blueprints", None) in (None, []), (name, words)


def test_the_github_apply_job_applies_the_saved_plans_of_the_plan_job():
    jobs = workflow()["jobs"]
    plan, apply = jobs["plan"], jobs["apply"]
    plan_script = "\n".join(step.get("run", "") for step in plan["steps"])
    assert "plan -input=false -detailed-exitcode -out=plan.tfplan" in plan_script
    [upload] = [step for step in plan["steps"] if step.get("uses", "").startswith("actions/upload-artifact@")]
    [download] = [step for step in apply["steps"] if step.get("uses", "").startswith("actions/download-artifact@")]
    assert upload["with"]["name"] == download["with"]["name"] and upload["with"]["include-hidden-files"] is True
    assert "!cdktf.out/stacks/*/.terraform/" in upload["with"]["path"]
    assert apply["needs"] == "plan" and apply["if"] == "needs.plan.outputs.apply == 'true'"
    apply_script = "\n".join(step.get("run", "") for step in apply["steps"])
    assert 'terraform -chdir="$stack" apply -input=false plan.tfplan' in apply_script
    assert "terraform -chdir" in apply_script and " plan -" not in apply_script  # no new plan in the apply job
    assert "tablewright gate --plan" in apply_script  # the window may have closed while the job waited


def test_the_github_workflow_uses_oidc_roles_and_keeps_writes_away_from_forks():
    document = workflow()
    jobs = document["jobs"]
    assert "pull_request_target" not in document[True] and "secrets." not in json.dumps(document)
    for name, role in (("plan", "vars.AWS_PLAN_ROLE_ARN"), ("apply", "vars.AWS_APPLY_ROLE_ARN")):
        assert jobs[name]["permissions"] == {"contents": "read", "id-token": "write"}
        [aws] = [step for step in jobs[name]["steps"] if "configure-aws-credentials" in step.get("uses", "")]
        assert aws["with"]["role-to-assume"] == f"${{{{ {role} }}}}"
    assert jobs["apply"]["environment"] == "production"
    same_repository = "github.event.pull_request.head.repo.full_name == github.repository"
    writes = [step for step in jobs["review"]["steps"]
              if "GH_TOKEN" in step.get("env", {}) or "upload-sarif" in step.get("uses", "")]
    assert len(writes) == 2 and all(step["if"] == same_repository for step in writes)


def test_the_schedule_runs_often_and_leaves_the_window_to_each_blueprint():
    [schedule] = workflow()[True]["schedule"]  # YAML 1.1 reads the key `on` as true
    minute, hour, *days = schedule["cron"].split()
    assert minute.startswith("*/") and int(minute[2:]) <= 30 and hour == "*" and days == ["*", "*", "*"]


def test_every_job_installs_the_pinned_tool_and_caches_pip_and_terraform_providers():
    jobs = workflow()["jobs"]
    for name in ("review", "plan", "apply"):
        [python] = [step for step in jobs[name]["steps"] if step.get("uses", "").startswith("actions/setup-python@")]
        assert python["with"]["cache"] == "pip"
        assert python["with"]["cache-dependency-path"].endswith("requirements-tablewright.txt")
        assert any(step.get("run", "").startswith("pip install -r ") and "requirements-tablewright.txt" in step["run"]
                   for step in jobs[name]["steps"])
    for name in ("plan", "apply"):
        [cache] = [step for step in jobs[name]["steps"] if step.get("uses", "").startswith("actions/cache@")]
        assert cache["with"]["path"] == "~/.terraform.d/plugin-cache"
        assert "TF_PLUGIN_CACHE_DIR=$HOME/.terraform.d/plugin-cache" in job_text(jobs[name])
    gitlab = yaml.safe_load(example("gitlab-ci.yml"))
    caches = {entry["key"]["prefix"]: entry for entry in gitlab["default"]["cache"]}
    assert {prefix: entry["key"]["files"] for prefix, entry in caches.items()} == {
        "pip": ["requirements-tablewright.txt"], "terraform-plugins": ["requirements-tablewright.txt"]}
    assert "pip install --quiet -r requirements-tablewright.txt" in gitlab["default"]["before_script"]
    assert gitlab["variables"]["TF_PLUGIN_CACHE_DIR"].endswith(caches["terraform-plugins"]["paths"][0])


def test_the_gitlab_apply_job_applies_the_saved_plans_with_an_oidc_role():
    gitlab = yaml.safe_load(example("gitlab-ci.yml"))
    plan, apply = gitlab["plan"], gitlab["apply"]
    assert apply["needs"] == ["plan"] and "cdktf.out/stacks/" in plan["artifacts"]["paths"]
    assert 'terraform -chdir="$dir" apply -input=false plan.tfplan' in "\n".join(apply["script"])
    assert " plan -" not in "\n".join(apply["script"])
    assert gitlab[".aws"]["id_tokens"]["AWS_ID_TOKEN"]["aud"]
    assert plan["extends"] == apply["extends"] == ".aws" and apply["variables"]["AWS_ROLE_ARN"] == "$AWS_APPLY_ROLE_ARN"


def gitlab_child_pipeline(repo: Repository, run_cli, tmp_path: Path) -> Path:
    """The child pipeline the merge request's `synth` job writes, for the stacks a change affects."""
    repo.edit("orders.yaml", "version: 1.0.0", "version: 1.0.1")
    assert run_cli("synth", "--changed-since", "main", "--env", "prod")[0] == 0
    script = yaml.safe_load(example("gitlab-ci.yml"))["synth"]["script"][1]
    env = {**os.environ, "ENVIRONMENT": "prod", "AWS_REGION": "eu-west-1", "TF_IMAGE": "example/terraform:1",
           "CI_PIPELINE_ID": "42", "CI_MERGE_REQUEST_DIFF_BASE_SHA": "abc123", "AWS_PLAN_ROLE_ARN": "arn:role"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=repo.root, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    return repo.root / "stacks.yml"


def test_the_gitlab_child_pipeline_plans_each_affected_stack(repo, run_cli, tmp_path):
    child = yaml.safe_load(gitlab_child_pipeline(repo, run_cli, tmp_path).read_text())
    assert child["plan:orders-prod"] == {"extends": ".plan", "variables": {"STACK": "orders-prod"}}
    assert [name for name in child if name.startswith("plan:")] == ["plan:orders-prod"]
    assert child[".plan"]["needs"] == [{"pipeline": "42", "job": "synth"}]
    assert "$CI_PROJECT_DIR" in child["variables"]["PIP_CACHE_DIR"]  # expanded in the child's own jobs
    words = shlex.split(child["review"]["script"][0].split(">")[0])
    assert build_parser().parse_args(words[1:]).changed_since == "abc123"


def schema_check(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        missing_tool("check-jsonschema (the `test` extra) is not installed")
    # The schema check-jsonschema vendors (SchemaStore's): nothing is fetched.
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
                          capture_output=True, text=True)


@pytest.mark.parametrize(("name", "schema"), [("github-actions.yml", "vendor.github-workflows"),
                                              ("gitlab-ci.yml", "vendor.gitlab-ci")])
def test_the_workflow_follows_its_platforms_schema(name, schema, tmp_path):
    written = tmp_path / "written" / name
    written.parent.mkdir()
    written.write_text(example(name))
    done = schema_check(schema, written)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = tmp_path / name  # and the check sees a mistyped key
    broken.write_text(example(name).replace("\n  script:", "\n  scirpt:", 1)
                      .replace("\n    runs-on:", "\n    runs_on:", 1))
    assert schema_check(schema, broken).returncode == 1


def test_the_gitlab_child_pipeline_follows_gitlabs_schema(repo, run_cli, tmp_path):
    done = schema_check("vendor.gitlab-ci", gitlab_child_pipeline(repo, run_cli, tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


ACTIONLINT = ROOT / "node_modules" / "@tktco" / "node-actionlint"
# actionlint's own checks (expressions, contexts, the inputs of known actions), compiled to WebAssembly. The
# path `<stdin>`: with a file path actionlint looks for the repository on disk, which its WebAssembly build
# cannot do.
LINT = """const {runLint} = require(process.argv[1]);
runLint(require("fs").readFileSync(0, "utf8"), "<stdin>").then(
  (found) => { console.log(JSON.stringify(found)); process.exit(0); },
  (error) => { console.error(error); process.exit(3); });
"""


def actionlint(text: str) -> list[dict]:
    if not (ACTIONLINT / "main.wasm").is_file() or shutil.which("node") is None:
        missing_tool("actionlint is not installed (run `npm ci`)")
    done = subprocess.run(["node", "-e", LINT, str(ACTIONLINT)], input=text, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.terraform
def test_the_github_workflow_passes_actionlint():
    text = example("github-actions.yml")
    assert actionlint(text) == []
    [found] = actionlint(text.replace("retention-days:", "retention-dayz:"))  # an input upload-artifact lacks
    assert found["kind"] == "action" and "retention-dayz" in found["message"]
