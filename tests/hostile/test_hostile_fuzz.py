"""Fuzzed blueprints (hypothesis, derandomized): the fuzz base mutated (hostile values and keys, deletions, spliced
fragments) meets the contract in `lint` and `explain`: exit 0, 1 or 2, never a crash, a refusal located inside the
file. Injected with interpolations, escapes, quotes, newlines and unicode, it is refused or synthesized, and then no
string Terraform would evaluate is anything but Tablewright's own references. The contract:
tests/support/hostile_support.py."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
import signal
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tablewright.cli import main
from tests.support.hostile_support import (
    DOLLAR,
    LOCATED,
    PERCENT,
    SHOP_TEXT,
    Result,
    assert_refused,
    lay_out,
    strings_in,
)

# Fuzz: mutated blueprints meet the contract ------------------------------------------------------

FUZZ_BASE: dict[str, Any] = {
    **yaml.safe_load(SHOP_TEXT),
    "description": "Orders and customers",
    "owner": "team-shop",
    "region": "us-east-1",
    "tags": {"service": "shop", "owner": "team-shop"},
    "required_tags": ["service"],
    "naming": {"table": "{env}-{table}"},
    "terraform": {"aws_provider": "~> 5.100", "backend": {
        "type": "s3", "bucket": "tablewright-state", "region": "eu-west-1",
        "key": "tablewright/{blueprint}/{env}/terraform.tfstate"}},
    "lint": {"hot_key_warning": 0.5, "ignore": {"TW101": "few values, read nightly"}},
    "traffic": {"peak_factor": 3},
    "environments": {"dev": {"table": {"billing": "on_demand", "capacity": None}}, "prod": {"production": True}},
}
PAYLOADS = [DOLLAR, PERCENT, "#", "{}", "{", "}", "{nope}", "{table:>99999}", "{blueprint.__class__}", "a#b", "",
            " ", "null", "~", ".inf", ".nan", "1e999", "../../etc", "/etc/passwd", "<img src=https://x>",
            "</details>", "\u202e", "\x00", "日本語", "GSI1", "gsi1", "PK", "-", "--output=out", "HEAD:x", "x" * 300]
FRAGMENTS = ["{", "}", "#", "${", "%{", "{}", "{nope}", ":>99999", "\x00", "\u202e", "../", "<", " ", "-"]
HOSTILE_VALUES = st.one_of(
    st.sampled_from(PAYLOADS),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([10**400, -(10**30), 0, -1, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.booleans(),
    st.none(),
    st.lists(st.one_of(st.integers(-5, 5), st.text(max_size=5)), max_size=3),
    st.dictionaries(st.text(max_size=8), st.one_of(st.integers(-5, 5), st.text(max_size=5)), max_size=3),
)
HOSTILE_KEYS = st.one_of(st.sampled_from([*PAYLOADS, "extends", "environments", "production", "__class__"]),
                         st.text(max_size=20))


def paths_in(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, item in node.items():
            found += paths_in(item, (*prefix, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += paths_in(item, (*prefix, index))
    return found


def node_at(document: Any, path: tuple) -> Any:
    for step in path:
        document = document[step]
    return document


@st.composite
def mutated_blueprints(draw) -> dict[str, Any]:
    """The fuzz base with 1-4 mutations: fragments spliced into text, hostile values, deletions,
    unknown fields, renamed keys, scalars wrapped in lists or mappings."""
    document = copy.deepcopy(FUZZ_BASE)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = paths_in(document)
        texts = [p for p in paths if isinstance(node_at(document, p), str)]  # templates, names: the likely traps
        path = draw(st.sampled_from(paths + texts * 2))
        parent, key = node_at(document, path[:-1]), path[-1]
        operation = draw(st.sampled_from(["splice", "splice", "splice", "payload", "payload", "value", "delete",
                                          "unknown", "rename", "list", "mapping"]))
        if operation == "splice" and isinstance(parent[key], str):
            text, at = parent[key], draw(st.integers(min_value=0, max_value=len(parent[key])))
            parent[key] = text[:at] + draw(st.sampled_from(FRAGMENTS)) + text[at:]
        elif operation == "payload":
            parent[key] = draw(st.sampled_from(PAYLOADS))
        elif operation == "value":
            parent[key] = draw(HOSTILE_VALUES)
        elif operation == "delete":
            del parent[key]
        elif operation == "unknown" and isinstance(parent, dict):
            parent[draw(HOSTILE_KEYS)] = draw(HOSTILE_VALUES)
        elif operation == "rename" and isinstance(parent, dict):
            parent[draw(HOSTILE_KEYS)] = parent.pop(key)
        elif operation == "list":
            parent[key] = [parent[key]]
        elif operation == "mapping":
            parent[key] = {"value": parent[key]}
    return document


@contextlib.contextmanager
def time_limit(seconds: float):
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def quietly(*args: object) -> Result:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), time_limit(20):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_the_fuzz_base_is_a_good_blueprint(tmp_path, run_cli):
    lay_out(tmp_path, {"fuzz.yaml": yaml.safe_dump(FUZZ_BASE, sort_keys=False)})
    code, _, err = run_cli("lint", tmp_path / "fuzz.yaml")
    assert code == 0, err


@pytest.mark.terraform  # 200 examples through the whole CLI: 4 s, the slow tier's (the fast one fuzzes synth)
@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(document=mutated_blueprints(), output=st.sampled_from(["text", "json", "sarif"]))
def test_fuzzed_blueprints_meet_the_contract(document, output):
    with tempfile.TemporaryDirectory(prefix="hostile-fuzz-") as scratch:
        path = Path(scratch) / "fuzz.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
        lines = path.read_text().count("\n") + 1
        for args in (("lint", path, "--format", output), ("explain", path)):
            code, out, err = quietly(*args)
            event(f"{args[0]} exit {code}")
            assert code in ((0, 1, 2) if args[0] == "lint" else (0, 2)), (args[0], code, err[-2000:])
            if code == 2:
                first = assert_refused((code, out, err))
                match = LOCATED.match(first)
                assert match, f"{args[0]}: no file:line:column in: {first}"
                if match["file"].endswith("fuzz.yaml"):
                    assert 1 <= int(match["line"]) <= lines, first


# Fuzz: every string a fuzzed blueprint synthesizes is inert --------------------------------------

# Spliced into names, templates, tags, descriptions, values and state keys: interpolations, their
# escapes, half of one, quotes, backslashes, newlines, unicode, and a well-formed reference (to a
# resource no stack declares) that a missing escape would make Terraform evaluate.
INJECTIONS = ["${", "%{", "$${", "%%{", "$$${", "%$${", "$%{", "}", "{}", "${x}", "%{x}", DOLLAR, PERCENT,
              "${aws_dynamodb_table.fuzz.name}", "${data.aws_region.current.name}", '"', "'", "\\", "\\${",
              "\n", "\r\n", "\t", "日本語", "\u202e", "é", "😀", "#", ":", "/", "-", "_", " "]
INJECTION_TEXT = st.text(alphabet=st.sampled_from([*"${}%\"'\\\n #:/-_ aZ9", "é", "日"]), min_size=1, max_size=12)

SYNTH_BASE: dict[str, Any] = copy.deepcopy(FUZZ_BASE)
SYNTH_BASE["entities"]["Customer"]["description"] = "A customer"
SYNTH_BASE["entities"]["Customer"]["attributes"]["note"] = {"type": "string", "description": "Free text"}
SYNTH_BASE["access_patterns"]["customer"]["description"] = "The profile page"

# Where Terraform starts a template sequence, as HCL's scanner reads left to right: `$${` and `%%{` are
# escapes, every other `${` or `%{` is evaluated (written here independently of modules/tablewright/constructs).
TEMPLATE_START = re.compile(r"\$\$\{|%%\{|\$\{|%\{")
NAME = r"[a-z0-9_]+"
# The expressions Tablewright writes, whole (to the closing brace), each referring to an address.
OWN_EXPRESSION = re.compile("|".join([
    rf"\$\{{(?P<resource>(?:data\.)?aws_{NAME}\.{NAME})(?:\[0\])?\.{NAME}\}}",
    rf"\$\{{max\(try\(local\.(?P<local>{NAME})\[\"[A-Za-z0-9_.-]+\"\]\.(?:read|write)_capacity, 0\), \d+\)\}}",
    rf"\$\{{try\(contains\((?P<tables>data\.aws_dynamodb_tables\.{NAME})\.names, \"[A-Za-z0-9_.-]+\"\), false\)"
    r" \? 1 : 0\}",
    rf"\$\{{\{{ for g in try\((?P<live>data\.aws_dynamodb_table\.{NAME})\[0\]\.global_secondary_index, \[\]\)"
    r" : g\.name => g \}\}",
]))


def declared(config: dict[str, Any]) -> set[str]:
    """Every address a stack declares: resources, data sources (`data.` first) and locals (`local.`)."""
    found = {f"{kind}.{name}" for kind, named in config.get("resource", {}).items() for name in named}
    found |= {f"data.{kind}.{name}" for kind, named in config.get("data", {}).items() for name in named}
    return found | {f"local.{name}" for name in config.get("locals", {})}


def evaluated_foreign(config: dict[str, Any]) -> list[str]:
    """Every template sequence Terraform would evaluate in `config` that is not one of Tablewright's
    expressions about an address the same stack declares."""
    addresses, foreign = declared(config), []
    for text in strings_in(config):
        position = 0
        while (found := TEMPLATE_START.search(text, position)) is not None:
            position = found.end()
            if found.group() in ("$${", "%%{"):
                continue
            own = OWN_EXPRESSION.match(text, found.start())
            names = [] if own is None else [name for name in own.groupdict().values() if name]
            if own is None or any(("local." + name if own["local"] == name else name) not in addresses
                                  for name in names):
                foreign.append(text[:200])
            else:
                position = own.end()
    return foreign


def test_the_inert_check_sees_an_unescaped_interpolation():
    config = {"resource": {"aws_dynamodb_table": {"shop": {"name": "x"}}},
              "locals": {"shop_live_gsis": "${{ for g in try(data.aws_dynamodb_table.shop_live[0]"
                                            ".global_secondary_index, []) : g.name => g }}"},
              "data": {"aws_dynamodb_table": {"shop_live": {"name": "x"}}},
              "output": {"fine": "${aws_dynamodb_table.shop.name}", "escaped": "$${x} %%{ if } $${aws_x.y.z}",
                         "capacity": '${max(try(local.shop_live_gsis["GSI1"].read_capacity, 0), 10)}'}}
    assert evaluated_foreign(config) == []
    for bad in ("${x}", "%{ if true }", "$${x} ${x}", "%${x}", "$%{x}", "${aws_dynamodb_table.fuzz.name}",
                "${aws_dynamodb_table.shop.name} ${file(\"/etc/passwd\")}", "${aws_dynamodb_table.shop.name"):
        assert evaluated_foreign({**config, "tags": {"t": bad}}) == [bad], bad


FREE_TEXT = {"description", "owner", "reason"}
NAMED = {"entities", "attributes", "access_patterns", "tags", "environments"}  # mappings of the user's names
# Harmless in most restricted fields (tag values, names): synthesis goes on with the other injections.
BENIGN = st.sampled_from(["_", "-", ".", ":", "/", "=", "+", "@", " ", "9", "Z", "x"])


def free_text(path: tuple) -> bool:
    """Text any character may go into (descriptions, reasons, enum values)."""
    return path[-1] in FREE_TEXT or "values" in path or path[:2] == ("lint", "ignore")


@st.composite
def injected_blueprints(draw) -> dict[str, Any]:
    """The synthesis base with 1-3 injections into its strings, or into the user's names (entities,
    attributes, patterns, tags, environments); most go into free text, which must never reach Terraform
    evaluated, the others into names or any string, most harmless so that synthesis still runs."""
    document = copy.deepcopy(SYNTH_BASE)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = paths_in(document)
        texts = [p for p in paths if isinstance(node_at(document, p), str)]
        names = [p for p in paths if len(p) > 1 and p[-2] in NAMED]
        free = [p for p in texts if free_text(p)]
        where = draw(st.sampled_from(["free", "free", "free", "names", "texts"]))
        path = draw(st.sampled_from({"free": free, "names": names, "texts": texts}[where]))
        parent, key = node_at(document, path[:-1]), path[-1]
        hostile = st.one_of(st.sampled_from(INJECTIONS), INJECTION_TEXT)
        injection = draw(hostile if where == "free" else st.one_of(hostile, BENIGN, BENIGN, BENIGN))
        into_name = path in names and (path not in texts or draw(st.booleans()))
        old = key if into_name else parent[key]
        at = draw(st.integers(min_value=0, max_value=len(old)))
        new = old[:at] + injection + old[at:] if draw(st.booleans()) else injection
        if into_name:
            parent[new] = parent.pop(key)
        else:
            parent[key] = new
    return document


@example(document=SYNTH_BASE)
@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(document=injected_blueprints())
def test_fuzzed_blueprints_synthesize_inert(document):
    """A blueprint with interpolations, escapes, quotes, newlines or unicode in its strings is refused
    (exit 2, located) or synthesized; then no string of any synthesized file is evaluated by Terraform
    but Tablewright's own references."""
    with tempfile.TemporaryDirectory(prefix="hostile-synth-fuzz-") as scratch:
        path, out = Path(scratch) / "fuzz.yaml", Path(scratch) / "cdktf.out"
        path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
        code, stdout, err = quietly("synth", path, "--out", out, "--allow-lint-errors")
        event(f"synth exit {code}")
        assert code in (0, 2), (code, err[-2000:])
        if code == 2:
            assert LOCATED.match(assert_refused((code, stdout, err))), err[:2000]
            return
        assert "Traceback" not in err and "error" not in err, err[-2000:]
        configs = sorted(out.rglob("*.tf.json"))
        assert len(configs) == len(document.get("environments") or {None: None}), stdout
        for config in configs:
            assert evaluated_foreign(json.loads(config.read_text())) == [], config.relative_to(out)
