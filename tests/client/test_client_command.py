"""`tablewright client`: one module per blueprint into `--out` (never through a link planted there), and what it
refuses: bad arguments, a blueprint with lint errors, names the module would define twice or take from itself,
environments of different designs without `--env`."""

from __future__ import annotations

import os
import textwrap

import pytest

from tests.support.client_support import BLUEPRINTS


def test_client_command_writes_one_module_per_blueprint(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "keep.py").write_text("mine")
    code, out, err = run_cli("client", str(BLUEPRINTS["orders"]), str(BLUEPRINTS["crm"]), "--lang", "python",
                             "--out", "app")
    assert code == 0, err
    assert out.splitlines() == ["wrote app/crm_client.py", "wrote app/orders_client.py"]
    assert (tmp_path / "app" / "keep.py").read_text() == "mine"
    assert "2 python client module(s) written into app, from 4 stack(s) of 2 blueprint(s) designed" in err
    code, out, err = run_cli("client", str(BLUEPRINTS["orders"]), "--lang", "typescript", "--out", "app")
    assert code == 0 and out == "wrote app/orders_client.ts\n"


@pytest.mark.parametrize(("arguments", "message"), [
    (["--lang", "java", "--out", "app"], "argument --lang: invalid choice: 'java'"),
    (["--lang", "python", "--out", "../elsewhere"], "--out ../elsewhere is outside the working directory"),
    (["--lang", "python", "--out", "."], "--out . is the working directory"),
])
def test_bad_arguments_exit_2_and_write_nothing(arguments, message, run_cli, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, _, err = run_cli("client", str(BLUEPRINTS["orders"]), *arguments)
    assert code == 2 and message in err and "Traceback" not in err
    assert list(tmp_path.rglob("*client*")) == []


def test_a_blueprint_with_lint_errors_gets_no_client(run_cli, write_blueprint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: hot
        version: 1.0.0
        table: {name: hot_main}
        entities:
          Event:
            attributes: {kind: {type: string, values: [A]}, at: timestamp}
            key: {pk: "EVENT#{kind}", sk: "{at}"}
            writes_per_second: 5000
        access_patterns:
          events: {entity: Event, where: {kind: "="}}
    """))
    code, _, err = run_cli("client", str(path), "--lang", "python", "--out", "app")
    assert code == 2 and "[E502]" in err
    assert not (tmp_path / "app").exists()


@pytest.mark.parametrize(("snippet", "line", "clash"), [
    ("  put_user: {entity: User, where: {userId: \"=\"}}\n", 9, "`self.put_user` twice: for access_patterns.put_user"),
    ("  check_design: {entity: User, where: {userId: \"=\"}}\n", 9, "`self.check_design` twice"),
])
def test_generated_names_that_collide_are_located_errors(snippet, line, clash, run_cli, write_blueprint, tmp_path,
                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: names
        version: 1.0.0
        table: {name: names_main}
        entities:
          User:
            attributes: {userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        access_patterns:
    """) + snippet)
    code, _, err = run_cli("client", str(path), "--lang", "python", "--out", "app")
    assert code == 2 and clash in err and f"blueprint.yaml:{line}:" in err, err
    assert not (tmp_path / "app").exists()


@pytest.mark.parametrize(("entity", "languages"), [
    ("Page", ("python", "typescript")),  # the page type of both
    ("ValueError", ("python",)),  # a Python builtin
    ("Record", ("typescript",)),  # a TypeScript global type
    ("Date", ("typescript",)),
])
def test_an_entity_named_like_what_the_module_uses_is_refused(entity, languages, run_cli, write_blueprint, tmp_path,
                                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent(f"""\
        blueprint: pages
        version: 1.0.0
        table: {{name: pages_main}}
        entities:
          {entity}:
            attributes: {{pageId: string}}
            key: {{pk: "PAGE#{{pageId}}", sk: "PAGE"}}
        access_patterns:
          page: {{entity: {entity}, where: {{pageId: "="}}}}
    """))
    for language in ("python", "typescript"):
        code, _, err = run_cli("client", str(path), "--lang", language, "--out", "app")
        if language in languages:
            assert code == 2 and f"`{entity}` twice: for entities.{entity} and the generated module's own" in err
            assert "blueprint.yaml:5:" in err
        else:
            assert code == 0, err


def test_two_attributes_that_become_one_parameter_are_refused(run_cli, write_blueprint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: legs
        version: 1.0.0
        table: {name: legs_main}
        entities:
          Leg:
            attributes: {tripId: string, from: string, from_: string}
            key: {pk: "TRIP#{tripId}", sk: "LEG#{from}#{from_}"}
        access_patterns:
          leg: {entity: Leg, where: {tripId: "=", from: "=", from_: "="}}
    """))
    code, _, err = run_cli("client", str(path), "--lang", "python", "--out", "app")
    assert code == 2 and "`leg_table_key(from_)` twice" in err and "[E402]" in err, err
    code, _, err = run_cli("verify", str(path), "--client")
    assert code == 2 and "[E402]" in err and "Traceback" not in err


def test_a_typescript_method_named_constructor_is_refused(run_cli, write_blueprint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: ctor
        version: 1.0.0
        table: {name: ctor_main}
        entities:
          User:
            attributes: {userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        access_patterns:
          constructor: {entity: User, where: {userId: "="}}
    """))
    code, _, err = run_cli("client", str(path), "--lang", "typescript", "--out", "app")
    assert code == 2 and "`this.constructor` twice" in err and "blueprint.yaml:9:" in err, err
    assert run_cli("client", str(path), "--lang", "python", "--out", "app")[0] == 0


def test_a_link_planted_in_the_output_directory_is_not_followed(run_cli, tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "app").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    monkeypatch.chdir(work)
    for name in (f".orders_client.py.{os.getpid()}", ".orders_client.py.tmp"):
        (work / "app" / name).symlink_to(victim)
    code, _, err = run_cli("client", str(BLUEPRINTS["orders"]), "--lang", "python", "--out", "app")
    assert code == 0, err
    written = work / "app" / "orders_client.py"
    assert not written.is_symlink() and written.read_text().startswith('"""Data access for blueprint `orders`')
    assert victim.read_text() == "untouched"
    assert oct(written.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_environments_with_different_designs_need_env(run_cli, write_blueprint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: split
        version: 1.0.0
        table: {name: split_main}
        environments:
          dev: {}
          prod:
            entities:
              User: {key: {pk: "U#{userId}", sk: "PROFILE"}}
        entities:
          User:
            attributes: {userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        access_patterns:
          user: {entity: User, where: {userId: "="}}
    """))
    code, _, err = run_cli("client", str(path), "--lang", "python", "--out", "app")
    if code == 2 and "[E401]" in err:
        pytest.skip("environments cannot override entity keys")
    assert code == 2 and "the environments of split differ in design" in err, err
    code, _, err = run_cli("client", str(path), "--env", "prod", "--lang", "python", "--out", "app")
    assert code == 0, err
    assert '"U#"' not in (tmp_path / "app" / "split_client.py").read_text()
    assert '"PK": "#".join(["U", _text(userId)])' in (tmp_path / "app" / "split_client.py").read_text()
