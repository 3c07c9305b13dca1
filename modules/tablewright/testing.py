"""Application tests against the tables a blueprint designs, on the local AWS `tablewright local` runs.

    from tablewright.testing import local_aws, fixture

    orders_aws = fixture("blueprints/orders.yaml", env="dev")      # in a conftest.py: a pytest fixture

    def test_an_order_is_read_back(orders_aws):
        dynamodb = orders_aws.client("dynamodb")
        table = orders_aws.table("orders")                        # the physical name, e.g. dev-orders_main

    with local_aws("blueprints/orders.yaml", env="dev", items=5) as aws:   # anywhere else
        ...

The emulator runs in this process on a free port of 127.0.0.1 with the environment's tables created exactly as
`tablewright local` creates them. While it runs, the process's AWS variables (profiles, keys, config files) and
proxies are set aside and AWS_ENDPOINT_URL with dummy credentials take their place, so the SDK clients made
meanwhile reach the emulator; all are put back afterwards. A client made before (or boto3's default session, once
it has read credentials) keeps what it had: make clients inside the test. Blueprint
paths are relative to the working directory. moto keeps one set of backends per process: one emulator at a time
(run tests in parallel with pytest-xdist's processes, not threads).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tablewright.errors import ErrorCode, TablewrightError
from tablewright.local.emulator import REGION, Emulator
from tablewright.local.tables import MAX_ITEMS, CreatedTable, create_tables
from tablewright.stacks.stack import Stack


@dataclass(frozen=True)
class LocalAWS:
    """The running emulator and the tables it holds."""

    emulator: Emulator
    tables: tuple[CreatedTable, ...]
    region: str

    @property
    def endpoint(self) -> str:
        return self.emulator.endpoint

    def client(self, service: str = "dynamodb") -> Any:
        """A boto3 client of the emulator."""
        return self.emulator.client(service, region=self.region)

    def resource(self, service: str = "dynamodb") -> Any:
        import boto3

        make: Any = boto3.resource  # any service, by name
        return make(service, endpoint_url=self.endpoint, region_name=self.region,
                              aws_access_key_id="testing", aws_secret_access_key="testing")

    def table(self, blueprint: str) -> str:
        """The physical table name of `blueprint` (its `blueprint:` name, or its stack's name)."""
        for created in self.tables:
            if blueprint in (created.blueprint, created.stack):
                return created.table
        raise KeyError(f"no table of blueprint {blueprint!r}: the tables are "
                       f"{', '.join(t.stack for t in self.tables) or 'none'}")


def load_stacks(blueprints: tuple[str | Path, ...], env: str | None) -> list[Stack]:
    """Each blueprint's stack of `env` (a blueprint without environments: its one stack)."""
    from tablewright.blueprint.load import load_blueprints
    from tablewright.stacks.stack import build_stacks

    chosen = []
    for path in blueprints:
        stacks = load_blueprints(Path(path))
        picked = [stack for stack in stacks if stack.environment in (env, None)]
        if not picked:
            declared = ", ".join(str(stack.environment) for stack in stacks)
            raise TablewrightError(f"{path} has no environment `{env}`" if env else f"{path} has environments",
                                   code=ErrorCode.UNKNOWN_ENVIRONMENT, hint=f"pass env= one of: {declared}")
        chosen += picked
    return build_stacks(chosen)


@contextmanager
def local_aws(*blueprints: str | Path, env: str | None = "dev", items: int = 0, seed: int = 7,
              stacks: list[Stack] | None = None) -> Iterator[LocalAWS]:
    """The emulator with the tables of `blueprints` in environment `env` (`items`: verify's sample items per
    entity); `stacks`: already designed ones instead of `blueprints`."""
    if not 0 <= items <= MAX_ITEMS:
        raise TablewrightError(f"items={items} is out of range", code=ErrorCode.USAGE,
                               hint=f"0 (no items) to {MAX_ITEMS} sample items per entity")
    designed = stacks if stacks is not None else load_stacks(blueprints, env)
    region = next((stack.design.blueprint.region for stack in designed if stack.design.blueprint.region), REGION)
    with Emulator() as emulator:  # the process's AWS configuration set aside until it stops
        emulator.point_environment(region)
        created = create_tables(lambda where: emulator.client("dynamodb", region=where), designed, items, seed,
                                default_region=region)
        yield LocalAWS(emulator, tuple(created), region)


def fixture(*blueprints: str | Path, env: str | None = "dev", items: int = 0, seed: int = 7,
            scope: Literal["function", "module", "session"] = "function", name: str | None = None) -> Any:
    """A pytest fixture giving `LocalAWS`: fresh tables for each test (`scope="function"`), the blueprints designed
    once. Assign it to a name in a conftest.py or test module."""
    import pytest

    designed: list[Stack] = []

    @pytest.fixture(scope=scope, name=name)
    def local() -> Iterator[LocalAWS]:
        if not designed:
            designed.extend(load_stacks(blueprints, env))
        with local_aws(stacks=designed, items=items, seed=seed) as aws:
            yield aws

    return local
