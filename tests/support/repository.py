"""A git repository with three blueprints, for the tests of `--changed-since` and of the CI workflows."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from tests.conftest import ROOT
from tests.support.review_corpus import BASE, merged

IDENTITY = ("-c", "user.name=Tablewright Tests", "-c", "user.email=tests@example.com")


class Repository:
    """blueprints/crm.yaml and blueprints/orders.yaml extend blueprints/shared/platform-base.yaml (with their
    design locks); blueprints/shop.yaml stands alone. Everything committed on `main`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        blueprints = root / "blueprints"
        shutil.copytree(ROOT / "blueprints" / "shared", blueprints / "shared")
        for name in ("crm.yaml", "crm.lock.json", "orders.yaml", "orders.lock.json"):
            shutil.copy(ROOT / "blueprints" / name, blueprints / name)
        shutil.copy(BASE, blueprints / "shop.yaml")
        (root / ".gitignore").write_text("cdktf.out/\n")
        self.git("init", "-q", "-b", "main")
        self.commit("three blueprints")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", *IDENTITY, *args], cwd=self.root, check=True, capture_output=True,
                              text=True).stdout

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-qm", message)

    def edit(self, name: str, old: str, new: str) -> None:
        path = self.root / "blueprints" / name
        text = path.read_text()
        assert old in text, (name, old)
        path.write_text(text.replace(old, new, 1))

    def overlay(self, name: str, overlay: dict) -> None:
        path = self.root / "blueprints" / name
        path.write_text(yaml.safe_dump(merged(yaml.safe_load(path.read_text()), overlay), sort_keys=False))

    @property
    def blueprints(self) -> list[str]:
        return [f"blueprints/{name}" for name in ("crm.yaml", "orders.yaml", "shop.yaml")]
