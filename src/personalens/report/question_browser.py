"""A per-question browser for the HTML report, filtered by facets without any script.

The report's CSP forbids scripts, so filtering is pure CSS: each facet is a group of hidden
radio inputs placed before the entry list, and a rule per value hides the entries whose facet
differs while that value's radio is checked. Several facets filter at once (AND), because every
group's rule hides on its own. Facet names and values are arbitrary text (model output, dataset
text): they only ever appear escaped as text; ids, data attributes and CSS selectors are built
from their indices, never from the text itself.
"""

import html
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

NONE_LABEL = "(none)"

_BASE_STYLE = """
.qb{margin:1em 0}
.qb>input{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;
clip:rect(0 0 0 0);clip-path:inset(50%);border:0;white-space:nowrap}
.qb .qb-facets{display:flex;flex-wrap:wrap;gap:.4em 1.5em;margin:.5em 0}
.qb fieldset{border:1px solid #ddd;padding:.3em .6em;margin:0}
.qb legend{font-weight:600;padding:0 .3em}
.qb label{display:inline-block;cursor:pointer;padding:.1em .5em;margin:.15em;border:1px solid #ccc;
border-radius:1em;background:#fafafa;user-select:none}
.qb .n{color:#777;font-variant-numeric:tabular-nums}
.qb .qb-entry{border:1px solid #ddd;border-radius:4px;margin:.3em 0;padding:.2em .6em}
.qb .qb-entry>summary{cursor:pointer}
.qb .qb-tag{display:inline-block;font-size:.8em;color:#555;background:#f3f3f3;
border-radius:.6em;padding:0 .4em;margin-left:.4em}
.qb .qb-field{margin:.4em 0}
.qb .qb-label{font-weight:600;font-size:.9em;color:#444}
.qb pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f8f8f8;border:1px solid #eee;
padding:.4em .6em;margin:.2em 0;max-height:30em;overflow:auto}
"""


@dataclass(frozen=True)
class BrowserEntry:
    """One browsable item, e.g. one question of one condition, or one pqb query."""

    title: str  # one line, e.g. the question
    facets: dict[str, str]  # facet name -> value, e.g. {"outcome": "incorrect"}
    fields: list[tuple[str, str]]  # (label, text) shown in order, as preserved plain text


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def render_browser(entries: Sequence[BrowserEntry], facets: Sequence[str], *, prefix: str,
                   heading: str | None = "Browse entries", limit: int = 2000) -> str:
    """The browser's HTML (with its own <style> block). `prefix` must be unique in the page and
    be a safe identifier (the caller builds it; it never holds user text)."""
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if not prefix.replace("-", "").isalnum() or not prefix[0].isalpha():
        raise ValueError(f"prefix must be a plain identifier, got {prefix!r}")
    facets = list(dict.fromkeys(facets))
    shown = list(entries[:limit])
    left_out = len(entries) - len(shown)

    # Value index per facet, over the entries on the page (a value seen only in left-out
    # entries would filter to nothing). Values are sorted so the order is stable.
    counts = [Counter(e.facets.get(f, "") for e in shown) for f in facets]
    values = [sorted(c) for c in counts]
    index = [{v: i for i, v in enumerate(vs)} for vs in values]

    def rid(fi: int, vi: int | None) -> str:
        return f"{prefix}-f{fi}-" + ("all" if vi is None else f"v{vi}")

    css = [_BASE_STYLE]
    radios: list[str] = []
    groups: list[str] = []
    for fi, name in enumerate(facets):
        group = f"{prefix}-f{fi}"
        labels = []
        for vi in [None, *range(len(values[fi]))]:
            ident = rid(fi, vi)
            checked = " checked" if vi is None else ""
            radios.append(f'<input type="radio" name="{group}" id="{ident}"{checked}>')
            if vi is None:
                text, n = "all", len(shown)
            else:
                value = values[fi][vi]
                text, n = value if value else NONE_LABEL, counts[fi][value]
                css.append(f"#{ident}:checked~.qb-entries .qb-entry:not([data-f{fi}=\"{vi}\"])"
                           "{display:none}")
            css.append(f"#{ident}:checked~.qb-facets label[for=\"{ident}\"]"
                       "{background:#2a6df4;border-color:#2a6df4;color:#fff}"
                       f"#{ident}:checked~.qb-facets label[for=\"{ident}\"] .n{{color:#dde}}"
                       f"#{ident}:focus-visible~.qb-facets label[for=\"{ident}\"]"
                       "{outline:2px solid #2a6df4;outline-offset:2px}")
            labels.append(f'<label for="{ident}">{_esc(text)} <span class="n">({n})</span>'
                          "</label>")
        groups.append(f"<fieldset><legend>{_esc(name)}</legend>{''.join(labels)}</fieldset>")

    items = []
    for number, entry in enumerate(shown, 1):
        attrs = "".join(f' data-f{fi}="{index[fi][entry.facets.get(f, "")]}"'
                        for fi, f in enumerate(facets))
        tags = "".join(f'<span class="qb-tag">{_esc(k)}: {_esc(v)}</span>'
                       for k, v in entry.facets.items())
        body = "".join(f'<div class="qb-field"><div class="qb-label">{_esc(label)}</div>'
                       f"<pre>{_esc(text)}</pre></div>" for label, text in entry.fields)
        items.append(f'<details class="qb-entry"{attrs}><summary><span class="n">{number}.</span> '
                     f'<span class="qb-title">{_esc(entry.title)}</span>{tags}</summary>'
                     f"{body}</details>")

    parts = [f"<style>{''.join(css)}</style>"]
    if heading is not None:
        parts.append(f"<h2>{_esc(heading)}</h2>")
    parts.append(f'<div class="qb" id="{prefix}">')
    parts.extend(radios)
    if facets:
        parts.append(f'<div class="qb-facets">{"".join(groups)}</div>')
    note = f"{len(shown)} {'entry' if len(shown) == 1 else 'entries'}"
    if left_out:
        note = (f"Showing the first {len(shown)} of {len(entries)} entries; "
                f"{left_out} left out.")
    elif not shown:
        note = "No entries."
    parts.append(f'<p class="qb-note muted">{_esc(note)}</p>')
    parts.append(f'<div class="qb-entries">{"".join(items)}</div></div>')
    return "".join(parts)
