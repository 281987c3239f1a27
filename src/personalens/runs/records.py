"""An item's record: a pydantic model per lens, one line of records.jsonl tagged with its schema.

`run_item` returns the lens's record model; the harness adds the item's key and status and
writes the line with `"schema": "<name>/<version>"`. Reading it back (`LensRecord.from_line`)
checks the tag, so a record written by another lens, or by a newer version of this one, is
refused with one line instead of being misread. Lines written before records were tagged
(contract v1) carry no tag and are read by the current model.
"""

from typing import Any, ClassVar, Self

import pydantic

from personalens.errors import InputError
from personalens.runs.failures import ItemFailure

# Fields the harness writes around a record's own (its key, ok/failed, the schema tag).
ENVELOPE = ("key", "status", "schema")


class LensRecord(pydantic.BaseModel):
    """Subclass per lens with `schema_name`; bump `schema_version` when a field changes meaning."""

    model_config = pydantic.ConfigDict(extra="forbid")

    schema_name: ClassVar[str] = "record"
    schema_version: ClassVar[int] = 1

    key: str = ""  # the item's key, set by the harness

    @classmethod
    def schema_tag(cls) -> str:
        return f"{cls.schema_name}/{cls.schema_version}"

    def fields(self) -> dict[str, Any]:
        """The record's own fields as written (JSON types), without the envelope. A field the
        lens did not set is not written, so a line holds what the item produced."""
        return self.model_dump(mode="json", exclude={"key"}, exclude_unset=True)

    @classmethod
    def from_line(cls, line: dict[str, Any]) -> Self:
        """The record a stored line holds (InputError when its schema is not this model's)."""
        check_schema(cls, line)
        return cls.model_validate({k: v for k, v in line.items() if k not in ENVELOPE[1:]})


def check_schema(model: type[LensRecord], line: dict[str, Any]) -> None:
    tag = line.get("schema")
    if tag is None or tag == model.schema_tag():
        return
    name, _, version = str(tag).partition("/")
    if name != model.schema_name:
        raise InputError(f"record {line.get('key')!r} is a {name!r} record, not "
                         f"{model.schema_name!r}; the run directory belongs to another command")
    raise InputError(f"record {line.get('key')!r} has schema version {version}, this "
                     f"personalens reads version {model.schema_version}; use the personalens "
                     "that wrote it")


def failure_from_line(line: dict[str, Any]) -> ItemFailure:
    """A failed item's line as a model: its failure, what it produced, the steps it came
    through."""
    data = {k: v for k, v in line.items()
            if k not in (*ENVELOPE, "error", "failed_steps")}
    return ItemFailure(key=line["key"], **line["error"], data=data,
                       failed_steps=line.get("failed_steps", []))

