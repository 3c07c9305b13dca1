"""Install benchmark: the wheel as users get it, and the first mile.

    python bench/install.py [--repeat 3]

Measures, each checked as it goes:
- the wheel's size, and the installed venv's size and install time (`pip install -c constraints.txt WHEEL` into
  a fresh venv; pip's cache as the machine has it: the first install on a machine downloads more);
- `tablewright local` start-up: from starting the process to its export lines, with `--empty` and with the
  bundled blueprints' dev tables (median over the repeats);
- from `pip install` to a gate verdict on the getting-started blueprint: install, `init`, `new payments`,
  `synth --env dev`, `local --empty`, Terraform `init` and `plan` against it (the provider mirror), `show
  -json`, `gate` (one run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.emulator import read_exports  # noqa: E402
from tests.support.terraform_support import find_mirror  # noqa: E402
from tests.support.wheel_support import build_wheel  # noqa: E402


def megabytes(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file() and not entry.is_symlink()) / 2**20


def install(wheel: Path, venv: Path) -> float:
    """A fresh venv with the wheel: the seconds it took."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "-c", str(ROOT / "constraints.txt"),
                    str(wheel)], check=True, capture_output=True)
    return time.perf_counter() - start


def user_environment(venv: Path, **extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith(("AWS_", "TF_CLI_CONFIG"))}
    return {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
            "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1", **extra}


def start_local(cwd: Path, env: dict[str, str], *arguments: str) -> tuple[float, subprocess.Popen[str], str]:
    """`tablewright local --port 0 ARGS` started: the seconds to its export lines, the process, its endpoint."""
    start = time.perf_counter()
    process = subprocess.Popen(["tablewright", "local", "--port", "0", *arguments], cwd=cwd, text=True, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    endpoint = read_exports(process)["AWS_ENDPOINT_URL"]
    return time.perf_counter() - start, process, endpoint


def first_mile(wheel: Path, place: Path, mirror: Path) -> tuple[float, str]:
    """Seconds from `pip install` to the gate's verdict, and that verdict's first line."""
    start = time.perf_counter()
    venv = place / "venv"
    install(wheel, venv)
    repository = place / "infra"
    repository.mkdir()
    env = user_environment(venv, TABLEWRIGHT_PROVIDER_MIRROR=str(mirror))

    def tw(*arguments: str) -> str:
        return subprocess.run(["tablewright", *arguments], cwd=repository, env=env, check=True, capture_output=True,
                              text=True).stdout

    tw("init")
    tw("new", "payments")
    tw("synth", "--env", "dev")
    _, local, endpoint = start_local(repository, env, "--empty")
    try:
        terraform = ["terraform", "payments-dev", "--endpoint", endpoint, "--"]
        tw(*terraform, "init", "-input=false")
        tw(*terraform, "plan", "-input=false", "-out=plan.tfplan")
        (repository / "plan.json").write_text(tw(*terraform, "show", "-json", "plan.tfplan"))
        verdict = subprocess.run(["tablewright", "gate", "--plan", "plan.json", "--env", "dev"], cwd=repository,
                                 env=env, capture_output=True, text=True)
        if verdict.returncode not in (0, 1):
            raise SystemExit(f"gate failed: {verdict.stderr}")
        return time.perf_counter() - start, verdict.stdout.splitlines()[0]
    finally:
        local.terminate()
        local.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    mirror = find_mirror()
    if mirror is None or shutil.which("terraform") is None:
        raise SystemExit("needs the Terraform CLI and a provider mirror (TABLEWRIGHT_PROVIDER_MIRROR)")
    with tempfile.TemporaryDirectory(prefix="tablewright-bench-install-") as temporary:
        place = Path(temporary)
        wheel = build_wheel(place / "dist")
        print(f"wheel: {wheel.name}, {megabytes(wheel):.2f} MiB")
        installs = [install(wheel, place / f"venv-{run}") for run in range(args.repeat)]
        print(f"install into a fresh venv (-c constraints.txt, warm pip cache): {statistics.median(installs):.1f} s "
              f"(median of {args.repeat}); the venv holds {megabytes(place / 'venv-0'):.0f} MiB")
        venv = place / "venv-0"
        project = place / "project"
        shutil.copytree(ROOT / "blueprints", project / "blueprints")
        for label, arguments in (("--empty", ["--empty"]), ("the bundled blueprints' 2 dev tables", [])):
            starts = []
            for _ in range(args.repeat):
                seconds, process, _ = start_local(project, user_environment(venv), *arguments)
                process.terminate()
                if process.wait() != 0:
                    raise SystemExit("tablewright local did not stop with exit 0")
                starts.append(seconds)
            print(f"local start-up, {label}: {statistics.median(starts):.2f} s (median of {args.repeat})")
        seconds, verdict = first_mile(wheel, place / "first-mile", mirror)
        print(f"pip install to a gate verdict on the getting-started blueprint: {seconds:.0f} s ({verdict[:60]}...)")


if __name__ == "__main__":
    main()
