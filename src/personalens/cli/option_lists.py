"""Comma-separated option values, as every command reads them."""

from personalens.errors import InputError


def split_list(value: str) -> list[str]:
    """Comma-separated values, each once (a repeated value would plan duplicate items)."""
    return list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))


def int_list(value: str, option: str) -> list[int]:
    try:
        return [int(part) for part in split_list(value)]
    except ValueError:
        raise InputError(f"{option} takes comma-separated whole numbers (got {value!r})") from None
