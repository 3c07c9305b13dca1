"""Platform teams: extends and its merge rules, environments, required tags, schema, catalog, versions."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import jsonschema
import pytest

from tablewright.blueprint.compose import Subtrees, environment_documents, read_document
from tablewright.blueprint.load import load_blueprint, load_blueprints
from tablewright.blueprint.schema import BASE_FILE, BLUEPRINT_FILE, schema_texts
from tablewright.blueprint.yamlsource import load_yaml
from tablewright.errors import TablewrightError
from tests.conftest import BUNDLED, ROOT

SERVICE = """\
blueprint: svc
version: 1.0.0
table: {name: svc_main}
entities:
  User:
    attributes: {userId: string, name: string}
    key: {pk: "USER#{userId}", sk: PROFILE}
access_patterns:
  user: {entity: User, where: {userId: "="}}
"""


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# --- merge rules ------------------------------------------------------------------------------------


def test_mappings_merge_lists_replace_required_tags_add_and_null_removes(tmp_path):
    write(tmp_path, "base/root.yaml", """\
        required_tags: [owner]
        tags: {managed-by: tablewright, team: platform}
        table: {point_in_time_recovery: false, stream: keys_only, deletion_protection: false}
        """)
    write(tmp_path, "base/mid.yaml", """\
        extends: root.yaml
        required_tags: [cost-center]
        tags: {team: data}
        table: {point_in_time_recovery: true}
        """)
    path = write(tmp_path, "svc.yaml", "extends: base/mid.yaml\n" + SERVICE.replace(
        "table: {name: svc_main}",
        "tags: {owner: me, cost-center: c1}\ntable: {name: svc_main, stream: null}"))
    model = load_blueprint(path).blueprint
    assert model.required_tags == ["owner", "cost-center"]  # additive, in order
    assert model.tags == {"managed-by": "tablewright", "team": "data", "owner": "me", "cost-center": "c1"}
    assert model.table.point_in_time_recovery is True  # the nearer file wins
    assert model.table.deletion_protection is False  # inherited from the far end of the chain
    assert model.table.stream == "off"  # explicit null removed the inherited keys_only


def test_a_list_of_bases_applies_in_order(tmp_path):
    write(tmp_path, "a.yaml", "table: {stream: keys_only, table_class: standard_infrequent_access}\n")
    write(tmp_path, "b.yaml", "table: {stream: new_image}\n")
    path = write(tmp_path, "svc.yaml", "extends: [a.yaml, b.yaml]\n" + SERVICE)
    table = load_blueprint(path).blueprint.table
    assert (table.stream, table.table_class) == ("new_image", "standard_infrequent_access")


def test_patterns_merge_key_by_key_and_their_lists_replace(tmp_path):
    write(tmp_path, "base.yaml", SERVICE.replace('where: {userId: "="}}', 'where: {userId: "="}, returns: [userId]}'))
    path = write(tmp_path, "svc.yaml", "extends: base.yaml\naccess_patterns:\n  user:\n    returns: [name]\n")
    model = load_blueprint(path).blueprint
    assert model.access_patterns["user"].returns == ["name"]  # replaced, not [userId, name]
    assert model.access_patterns["user"].entity == "User"  # the rest of the pattern comes from the base


def test_subtrees_find_what_a_scan_of_every_position_finds(tmp_path):
    path = write(tmp_path, "svc.yaml", "extends: [a.yaml]\nrequired_tags: [owner, team]\n" + SERVICE)
    _, source = load_yaml(path)
    subtrees = Subtrees(source)
    for prefix in [(), *source.positions, ("nothing", 0)]:
        scanned = {p: at for p, at in source.positions.items() if p[:len(prefix)] == prefix}
        assert subtrees.under(prefix) == scanned, prefix
        assert list(subtrees.under(prefix)) == list(scanned)  # in document order


def test_overlays_keep_the_position_of_every_inherited_key(tmp_path):
    """20 overlays over 5,000 top-level keys: each merge copies each key's position once (a scan of every
    position per key made this quadratic: minutes at 10,000 keys). The keys are refused later (E200)."""
    overlays = ", ".join(f"e{n}: {{}}" for n in range(20))
    junk = "".join(f"k{n}: {n}\n" for n in range(5_000))
    path = write(tmp_path, "svc.yaml", f"blueprint: svc\nversion: 1.0.0\nenvironments: {{{overlays}}}\n" + junk)
    documents = environment_documents(read_document(path, tmp_path))
    assert sorted(documents) == sorted(f"e{n}" for n in range(20))
    assert documents["e7"].data["k4999"] == 4_999 and documents["e7"].source.positions[("k4999",)].line == 5_003


def test_cycles_and_missing_files_name_the_chain(tmp_path, run_cli):
    write(tmp_path, "a.yaml", "extends: b.yaml\n")
    write(tmp_path, "b.yaml", "extends: a.yaml\n")
    code, _, stderr = run_cli("explain", tmp_path / "a.yaml")
    assert code == 2
    assert f"`extends` forms a cycle: {tmp_path}/a.yaml -> {tmp_path}/b.yaml -> {tmp_path}/a.yaml" in stderr
    assert f"{tmp_path}/b.yaml:1:" in stderr
    write(tmp_path, "c.yaml", "extends: shared/nope.yaml\n" + SERVICE)
    code, _, stderr = run_cli("explain", tmp_path / "c.yaml")
    assert code == 2
    assert f"extended file not found: {tmp_path}/shared/nope.yaml (chain: {tmp_path}/c.yaml -> " in stderr


def test_provenance_of_every_value(tmp_path, run_cli):
    write(tmp_path, "base.yaml", "tags:\n  managed-by: tablewright\n")
    path = write(tmp_path, "svc.yaml", "extends: base.yaml\n" + SERVICE)
    code, out, _ = run_cli("explain", path, "--resolved")
    assert code == 0
    lines = {line.split("#")[0].strip(): line.rsplit("# ", 1)[1] for line in out.splitlines()[1:]}
    assert lines['managed-by: "tablewright"'].endswith("base.yaml:2")
    assert lines['blueprint: "svc"'].endswith("svc.yaml:2")
    assert lines['name: "svc_main"'].endswith("svc.yaml:4")


def test_errors_in_a_base_point_at_the_base(tmp_path, run_cli):
    write(tmp_path, "base.yaml", "table:\n  billing: serverless\n")
    path = write(tmp_path, "svc.yaml", "extends: base.yaml\n" + SERVICE)
    code, _, stderr = run_cli("explain", path)
    assert code == 2 and f"{tmp_path}/base.yaml:2:3: table.billing: 'serverless' is not allowed" in stderr


def test_required_tags_are_enforced(tmp_path, run_cli):
    write(tmp_path, "base.yaml", "required_tags: [owner, cost-center]\n")
    path = write(tmp_path, "svc.yaml", "extends: base.yaml\n" + SERVICE.replace(
        "table:", "tags: {owner: me}\ntable:"))
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out")
    assert code == 2
    assert f"{path}:4:1: tags: missing required tag cost-center (required_tags)" in stderr
    assert not (tmp_path / "out").exists()


# --- environments -----------------------------------------------------------------------------------


def test_each_environment_is_a_stack_with_its_own_names_and_settings(run_cli, tmp_path):
    dev, prod = load_blueprints(BUNDLED[0])
    assert (dev.stack_name, prod.stack_name) == ("crm-dev", "crm-prod")
    assert (dev.blueprint.table.name, prod.blueprint.table.name) == ("dev-crm_main", "prod-crm_main")
    assert (dev.blueprint.table.billing, prod.blueprint.table.billing) == ("on_demand", "provisioned")
    assert (dev.blueprint.production, prod.blueprint.production) == (False, True)
    assert dev.blueprint.table.deletion_protection is False and prod.blueprint.table.deletion_protection is True

    code, _out, _ = run_cli("synth", "--env", "prod", "--out", tmp_path / "out")
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "out" / "stacks").iterdir()) == ["crm-prod", "orders-prod"]
    prod_config = json.loads((tmp_path / "out/stacks/crm-prod/cdk.tf.json").read_text())
    assert prod_config["terraform"]["backend"]["local"]["path"] == "../../../terraform-state/crm-prod.tfstate"
    assert "aws_appautoscaling_target" in prod_config["resource"]
    code, _, stderr = run_cli("synth", "--env", "staging", "--out", tmp_path / "out2")
    assert code == 2 and "none of the 2 blueprint(s) declares environment `staging`" in stderr
    assert "the environments they declare: dev, prod" in stderr


def test_environment_overlay_errors_point_at_the_overlay(tmp_path, run_cli):
    path = write(tmp_path, "svc.yaml", SERVICE + "environments:\n  dev:\n    table: {billing: lots}\n")
    code, _, stderr = run_cli("explain", path)
    assert code == 2 and f"{path}:12:13: table.billing: 'lots' is not allowed" in stderr


def test_s3_backend_key_per_environment(tmp_path):
    from tablewright.stacks.stack import build_stacks
    from tablewright.synth.synth import synthesize

    path = write(tmp_path, "svc.yaml", SERVICE + textwrap.dedent("""\
        terraform:
          backend: {type: s3, bucket: state-bucket, region: eu-west-1, key: "dynamo/{blueprint}/{env}.tfstate"}
        environments: {dev: {}, prod: {production: true}}
        """))
    written = synthesize(build_stacks(load_blueprints(path)), tmp_path / "out")
    backends = [json.loads(p.read_text())["terraform"]["backend"]["s3"] for p in written]
    assert [b["key"] for b in backends] == ["dynamo/svc/dev.tfstate", "dynamo/svc/prod.tfstate"]
    assert all(b["bucket"] == "state-bucket" and b["encrypt"] is True for b in backends)


# --- schema -----------------------------------------------------------------------------------------


def test_committed_schemas_match_the_models():
    for name, text in schema_texts().items():
        committed = ROOT / "schema" / name
        assert committed.read_text() == text, f"{committed} is stale: run `tablewright schema`"


@pytest.mark.parametrize("path", sorted((ROOT / "blueprints").rglob("*.yaml")), ids=lambda p: p.name)
def test_bundled_blueprints_validate_against_the_schema(path):
    data, _ = load_yaml(path)
    shared = "blueprint" not in data
    schema = json.loads((ROOT / "schema" / (BASE_FILE if shared else BLUEPRINT_FILE)).read_text())
    jsonschema.Draft202012Validator(schema).validate(data)
    assert path.read_text().startswith("# yaml-language-server: $schema=")


def test_schema_rejects_what_the_models_reject_and_describes_fields():
    schema = json.loads(schema_texts()[BLUEPRINT_FILE])
    validator = jsonschema.Draft202012Validator(schema)
    data, _ = load_yaml(BUNDLED[0])
    data["table"]["billing"] = "serverless"
    assert list(validator.iter_errors(data))
    assert schema["$defs"]["TableSpec"]["properties"]["billing"]["enum"] == ["provisioned", "on_demand"]
    assert "Partition key template" in schema["$defs"]["KeySpec"]["properties"]["pk"]["description"]
    overlay = {"table": {"billing": "on_demand", "capacity": None}}
    overlay_schema = {"$defs": schema["$defs"], "$ref": "#/$defs/Overlay"}
    jsonschema.Draft202012Validator(overlay_schema).validate(overlay)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(overlay_schema).validate({"table": {"billing": "lots"}})


# --- catalog and scaffold ---------------------------------------------------------------------------


def test_catalog_lists_blueprints(run_cli):
    code, out, _ = run_cli("list", ROOT / "blueprints", "--format", "json")
    assert code == 0
    entries = {e["blueprint"]: e for e in json.loads(out)}
    assert entries["crm"]["environments"] == ["dev", "prod"]
    assert entries["crm"]["tables"] == ["dev-crm_main", "prod-crm_main"]
    assert (entries["crm"]["entities"], entries["crm"]["patterns"], entries["crm"]["owner"]) == (5, 9, "team-crm")
    assert entries["shared/platform-base.yaml"]["kind"] == "shared"
    code, out, _ = run_cli("list", ROOT / "blueprints")
    assert "crm" in out and "dev, prod" in out


def test_scaffold_passes_lint_outside_production_and_synth_once_its_tag_is_set(tmp_path, run_cli):
    base = tmp_path / "shared" / "platform-base.yaml"  # `extends` stays inside the repository (here tmp_path)
    base.parent.mkdir()
    base.write_text((ROOT / "blueprints" / "shared" / "platform-base.yaml").read_text())
    code, said, _ = run_cli("new", "billing-events", "--dir", tmp_path, "--base", base)
    assert code == 0
    assert "set `tags.cost-center` in" in said and "(TW601)" in said
    path = tmp_path / "billing-events.yaml"
    assert path.read_text().startswith("# yaml-language-server: $schema=")
    code, out, _ = run_cli("lint", path, "--strict", "--env", "dev")
    assert code == 0, out
    # The scaffold's placeholder tag is refused in production (the base's `prod` says `production: true`).
    code, out, _ = run_cli("lint", path, "--strict")
    assert code == 1
    line = path.read_text().splitlines().index("  cost-center: set-me") + 1
    assert f"{path}:{line}:3: error TW601: tag `cost-center` is 'set-me', a placeholder, in a production" in out
    assert "fix: set `tags.cost-center` to its real value" in out
    assert out.count("error TW601") == 1 and "billing-events-dev: 0 error(s), 0 warning(s)" in out
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out")
    assert code == 2 and "lint TW601" in stderr and not (tmp_path / "out").exists()
    path.write_text(path.read_text().replace("cost-center: set-me", "cost-center: cc-4711"))
    code, out, _ = run_cli("lint", path, "--strict")
    assert code == 0, out
    code, _, _ = run_cli("synth", path, "--out", tmp_path / "out")
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "out" / "stacks").iterdir()) == ["billing-events-dev",
                                                                              "billing-events-prod"]
    code, _, stderr = run_cli("new", "billing-events", "--dir", tmp_path, "--base", base)
    assert code == 2 and "already exists" in stderr
    code, _, stderr = run_cli("new", "Bad_Name", "--dir", tmp_path, "--base", base)
    assert code == 2 and "not a valid blueprint name" in stderr


# --- versions ---------------------------------------------------------------------------------------


def test_key_template_change_needs_a_major_version(tmp_path, run_cli):
    old = write(tmp_path, "old/svc.yaml", SERVICE)
    new = write(tmp_path, "new/svc.yaml", SERVICE.replace('pk: "USER#{userId}"', 'pk: "U#{userId}"'))
    code, out, _ = run_cli("lint", new, "--against", old)
    assert code == 1
    assert f"{new}:7:" in out
    assert "error TW401: User's keys on the table change from USER#{userId} / PROFILE in PK/SK" in out
    assert "1.0.0 -> 1.0.0" in out and "no migration is declared" in out
    new.write_text(new.read_text().replace("version: 1.0.0", "version: 2.0.0"))
    code, out, _ = run_cli("lint", new, "--against", old)
    assert code == 1 and "error TW401" in out and "major version bumped, 1.0.0 -> 2.0.0" in out  # still undeclared
    new.write_text(new.read_text() + textwrap.dedent("""\
        migrations:
          - {entity: User, from: {pk: "USER#{userId}", sk: PROFILE}, to: {pk: "U#{userId}", sk: PROFILE},
             reason: shorter keys}
        """))
    code, out, _ = run_cli("lint", new, "--against", old)
    assert code == 0 and "info TW401" in out and "major version bumped, 1.0.0 -> 2.0.0" in out


def test_removed_pattern_still_named_by_an_extending_blueprint(tmp_path, run_cli):
    old = write(tmp_path, "old/svc.yaml", SERVICE)
    new = write(tmp_path, "team/svc.yaml", SERVICE.replace('  user: {entity: User, where: {userId: "="}}\n', "")
                .replace("access_patterns:\n", "access_patterns: {}\n"))
    write(tmp_path, "team/child.yaml", "extends: svc.yaml\naccess_patterns:\n  user: {rps: 50}\n")
    code, out, _ = run_cli("lint", new, "--against", old)
    assert code == 1
    assert f"error TW402: access pattern `user` is removed but {tmp_path}/team/child.yaml" in out


def test_against_a_git_revision(tmp_path, run_cli, monkeypatch):
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path, "blueprints/shared/base.yaml", "tags: {managed-by: tablewright}\n")
    path = write(tmp_path, "blueprints/svc.yaml", "extends: shared/base.yaml\n" + SERVICE)
    subprocess.run([*git, "-C", str(tmp_path), "add", "."], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qm", "v1"], check=True)
    path.write_text(path.read_text().replace("sk: PROFILE", "sk: USER"))
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli("lint", "blueprints/svc.yaml", "--against", "HEAD:blueprints/svc.yaml")
    assert code == 1 and "TW401: User's keys on the table change from USER#{userId} / PROFILE in PK/SK" in out
    code, _, stderr = run_cli("lint", "blueprints/svc.yaml", "--against", "nope:blueprints/svc.yaml")
    assert code == 2 and "`nope` is not a commit in this repository" in stderr


def test_load_blueprint_requires_an_environment_when_there_are_several():
    with pytest.raises(TablewrightError, match="declares environments"):
        load_blueprint(BUNDLED[0])
