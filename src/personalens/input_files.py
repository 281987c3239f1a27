"""Reading user-supplied JSON and JSONL files with errors that name the file, record and field.

Every layer that reads user files (population, lenses) uses these, so the messages agree.
"""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic

from personalens.errors import InputError
from personalens.models.structured import first_error

MAX_FILE_BYTES = 512 * 1024 * 1024


def read_json(path: Path) -> Any:
    """Parse a JSON file or raise an `InputError` that names it."""
    where = str(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise InputError(f"file is larger than {MAX_FILE_BYTES >> 20} MiB", where=where)
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InputError("file not found", where=where) from None
    except IsADirectoryError:
        raise InputError("expected a file, found a directory", where=where) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 (byte {exc.start})", where=where) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                         where=where) from None
    except RecursionError:
        raise InputError("JSON is nested too deeply", where=where) from None


def read_jsonl_objects(path: Path, what: str) -> Iterator[tuple[str, dict]]:
    """(where, object) for each non-blank line of a JSONL file; `what` names the file in errors.

    Streams line by line: the published JSONL files (Amazon reviews, meta) run to gigabytes.
    """
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise InputError(f"{what} file not found", where=str(path)) from None
    except IsADirectoryError:
        raise InputError(f"{what} file expected, found a directory", where=str(path)) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path} line {number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{what} file is not UTF-8", where=where) from None
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON ({exc.msg})", where=where) from None
            except RecursionError:
                raise InputError("JSON is nested too deeply", where=where) from None
            if not isinstance(item, dict):
                raise InputError("expected a JSON object", where=where)
            yield where, item


def validation_message(exc: pydantic.ValidationError) -> str:
    """The first pydantic error as "field 'a.b': message"."""
    field, message = first_error(exc)
    return f"field '{field}': {message}" if field else message


def expect_list(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise InputError(f"expected a JSON list, found {type(value).__name__}", where=where)
    return value


def expect_dict(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object, found {type(value).__name__}", where=where)
    return value
