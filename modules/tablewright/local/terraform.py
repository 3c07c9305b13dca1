"""`tablewright terraform STACK [--endpoint URL] -- ARGS`: Terraform in a stack's directory, offline when asked.

With an endpoint, the stack is pointed at the emulator the way LocalStack's `tflocal` does it: a
`*_override.tf.json` file, which Terraform merges into the configuration
(https://developer.hashicorp.com/terraform/language/files/override), holds a provider block with an endpoint
per service, dummy credentials and the checks that would reach AWS turned off, and a local backend of its
own (an override's backend replaces the stack's), so an emulator's state never lands in the stack's real
state. Terraform's working data for it (`TF_DATA_DIR`) is kept apart too. The file is removed when Terraform
ends, however it ends (Ctrl-C and SIGTERM included).

Providers: `TABLEWRIGHT_PROVIDER_MIRROR` (a filesystem mirror, as `terraform providers mirror DIR` writes one);
else a CLI configuration the user has (`TF_CLI_CONFIG_FILE`, or `~/.terraformrc`), used as it is; else a mirror
in the usual places (`MIRROR_CANDIDATES`); else the registry.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tablewright.errors import ErrorCode, TablewrightError
from tablewright.files import create_new_file
from tablewright.local.emulator import LOOPBACK, REGION, provider_override
from tablewright.synth.output import LOCAL_OVERRIDE_FILE

MIRROR_ENV = "TABLEWRIGHT_PROVIDER_MIRROR"
PROVIDER = Path("registry.terraform.io/hashicorp/aws")
# Beside the stack's files: the emulator's state and Terraform's working data for it (synth keeps what it did not
# write, so both survive a new synth).
LOCAL_DIRECTORY = ".tablewright-local"
# Where a provider mirror is looked for when none is configured (Terraform's implied mirror directories included).
MIRROR_CANDIDATES = (Path("/opt/tf-plugins"), Path.home() / ".terraform.d/plugins",
                     Path.home() / ".local/share/terraform/plugins", Path("/usr/local/share/terraform/plugins"),
                     Path("/usr/share/terraform/plugins"))
MIRROR_SETUP = (f"on a machine that reaches the registry, `terraform providers mirror DIR` in a synthesized stack "
                f"writes a mirror; copy DIR here and set {MIRROR_ENV}=DIR")


def find_mirror() -> Path | None:
    """The provider mirror: `TABLEWRIGHT_PROVIDER_MIRROR` (refused when it lacks hashicorp/aws), else the first of
    the usual places that holds the provider."""
    configured = os.environ.get(MIRROR_ENV)
    if configured:
        if not (Path(configured) / PROVIDER).is_dir():
            raise TablewrightError(f"{MIRROR_ENV}={configured} holds no {PROVIDER}", code=ErrorCode.TERRAFORM_SETUP,
                                   hint=f"point it at the directory that holds registry.terraform.io/, or unset it; "
                                        f"{MIRROR_SETUP}")
        return Path(configured)
    return next((candidate for candidate in MIRROR_CANDIDATES if (candidate / PROVIDER).is_dir()), None)


def mirror_config(mirror: Path) -> str:
    """A CLI configuration that installs hashicorp providers from `mirror`, others from their registries."""
    return ("provider_installation {\n"
            f"  filesystem_mirror {{\n    path    = {json.dumps(str(mirror))}\n"
            '    include = ["registry.terraform.io/hashicorp/*"]\n  }\n'
            '  direct {\n    exclude = ["registry.terraform.io/hashicorp/*"]\n  }\n'
            "}\n")


def chosen_mirror() -> Path | None:
    """The mirror to configure: none when the user has a CLI configuration of their own (`TF_CLI_CONFIG_FILE`, or
    Terraform's default `~/.terraformrc`) and names no mirror: theirs is used as it is."""
    user_config = Path(os.environ.get("TF_CLI_CONFIG_FILE") or Path.home() / ".terraformrc")
    if MIRROR_ENV not in os.environ and user_config.is_file():
        return None
    return find_mirror()


def terraform_environment(scratch: Path, endpoint: str | None, stack_dir: Path, mirror: Path | None) -> dict[str, str]:
    """Terraform's environment: the mirror's CLI configuration, and for an emulator its own data directory."""
    env = dict(os.environ)
    env.setdefault("CHECKPOINT_DISABLE", "1")
    if mirror is not None:
        config = scratch / "terraform.tfrc"
        config.write_text(mirror_config(mirror))
        env["TF_CLI_CONFIG_FILE"] = str(config)
    if endpoint is not None:
        env["TF_DATA_DIR"] = str((stack_dir / LOCAL_DIRECTORY / ".terraform").resolve())
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):  # real credentials never reach the emulator's provider
            env.pop(name, None)
        env.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_ENDPOINT_URL=endpoint)
    return env


def check_endpoint(endpoint: str) -> str:
    """The emulator's URL rebuilt from its port (`http://127.0.0.1:PORT`): nothing else of what was typed reaches
    the override file, so no user, path, query, fragment or `${...}` does."""
    refused = TablewrightError(f"--endpoint {endpoint!r} is not the emulator's URL", code=ErrorCode.TERRAFORM_SETUP,
                               hint="pass it as `tablewright local` prints it, e.g. --endpoint http://127.0.0.1:4566")
    if not endpoint.isprintable() or endpoint != endpoint.strip():
        raise refused
    try:
        parts = urlsplit(endpoint)
        port = parts.port
    except ValueError:
        raise refused from None
    if (parts.scheme != "http" or parts.hostname != LOOPBACK or parts.username is not None or port is None
            or parts.path not in ("", "/") or parts.query or parts.fragment or "?" in endpoint or "#" in endpoint
            or not 0 < port < 65536):
        raise refused
    return f"http://{LOOPBACK}:{port}"


def local_override(endpoint: str, region: str) -> dict[str, Any]:
    """The override file's content: the emulator's provider and a local state of its own."""
    return {**provider_override(endpoint, region=region),
            "terraform": {"backend": {"local": {"path": f"{LOCAL_DIRECTORY}/terraform.tfstate"}}}}


def stack_region(stack_dir: Path) -> str:
    """The region the stack's provider names (the emulator's default when it names none)."""
    try:
        config = json.loads((stack_dir / "cdk.tf.json").read_text())
        [provider] = config["provider"]["aws"]
        return str(provider.get("region") or REGION)
    except (OSError, ValueError, KeyError, TypeError):
        return REGION


def local_directory(stack_dir: Path) -> Path:
    """`.tablewright-local/` of the stack, made if missing; a link or a file there is refused (an emulator's
    state and working data go nowhere else)."""
    directory = stack_dir / LOCAL_DIRECTORY
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise TablewrightError(f"{directory} is not a directory of its own (a link, or a file)",
                               code=ErrorCode.TERRAFORM_SETUP, hint="remove it: `--endpoint` runs keep the "
                                                                   "emulator's state there")
    directory.mkdir(exist_ok=True)
    return directory


def remove_stale_override(stack_dir: Path) -> bool:
    """Remove an override left by a run that was killed (a regular file of that name; a link is refused): it would
    point Terraform at the emulator. Whether there was one."""
    path = stack_dir / LOCAL_OVERRIDE_FILE
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise TablewrightError(f"{path} is not a file Tablewright wrote (a link, or a directory)",
                               code=ErrorCode.TERRAFORM_SETUP, hint="remove it: the name is Tablewright's")
    if not path.exists():
        return False
    path.unlink()
    return True


@contextmanager
def overridden(stack_dir: Path, endpoint: str) -> Iterator[None]:
    """The override file in `stack_dir` while the block runs (a new file: no link is followed); removed afterwards,
    however the block ends."""
    remove_stale_override(stack_dir)
    local_directory(stack_dir)
    path = stack_dir / LOCAL_OVERRIDE_FILE
    create_new_file(path, json.dumps(local_override(endpoint, stack_region(stack_dir)), indent=2) + "\n")
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


def run_terraform(stack_dir: Path, arguments: Sequence[str], endpoint: str | None, mirror: Path | None) -> int:
    """Terraform's exit code (`mirror`: `chosen_mirror()`). Terraform runs in a process group of its own, in the
    terminal's foreground when this command has it: Ctrl-C reaches Terraform alone, once, and SIGINT, SIGTERM or
    SIGHUP sent to this command are passed on to it once; either way Terraform stops cleanly before the override
    goes."""
    executable = shutil.which("terraform")
    if executable is None:
        raise TablewrightError("the Terraform CLI is not installed (no `terraform` on PATH)",
                               code=ErrorCode.TERRAFORM_SETUP,
                               hint="install Terraform 1.10 or newer: https://developer.hashicorp.com/terraform/install")
    with tempfile.TemporaryDirectory(prefix="tablewright-terraform-") as scratch:
        env = terraform_environment(Path(scratch), endpoint, stack_dir, mirror)
        with overridden(stack_dir, endpoint) if endpoint else _nothing():
            return run_in_own_group([executable, *arguments], stack_dir, env)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def foreground_terminal() -> int | None:
    """The terminal on stdin when this process group is its foreground (a job the shell runs in front), else None."""
    try:
        terminal = sys.stdin.fileno()
        return terminal if os.isatty(terminal) and os.tcgetpgrp(terminal) == os.getpgrp() else None
    except (OSError, ValueError):
        return None


def _give_foreground(terminal: int, group: int) -> None:
    """Make `group` the terminal's foreground (SIGTTOU ignored meanwhile: a background group may not do it)."""
    previous = signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    try:
        os.tcsetpgrp(terminal, group)
    finally:
        signal.signal(signal.SIGTTOU, previous)


def run_in_own_group(command: list[str], cwd: Path, env: dict[str, str]) -> int:
    terminal = foreground_terminal()

    def own_group() -> None:  # in the child, before exec: a group of its own, in front if we were
        os.setpgid(0, 0)
        if terminal is not None:
            _give_foreground(terminal, os.getpgrp())

    process = subprocess.Popen(command, cwd=cwd, env=env, preexec_fn=own_group)

    def forward(signum: int, frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signum)

    previous = {number: signal.signal(number, forward) for number in FORWARDED}
    try:
        return process.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if terminal is not None:
            _give_foreground(terminal, os.getpgrp())
