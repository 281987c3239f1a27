"""News items that may ground conversations: JSONL lines with date (ISO), title and text."""

import datetime as dt
import json
from pathlib import Path

from personalens.errors import InputError


def read_news(path: Path, window: tuple[dt.datetime, dt.datetime]) -> list[dict]:
    """Items whose date falls in the time window, sorted by date."""
    where = str(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("news file not found", where=where) from None
    except UnicodeDecodeError:
        raise InputError("news file is not UTF-8", where=where) from None
    items = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        at = f"{where} line {number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON ({exc.msg})", where=at) from None
        if not isinstance(item, dict):
            raise InputError("expected a JSON object", where=at)
        for field in ("date", "title", "text"):
            if not isinstance(item.get(field), str) or not item[field].strip():
                raise InputError(f"field '{field}' must be a non-empty string", where=at)
        try:
            date = dt.date.fromisoformat(item["date"][:10])
        except ValueError:
            raise InputError("field 'date' must be an ISO date (YYYY-MM-DD)", where=at) from None
        if window[0].date() <= date <= window[1].date():
            items.append({"date": date.isoformat(), "title": item["title"].strip(),
                          "text": item["text"].strip()})
    return sorted(items, key=lambda i: i["date"])
