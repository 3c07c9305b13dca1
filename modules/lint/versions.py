"""Breaking changes between two versions of a blueprint (`lint --against OLD`).

A change is breaking when data or callers built for the old version stop working: an entity's key
templates change (items already written sit under the old keys), or an access pattern is removed
while another blueprint that extends this one still names it. Breaking changes need a major
version bump (semver); with one, they are reported as notes.
"""

from __future__ import annotations

from pathlib import Path

from modules.blueprint.compose import Composer, blueprint_files, repository_root
from modules.blueprint.load import LoadedBlueprint
from modules.blueprint.yamlsource import load_yaml
from modules.errors import TablewrightError
from modules.lint.findings import Finding, Issue, Severity, comparison_rule

KEY_TEMPLATE_CHANGED = comparison_rule("TW401", "Key template changed without a major version",
                "Items already written keep their old keys: migrate (new index or table, dual write, backfill, "
                "cut over) and bump the major version.")
PATTERN_STILL_NAMED = comparison_rule("TW402", "Access pattern removed while another blueprint names it",
                "Remove it from the extending blueprints first, or bump the major version.")


def _major(version: str) -> int:
    return int(version.split(".")[0])


def _keys(loaded: LoadedBlueprint) -> dict[tuple[str, str], tuple[str, str]]:
    found = {}
    for name, entity in loaded.model.entities.items():
        found[(name, "key")] = (entity.key.pk, entity.key.sk)
        for index, keys in entity.index_keys.items():
            found[(name, f"index_keys.{index}")] = (keys.pk, keys.sk)
    return found


def _extended_files(path: Path) -> set[Path]:
    """Every file `path` extends, directly or not (a file that does not load extends nothing here)."""
    composer = Composer(repository_root(path))
    try:
        composer.read(path)
    except TablewrightError:
        return set()
    return set(composer.documents) - {composer.resolved(path)}


def _namers(new: LoadedBlueprint, pattern: str, search: Path) -> list[Path]:
    """Blueprints under `search` that extend `new` and still name `pattern` in their access patterns."""
    target = new.path.resolve()
    namers = []
    for candidate in blueprint_files(search):
        try:
            if candidate.resolve(strict=True) == target:
                continue
            data, _ = load_yaml(candidate)
        except (TablewrightError, OSError, RuntimeError):  # unreadable, or a symbolic link loop
            continue
        patterns = data.get("access_patterns") if isinstance(data, dict) else None
        if isinstance(patterns, dict) and pattern in patterns and target in _extended_files(candidate):
            namers.append(candidate)
    return namers


def breaking_changes(old: LoadedBlueprint, new: LoadedBlueprint, search: Path) -> list[Finding]:
    bumped = _major(new.model.version) > _major(old.model.version)
    severity: Severity = "info" if bumped else "error"
    versions = f"{old.model.version} -> {new.model.version}"
    suffix = f" (major version bumped, {versions})" if bumped else f", but the version goes {versions}"
    findings = []
    old_keys, new_keys = _keys(old), _keys(new)
    for (entity, where), (pk, sk) in sorted(new_keys.items()):
        before = old_keys.get((entity, where))
        if before is None or before == (pk, sk):
            continue
        path = ("entities", entity, *where.split("."), "pk" if before[0] != pk else "sk")
        findings.append(KEY_TEMPLATE_CHANGED.finding(Issue(
            severity,
            f"{entity}'s {where} changes from {before[0]} / {before[1]} to {pk} / {sk}: items already written "
            f"keep the old keys{suffix}",
            "migrate: add the new keys as a new index (or table), write both, backfill the old items, switch "
            "reads, then drop the old keys; bump the major version",
            path,
        )))
    for pattern in sorted(set(old.model.access_patterns) - set(new.model.access_patterns)):
        for namer in _namers(new, pattern, search):
            findings.append(PATTERN_STILL_NAMED.finding(Issue(
                severity,
                f"access pattern `{pattern}` is removed but {namer} (which extends this blueprint) still names it"
                f"{suffix}",
                f"remove `{pattern}` from {namer} first, or keep the pattern",
                ("version",),
            )))
    return findings
