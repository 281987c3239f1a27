"""The profile template: meta-categories, attributes, value types and question phrasings (YAML).

The packaged `data/profile_schema.yaml` is the default; a user file adds attributes or replaces
packaged ones with the same key (`personalens generate --schema FILE`), or, with top-level
`replace_default: true`, replaces the default template altogether.
"""

from pathlib import Path
from typing import Literal

import pydantic
import yaml

from personalens.errors import InputError
from personalens.input_files import validation_message

DEFAULT_SCHEMA = Path(__file__).parent / "data" / "profile_schema.yaml"
META_CATEGORIES = ("demographic", "psychographic", "social")
MAX_LIST_ENTRIES = 5


class AttributeSpec(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")

    key: str
    meta_category: Literal["demographic", "psychographic", "social"]
    type: Literal["single", "list"]
    value_kind: Literal["integer", "text"] = "text"
    description: str
    question_type: Literal["Basic information", "Preference"]
    questions: list[str] = pydantic.Field(min_length=1)
    social_questions: list[str] = pydantic.Field(default_factory=list)
    purchasable: bool = False  # can a purchase reveal it (brands, books, gadgets)?
    choices: list[str] | None = None  # closed set of values (e.g. employment status)

    @pydantic.field_validator("social_questions")
    @classmethod
    def _has_name_slot(cls, phrasings: list[str]) -> list[str]:
        for phrasing in phrasings:
            if "{name}" not in phrasing:
                raise ValueError(f"social question {phrasing!r} lacks the {{name}} placeholder")
        return phrasings


class ProfileSchema(pydantic.BaseModel):
    attributes: dict[str, AttributeSpec]


def load_schema(extra: Path | None = None) -> ProfileSchema:
    attributes, _ = _read(DEFAULT_SCHEMA)
    if extra is not None:
        added, replace = _read(extra)
        attributes = added if replace else {**attributes, **added}
    return ProfileSchema(attributes=attributes)


def _read(path: Path) -> tuple[dict[str, AttributeSpec], bool]:
    where = str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("schema file not found", where=where) from None
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        first_line = str(exc).splitlines()[0]
        raise InputError(f"not valid UTF-8 YAML ({first_line})", where=where) from None
    categories = data.get("meta_categories") if isinstance(data, dict) else None
    if not isinstance(categories, dict):
        raise InputError("expected a mapping with 'meta_categories'", where=where)
    attributes: dict[str, AttributeSpec] = {}
    for category, body in categories.items():
        if category not in META_CATEGORIES:
            raise InputError(f"unknown meta-category {category!r} (expected one of "
                             f"{', '.join(META_CATEGORIES)})", where=where)
        raw = (body or {}).get("attributes", {}) if isinstance(body, dict) else None
        if not isinstance(raw, dict):
            raise InputError(f"meta-category {category!r} needs an 'attributes' mapping",
                             where=where)
        for key, spec in raw.items():
            try:
                attributes[key] = AttributeSpec(key=key, meta_category=category, **(spec or {}))
            except (pydantic.ValidationError, TypeError) as exc:
                message = (validation_message(exc) if isinstance(exc, pydantic.ValidationError)
                           else str(exc))
                raise InputError(message, where=f"{where} attribute {key!r}") from None
    if not attributes:
        raise InputError("the schema defines no attributes", where=where)
    return attributes, bool(data.get("replace_default", False))
