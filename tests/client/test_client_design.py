"""The design digest a generated module carries: the synthesized table's tag holds it, a module of another design
is stale against the table (`check_design()`), and it ignores table names and the order of the YAML; the tags
Tablewright adds to the table are its own."""

from __future__ import annotations

import json
import textwrap

import pytest

from tablewright.design.locked import DESIGN_TAG, design_digest
from tablewright.synth.synth import synthesize
from tests.support.client_support import BLUEPRINTS, module_text, python_module, stacks_of, table_of


def test_the_table_tag_carries_the_design_digest_and_an_old_client_is_stale(aws, tmp_path, write_blueprint):
    original = BLUEPRINTS["orders"].read_text()
    old = write_blueprint(original, "orders.yaml")
    old_module = python_module(old, "dev")
    (config_path,) = synthesize(stacks_of(old, "dev"), tmp_path / "old")
    tags = json.loads(config_path.read_text())["resource"]["aws_dynamodb_table"]
    assert [t["tags"][DESIGN_TAG] for t in tags.values()] == [old_module.DESIGN_DIGEST]
    assert design_digest(stacks_of(old, "dev")[0].design) == old_module.DESIGN_DIGEST

    changed = original.replace('key: {pk: "PRODUCT#{productId}", sk: "DETAILS"}',
                               'key: {pk: "ITEM#{productId}", sk: "DETAILS"}')
    assert changed != original
    new = write_blueprint(changed, "orders.yaml")
    new_module = python_module(new, "dev")
    name = table_of(aws, new, tmp_path, "dev")
    assert new_module.DESIGN_DIGEST != old_module.DESIGN_DIGEST
    new_module.OrdersTable(aws, name).check_design()
    with pytest.raises(old_module.StaleDesign, match=f"carries design {new_module.DESIGN_DIGEST}, this module was "
                                                     f"generated for design {old_module.DESIGN_DIGEST}"):
        old_module.OrdersTable(aws, name).check_design()
    aws.untag_resource(ResourceArn=aws.describe_table(TableName=name)["Table"]["TableArn"], TagKeys=[DESIGN_TAG])
    with pytest.raises(new_module.StaleDesign, match=f"carries no {DESIGN_TAG} tag"):
        new_module.OrdersTable(aws, name).check_design()


def test_the_digest_ignores_table_names_and_yaml_order(write_blueprint):
    dev, prod = (stacks_of(BLUEPRINTS["orders"], env)[0].design for env in ("dev", "prod"))
    assert dev.blueprint.table.name != prod.blueprint.table.name
    assert design_digest(dev) == design_digest(prod)
    body = """\
        blueprint: shop
        version: 1.0.0
        table: {name: shop_main}
        entities:
          User:
            attributes: {userId: string, name: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
          Cart:
            attributes: {cartId: string, userId: string}
            key: {pk: "CART#{cartId}", sk: "CART"}
        access_patterns:
          user: {entity: User, where: {userId: "="}}
          carts_of_user: {entity: Cart, where: {userId: "="}}
    """
    reordered = """\
        access_patterns:
          carts_of_user: {entity: Cart, where: {userId: "="}}
          user: {entity: User, where: {userId: "="}}
        entities:
          Cart:
            key: {sk: "CART", pk: "CART#{cartId}"}
            attributes: {userId: string, cartId: string}
          User:
            attributes: {name: string, userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        table: {name: shop_main}
        version: 1.0.0
        blueprint: shop
    """
    first = module_text(write_blueprint(textwrap.dedent(body), "a/shop.yaml"))
    second = module_text(write_blueprint(textwrap.dedent(reordered), "b/shop.yaml"))
    assert first.replace("a/shop.yaml", "b/shop.yaml") == second
    assert first == module_text(write_blueprint(textwrap.dedent(body), "a/shop.yaml"))


@pytest.mark.parametrize(("tags", "message"), [
    ({"tablewright:design": "0123456789abcdef"}, "tag key 'tablewright:design' is Tablewright's own"),
    ({f"team{n}": "x" for n in range(49)}, "49 tags; AWS allows 50 per resource and Tablewright adds 2"),
])
def test_the_tags_tablewright_adds_are_reserved(tags, message, write_blueprint, run_cli):
    path = write_blueprint(textwrap.dedent("""\
        blueprint: tagged
        version: 1.0.0
        table: {name: tagged_main}
        entities:
          User:
            attributes: {userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        access_patterns:
          user: {entity: User, where: {userId: "="}}
    """) + "tags: " + json.dumps(tags) + "\n")
    code, _, err = run_cli("lint", str(path))
    assert code == 2 and message in err and "[E302]" in err, err
