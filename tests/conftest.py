from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tablewright.cli import main
from tests.support import terraform_support

ROOT = Path(__file__).resolve().parent.parent
# Blueprints of the tests (features, client, hot keys, tenants, the review corpus's shop).
TEST_BLUEPRINTS = ROOT / "tests" / "data" / "blueprints"
BUNDLED = sorted((ROOT / "blueprints").glob("*.yaml"))


# Test tiers: `pytest` runs the fast tier (addopts `-m 'not terraform'` in pyproject.toml), `pytest -m terraform`
# the slow one: the tests that run the Terraform CLI, the emulator, checkov, the cdktf CLI or another external
# tool (mypy and tsc on the generated clients, Node, actionlint, mkdocs). Both run on every core (`-n auto`).
# Order: pytest-randomly shuffles every run (`--randomly-seed=N` repeats one, `-p no:randomly` turns it off);
# `--reverse-order` runs the collected order backwards.


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--reverse-order", action="store_true", default=False,
                     help="run the tests in reverse order (after pytest-randomly's shuffle, if it is active)")


def _uses_terraform(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(getattr(definition.func, "tablewright_uses_terraform", False)
               for name in info.names_closure for definition in info.name2fixturedefs.get(name, ()))


def _shared_fixture(item: pytest.Item) -> str | None:
    """What the test shares with others: a session fixture of ours (by name), else its module's module-scoped
    fixtures (by module). The tests that share one run on one pytest-xdist worker (`--dist loadgroup`), so
    it is built once, not once per worker."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    ours = [(definition.scope, definition.baseid, name) for name in sorted(info.names_closure)
            for definition in info.name2fixturedefs.get(name, ()) if definition.baseid]  # not pytest's own
    sessions = [name for scope, _, name in ours if scope == "session"]
    modules = [baseid for scope, baseid, _ in ours if scope == "module"]
    return sessions[0] if sessions else modules[0] if modules else None


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects and before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _uses_terraform(item) and item.get_closest_marker("terraform") is None:
            item.add_marker(pytest.mark.terraform)
        group = _shared_fixture(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
    if config.getoption("reverse_order"):
        items.reverse()


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """Say how to repeat this run's order (pytest-randomly's header is hidden under -q)."""
    seed = getattr(config.option, "randomly_seed", None)
    shuffled = isinstance(seed, int) and config.getoption("randomly_reorganize", default=False)
    order = f"shuffled, --randomly-seed={seed}" if shuffled else "as collected (-p no:randomly)"
    if config.getoption("reverse_order"):
        order += ", then reversed (--reverse-order)"
    terminalreporter.write_line(f"test order: {order}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Let tests/support/terraform_support.py see which test is running (an unmarked test reaching a slow tool
    fails)."""
    terraform_support.current_test = item
    try:
        return (yield)
    finally:
        terraform_support.current_test = None


@pytest.fixture
def write_blueprint(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a blueprint (dedented YAML) into the test's directory and return its path."""

    shared = tmp_path / "shared"
    if not shared.exists():  # bundled blueprints extend shared/platform-base.yaml, relative to themselves
        shutil.copytree(ROOT / "blueprints" / "shared", shared)

    def write(text: str, name: str = "blueprint.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture(scope="session")
@terraform_support.uses_terraform
def installed_tool(tmp_path_factory: pytest.TempPathFactory):
    """The wheel, built once, installed in a fresh venv outside the repository (tests/support/wheel_support.py)."""
    from tests.support.wheel_support import build_wheel, install

    place = tmp_path_factory.mktemp("installed")
    return install(build_wheel(place / "dist"), place / "venv")


@pytest.fixture(scope="session")
def verified_features():
    """`verify_stacks` over tests/data/blueprints/features.yaml (every feature, unpatched), run once for the tests
    that only read its result."""
    from tablewright.blueprint.load import load_blueprint
    from tablewright.stacks.stack import build_stacks
    from tablewright.verify.verify import verify_stacks

    [result] = verify_stacks(build_stacks([load_blueprint(TEST_BLUEPRINTS / "features.yaml")]))
    return result


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A git repository with three blueprints on `main` (tests/support/repository.py), the working directory."""
    from tests.support.repository import Repository

    repository = Repository(tmp_path / "repo")
    monkeypatch.chdir(repository.root)
    return repository


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def bundled_stacks():
    """Every stack of the bundled blueprints (one per environment)."""
    from tablewright.blueprint.load import load_blueprints

    return [stack for path in BUNDLED for stack in load_blueprints(path)]
