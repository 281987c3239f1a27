"""News items that may ground conversations: JSONL lines with date (ISO), title and text."""

import datetime as dt
from pathlib import Path

from personalens.errors import InputError
from personalens.input_files import read_jsonl_objects


def read_news(path: Path, window: tuple[dt.datetime, dt.datetime]) -> list[dict]:
    """Items whose date falls in the time window, sorted by date."""
    items = []
    for at, item in read_jsonl_objects(path, "news"):
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
