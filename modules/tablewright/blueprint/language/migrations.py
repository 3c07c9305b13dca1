"""Data migrations a change carries out: changed keys, renamed and removed entities, changed attributes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language.attributes import TemplateText
from tablewright.blueprint.language.base import AttributeName, EntityName, Strict
from tablewright.errors import ErrorCode


class MigrationKey(Strict):
    pk: TemplateText = Field(description="Partition key template, as in `key:` (without the shard number).")
    sk: TemplateText = Field(description="Sort key template.")
    shards: int | None = Field(default=None, ge=2, le=100)


DefaultValue = str | int | float | bool


class Migration(Strict):
    """A data migration this change carries out, of one of four kinds:

    - keys: an entity's keys change on the table or on an index (`from`, `to`), so items already written must
      be rewritten;
    - rename: the entity was called `renamed_from` before: every item carries the old name in `_entity`, and
      its keys (where they change with the name) must move;
    - removal: the entity is gone from the blueprint (`removal` says what happens to its items);
    - attribute: one stored attribute of the entity (`attribute`) is removed (`removal: delete | keep`), made
      required or added as required (`default`: the value old items get), or changes type (`convert: true`).
      A renamed attribute needs no entry: `renamed_from` on the attribute declares it.

    Declared, it is a window change with its steps; undeclared, the review and the gate block it."""

    entity: EntityName = Field(description="The entity as this blueprint names it (a removal: as it was named).")
    index: str = Field(default="table", description="`table` or the index whose keys change (keys only).")
    from_: MigrationKey | None = Field(default=None, alias="from",
                                       description="The keys before this change (keys only).")
    to: MigrationKey | None = Field(default=None, description="The keys after this change, as the blueprint now "
                                                              "declares them (keys only).")
    renamed_from: EntityName | None = Field(
        default=None, description="A rename: the entity's name before this change (its keys may change with it).")
    attribute: AttributeName | None = Field(
        default=None, description="An attribute migration: the stored attribute of `entity` it concerns.")
    default: DefaultValue | None = Field(
        default=None, description="An attribute made required (or added as required): the value written into "
        "every old item that lacks it.")
    convert: bool = Field(default=False, description="An attribute whose type changes: every old value is "
                                                    "converted to the new type (`migrate verify` lists those that "
                                                    "do not convert).")
    removal: Literal["delete", "keep", "expire"] | None = Field(
        default=None, description="A removal: what happens to the items of the entity this change removes. "
        "`delete`: a job deletes them; `keep`: they stay, read by nothing (and still stored and billed); "
        "`expire`: a job sets the table's TTL attribute on each and DynamoDB deletes them.")
    strategy: Literal["dual_write_backfill", "backfill"] = Field(
        default="dual_write_backfill",
        description="`dual_write_backfill`: write both keys from the deploy on, backfill old items, then cut "
        "over; `backfill`: rewrite old items in a maintenance window while writes are paused.",
    )
    reason: str = Field(min_length=1, max_length=1024, description="Why, and who runs the backfill.")

    @property
    def kind(self) -> Literal["keys", "rename", "removal", "attribute"]:
        if self.attribute is not None:
            return "attribute"
        return "removal" if self.removal else "rename" if self.renamed_from else "keys"

    @property
    def method(self) -> str:
        """How it is carried out: a removal's fate of the items (or of the attribute), else the strategy."""
        if self.attribute is not None and self.removal is None:
            return "convert" if self.convert else f"default {self.default!r}"
        return self.removal or self.strategy

    @model_validator(mode="after")
    def _one_kind(self) -> Migration:
        if self.attribute is not None or self.default is not None or self.convert:
            return self._attribute_kind()
        keyed = [name for name, value in (("from", self.from_), ("to", self.to)) if value is not None]
        if self.removal is not None and self.renamed_from is not None:
            raise Invalid("a migration is a rename or a removal, not both",
                          "write one entry for the removal and, if it is a rename, only `renamed_from`", "removal",
                          code=ErrorCode.CONTRADICTION)
        if self.removal is not None or self.renamed_from is not None:
            what = "a removal" if self.removal is not None else "a rename"
            extra = [*keyed, *(["index"] if "index" in self.model_fields_set else [])]
            extra += ["strategy"] if self.removal is not None and "strategy" in self.model_fields_set else []
            if extra:
                raise Invalid(f"`{extra[0]}` does not apply to {what}", f"remove `{extra[0]}`: {what} covers the "
                              "entity on the table and every index", extra[0],
                              code=ErrorCode.CONTRADICTION)
            if self.renamed_from == self.entity:
                raise Invalid(f"`renamed_from` is the entity's own name `{self.entity}`",
                              "write the name the entity had before this change", "renamed_from",
                              code=ErrorCode.VALUE_NOT_ALLOWED)
            return self
        if len(keyed) < 2:
            missing = "to" if keyed == ["from"] else "from"
            raise Invalid(f"a key migration needs `from` and `to` (`{missing}` is missing)",
                          "write both keys, or `renamed_from` (a rename) or `removal` (a removed entity)",
                          missing, code=ErrorCode.MISSING_FIELD)
        return self

    def _attribute_kind(self) -> Migration:
        if self.attribute is None:
            field = "default" if self.default is not None else "convert"
            raise Invalid(f"`{field}` applies to an attribute migration", "name the attribute (`attribute: <name>`)",
                          field, code=ErrorCode.MISSING_FIELD)
        extra = [name for name, value in (("from", self.from_), ("to", self.to), ("renamed_from", self.renamed_from))
                 if value is not None] + (["index"] if "index" in self.model_fields_set else [])
        if extra:
            hint = ("declare a renamed attribute on the attribute itself (`renamed_from: <old name>`)"
                    if extra[0] == "renamed_from" else f"remove `{extra[0]}`: an attribute migration names the "
                    "entity and the attribute")
            raise Invalid(f"`{extra[0]}` does not apply to an attribute migration", hint, extra[0],
                          code=ErrorCode.CONTRADICTION)
        chosen = [name for name, on in (("removal", self.removal is not None), ("default", self.default is not None),
                                        ("convert", self.convert)) if on]
        if len(chosen) != 1:
            raise Invalid(f"an attribute migration says one thing ({' and '.join(chosen) or 'nothing'} given)",
                          "write one of `removal: delete | keep` (the attribute is gone), `default: <value>` (made "
                          "required) or `convert: true` (its type changes)", chosen[-1] if chosen else "attribute",
                          code=ErrorCode.CONTRADICTION if chosen else ErrorCode.MISSING_FIELD)
        if self.removal == "expire":
            raise Invalid("`removal: expire` applies to whole items, not an attribute",
                          "write `removal: delete` (a job removes the attribute) or `keep`", "removal",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        return self
