"""The scaffold stage (`tablewright init`): reads the choices of a new infrastructure repository, produces its files.

Files, each from a template under `files/` (package data): `cdktf.json` (the app is the installed
`tablewright`), `requirements-tablewright.txt` (the pinned tool), `.gitignore` (state out, each stack's
`.terraform.lock.hcl` in), `blueprints/shared/platform-base.yaml` (with placeholders lint flags, TW602),
`schema/` (the JSON Schemas the blueprints name for editors, a path inside the repository) and the CI workflow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePosixPath
from typing import Literal

from tablewright.blueprint.schema import schema_texts

PIN_FILE = "requirements-tablewright.txt"  # the Tablewright version a repository is checked with
Backend = Literal["local", "s3"]
CI = Literal["github", "gitlab", "none"]
_TOKEN = re.compile(r"@([A-Z_]+)@")


@dataclass(frozen=True)
class Choices:
    project: str  # cdktf.json's projectId
    version: str  # the Tablewright version to pin
    region: str
    backend: Backend
    state_bucket: str | None = None
    state_region: str | None = None
    ci: CI = "github"


def template(name: str) -> str:
    return resources.files("tablewright.scaffold").joinpath("files", name).read_text(encoding="utf-8")


def render(text: str, values: dict[str, str]) -> str:
    """`@NAME@` tokens replaced; a token without a value is a bug in the template."""
    def value(match: re.Match[str]) -> str:
        return values[match.group(1)]
    return _TOKEN.sub(value, text)


def backend_lines(choices: Choices) -> str:
    if choices.backend == "local":
        return ("  # Local state (terraform-state/<stack>.tfstate, never in git), for a trial. A team keeps it in S3:\n"
                "  # backend: {type: s3, bucket: BUCKET, region: REGION, use_lockfile: true}\n"
                "  backend: {type: local}")
    return ("  # One state object per stack in the bucket, locked by a lock file beside it (Terraform 1.10+).\n"
            f"  backend: {{type: s3, bucket: {choices.state_bucket}, region: {choices.state_region or choices.region},"
            " use_lockfile: true}")


def project_files(choices: Choices) -> dict[PurePosixPath, str]:
    """Path (relative to the repository) -> text, in the order they are reported."""
    requirement = (f"tablewright=={choices.version}" if choices.version != "unknown"
                   else "tablewright  # pin the version you tested: tablewright==X.Y.Z")
    values = {"PROJECT": choices.project, "REQUIREMENT": requirement, "REGION": choices.region,
              "BACKEND": backend_lines(choices)}
    files = {
        PurePosixPath("cdktf.json"): render(template("cdktf.json"), values),
        PurePosixPath(PIN_FILE): render(template(PIN_FILE), values),
        PurePosixPath(".gitignore"): template("gitignore"),
        PurePosixPath("blueprints/shared/platform-base.yaml"): render(template("platform-base.yaml"), values),
        **{PurePosixPath("schema") / name: text for name, text in schema_texts().items()},
    }
    if choices.ci == "github":
        files[PurePosixPath(".github/workflows/tablewright.yml")] = render(template("github-workflow.yml"), values)
    elif choices.ci == "gitlab":
        files[PurePosixPath(".gitlab-ci.yml")] = render(template("gitlab-ci.yml"), values)
    return files


def missing_lines(existing: str, wanted: str) -> list[str]:
    """The lines of `wanted` (comments aside) that `existing` lacks: what to merge by hand."""
    have = {line.strip() for line in existing.splitlines()}
    return [line for line in wanted.splitlines() if line.strip() and not line.startswith("#")
            and line.strip() not in have]
