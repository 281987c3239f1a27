"""A self-contained HTML report. Every piece of text is escaped: model and dataset text is data."""

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass

from personalens.report.markup import Markup
from personalens.report.question_browser import (
    ENTRY_LIMIT,
    SCRIPT_HASH,
    BrowserEntry,
    render_browser,
)

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{background:#f3f3f3;padding:0 .2em}.muted{color:#777}img{max-width:100%}
"""


@dataclass(frozen=True)
class Link:
    """A table cell linking to another file of the run: `href` is a relative path."""

    text: str
    href: str

    def __post_init__(self) -> None:
        if ":" in self.href.split("/", 1)[0] or self.href.startswith("/"):
            raise ValueError(f"a report links only to relative paths (got {self.href!r})")


def _cell(value: object) -> str:
    if isinstance(value, Link):
        return (f'<td><a href="{html.escape(value.href, quote=True)}">'
                f"{html.escape(value.text)}</a></td>")
    if value is None:
        return '<td class="num muted">–</td>'
    if isinstance(value, float):
        return f'<td class="num">{value:.3f}</td>'
    if isinstance(value, int):
        return f'<td class="num">{value}</td>'
    return f"<td>{html.escape(str(value))}</td>"


class HtmlReport:
    def __init__(self, title: str):
        self.title = title
        self._parts: list[str] = []

    def heading(self, text: str, level: int = 2) -> None:
        self._parts.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def paragraph(self, text: str) -> None:
        self._parts.append(f"<p>{html.escape(text)}</p>")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
        body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
        self._parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def figure(self, png: bytes, caption: str) -> None:
        data = base64.b64encode(png).decode("ascii")
        self._parts.append(f'<figure><img alt="{html.escape(caption)}" '
                           f'src="data:image/png;base64,{data}"><figcaption>'
                           f"{html.escape(caption)}</figcaption></figure>")

    def markup(self, part: Markup) -> None:
        """A piece built with `report.markup.tag` (its text is escaped there)."""
        if not isinstance(part, Markup):
            raise TypeError("HtmlReport.markup takes Markup built by report.markup.tag")
        self._parts.append(part)

    def stylesheet(self, css: str) -> None:
        """A <style> block for the sections that follow; `css` is the code's own constant."""
        if "<" in css:  # nothing may end the style element early
            raise ValueError("a report stylesheet cannot contain '<'")
        self._parts.append(f"<style>{css}</style>")

    def browser(self, entries: Sequence[BrowserEntry], facets: Sequence[str], *,
                heading: str | None = "Browse entries", limit: int = ENTRY_LIMIT,
                total: int | None = None) -> None:
        """A per-entry browser (title, facet tags, plain-text fields) filtered by `facets`,
        one page of entries at a time; entries beyond `limit` (or `total` - len(entries) of
        them, when the caller already kept only the first) are left out, and counted."""
        self._parts.append(render_browser(entries, facets, prefix=f"qb{len(self._parts)}",
                                          heading=heading, limit=limit, total=total))

    def render(self) -> str:
        # The only script allowed is the item browser's own, by its hash: a payload that
        # escaping might miss (inline script, event handler, javascript: URL) cannot run.
        return (
            "<!doctype html><html><head><meta charset='utf-8'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
            f"img-src data:; style-src 'unsafe-inline'; script-src '{SCRIPT_HASH}'\">"
            f"<title>{html.escape(self.title)}</title><style>{_STYLE}</style></head><body>"
            f"<h1>{html.escape(self.title)}</h1>{''.join(self._parts)}</body></html>"
        )
