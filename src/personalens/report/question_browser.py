"""A per-question browser for the HTML report: facet filters and pages of entries.

The entries are embedded once, as compact JSON in a data block (`<script
type="application/json">`, never executed), and the browser shows one page of them at a time
(50 by default): the first page is in the HTML, so it shows at once; one small script, the
only one the report's Content-Security-Policy allows (by its hash), pages through the entries
and filters them. A report with tens of thousands of entries therefore holds a small DOM and
opens quickly.

Each facet is a group of radio inputs (all, then one per value, with its count); several facets
filter at once (AND). The script builds entries with `textContent` only, so facet names and
values, titles and fields (model output, dataset text) stay text: in the HTML they are escaped,
in the JSON every `<`, `>` and `&` is a \\u escape, so no data can close the data block. Ids,
data attributes and selectors are built from indices, never from the text itself.
"""

import base64
import hashlib
import heapq
import html
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

NONE_LABEL = "(none)"
PAGE_SIZE = 50
ENTRY_LIMIT = 20_000  # entries embedded in one report; the rest are counted, not shown

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
.qb .qb-pager{display:flex;align-items:center;gap:.8em;margin:.4em 0}
.qb .qb-pager button{padding:.1em .8em;cursor:pointer}
.qb .qb-entry{border:1px solid #ddd;border-radius:4px;margin:.3em 0;padding:.2em .6em}
.qb .qb-entry>summary{cursor:pointer}
.qb .qb-tag{display:inline-block;font-size:.8em;color:#555;background:#f3f3f3;
border-radius:.6em;padding:0 .4em;margin-left:.4em}
.qb .qb-field{margin:.4em 0}
.qb .qb-label{font-weight:600;font-size:.9em;color:#444}
.qb pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f8f8f8;border:1px solid #eee;
padding:.4em .6em;margin:.2em 0;max-height:30em;overflow:auto}
"""

# The browser's only script. The data block (parsed on the first click, so opening the page
# never waits for it) holds {"facets": n, "words": [...], "entries": [[title, [value index per
# facet], [tag key word, tag value word, ...], [field label word, field text, ...]], ...]}.
# Idempotent: every browser of a page carries it, and it sets up each browser once.
SCRIPT = """(()=>{
const mk=(tag,cls,text)=>{const e=document.createElement(tag);if(cls)e.className=cls;
if(text!==undefined)e.textContent=text;return e;};
for(const root of document.querySelectorAll('.qb[data-page-size]')){
if(root.dataset.ready)continue;root.dataset.ready='1';
const size=+root.dataset.pageSize,blob=root.querySelector('script.qb-data'),
list=root.querySelector('.qb-entries'),status=root.querySelector('.qb-status'),
[prev,next]=root.querySelectorAll('.qb-pager button'),
radios=[...root.querySelectorAll(':scope>input[type=radio]')];
let data=null,rows=null,page=0;
const entry=i=>{const [title,vals,tags,fields]=data.entries[i],w=data.words,
d=mk('details','qb-entry'),s=mk('summary');
vals.forEach((v,f)=>d.setAttribute('data-f'+f,v));
s.append(mk('span','n',(i+1)+'.'),' ',mk('span','qb-title',title));
for(let t=0;t<tags.length;t+=2)s.append(mk('span','qb-tag',w[tags[t]]+': '+w[tags[t+1]]));
d.append(s);
for(let f=0;f<fields.length;f+=2){const b=mk('div','qb-field');
b.append(mk('div','qb-label',w[fields[f]]),mk('pre',null,fields[f+1]));d.append(b);}
return d;};
const show=()=>{const pages=Math.max(1,Math.ceil(rows.length/size));
page=Math.min(Math.max(page,0),pages-1);const first=page*size,
last=Math.min(rows.length,first+size);
list.replaceChildren(...rows.slice(first,last).map(entry));
status.textContent=rows.length?`entries ${first+1}\\u2013${last} of ${rows.length}`+
` \\u00b7 page ${page+1} of ${pages}`:'no entry matches';
prev.disabled=page===0;next.disabled=page>=pages-1;};
const filter=()=>{data=data||JSON.parse(blob.textContent);
const chosen=Array(data.facets).fill(-1);
for(const r of radios)if(r.checked)chosen[+r.dataset.f]=+r.dataset.v;
rows=[];data.entries.forEach((e,i)=>{if(chosen.every((v,f)=>v<0||e[1][f]===v))rows.push(i);});
page=0;show();};
for(const r of radios)r.addEventListener('change',filter);
prev.addEventListener('click',()=>{if(!rows)filter();page-=1;show();});
next.addEventListener('click',()=>{if(!rows)filter();page+=1;show();});
if(radios.some(r=>r.checked&&+r.dataset.v>=0))filter();
}})();"""
SCRIPT_HASH = "sha256-" + base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()


@dataclass(frozen=True)
class BrowserEntry:
    """One browsable item, e.g. one question of one condition, or one query."""

    title: str  # one line, e.g. the question
    facets: dict[str, str]  # facet name -> value, e.g. {"outcome": "incorrect"}
    fields: list[tuple[str, str]]  # (label, text) shown in order, as preserved plain text


def failure_fields(failure: Any) -> list[tuple[str, str]]:
    """A failed item's entry fields, the same in every lens: the failure (and whether a rerun
    can change it), then the failed steps it came through. `failure` is a runs.ItemFailure."""
    final = " (final: a rerun would fail the same way)" if failure.final else ""
    fields = [("failure", f"{failure.kind}{final}: {failure.message}")]
    if failure.failed_steps:
        fields.append(("failed steps", "\n".join(failure.failed_steps)))
    return fields


@dataclass(frozen=True)
class BrowserItems:
    """What a report's browser shows: its entries in order (at most its limit), its facets,
    and how many entries there were in all (the rest are counted as left out)."""

    entries: list[BrowserEntry]
    facets: list[str]
    total: int


def first_entries(ranked: Iterable[tuple[Any, BrowserEntry]], facets: Sequence[str],
                  limit: int = ENTRY_LIMIT) -> BrowserItems:
    """The `limit` entries of smallest rank, in rank order (ties in the order given), from
    (rank, entry) pairs made one at a time: a run's records are read as they are iterated, so
    at most `limit` entries are held, however many items the run has."""
    total = 0

    def counted() -> Iterable[tuple[Any, BrowserEntry]]:
        nonlocal total
        for pair in ranked:
            total += 1
            yield pair

    kept = heapq.nsmallest(limit, counted(), key=lambda pair: pair[0])
    return BrowserItems([entry for _, entry in kept], list(facets), total)


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _json_block(value: object) -> str:
    """JSON that cannot end the <script> data block it sits in, nor open a comment."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def render_browser(entries: Sequence[BrowserEntry], facets: Sequence[str], *, prefix: str,
                   heading: str | None = "Browse entries", limit: int = ENTRY_LIMIT,
                   page_size: int = PAGE_SIZE, total: int | None = None) -> str:
    """The browser's HTML (with its own <style> block and the SCRIPT). `prefix` must be unique
    in the page and be a safe identifier (the caller builds it; it never holds user text).
    Entries beyond `limit` are left out, and counted; `page_size` entries show at a time.
    `total` is how many entries there were when the caller kept only the first ones
    (`first_entries`); by default, len(entries)."""
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if page_size < 1:
        raise ValueError(f"page_size must be >= 1, got {page_size}")
    if not prefix.replace("-", "").isalnum() or not prefix[0].isalpha():
        raise ValueError(f"prefix must be a plain identifier, got {prefix!r}")
    facets = list(dict.fromkeys(facets))
    shown = list(entries[:limit])
    total = len(entries) if total is None else total
    left_out = total - len(shown)

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
            radios.append(f'<input type="radio" name="{group}" id="{ident}" data-f="{fi}" '
                          f'data-v="{-1 if vi is None else vi}"{checked}>')
            if vi is None:
                text, n = "all", len(shown)
            else:
                value = values[fi][vi]
                text, n = value if value else NONE_LABEL, counts[fi][value]
            css.append(f"#{ident}:checked~.qb-facets label[for=\"{ident}\"]"
                       "{background:#2a6df4;border-color:#2a6df4;color:#fff}"
                       f"#{ident}:checked~.qb-facets label[for=\"{ident}\"] .n{{color:#dde}}"
                       f"#{ident}:focus-visible~.qb-facets label[for=\"{ident}\"]"
                       "{outline:2px solid #2a6df4;outline-offset:2px}")
            labels.append(f'<label for="{ident}">{_esc(text)} <span class="n">({n})</span>'
                          "</label>")
        groups.append(f"<fieldset><legend>{_esc(name)}</legend>{''.join(labels)}</fieldset>")

    # The data block: repeated short strings (field labels, tag keys and values) once each.
    words: dict[str, int] = {}

    def word(text: str) -> int:
        return words.setdefault(text, len(words))

    rows = [[entry.title, [index[fi][entry.facets.get(f, "")] for fi, f in enumerate(facets)],
             [word(str(x)) for k, v in entry.facets.items() for x in (k, v)],
             [x for label, text in entry.fields for x in (word(str(label)), str(text))]]
            for entry in shown]
    data = _json_block({"facets": len(facets), "words": list(words), "entries": rows})

    first_page = []
    for number, entry in enumerate(shown[:page_size], 1):
        attrs = "".join(f' data-f{fi}="{index[fi][entry.facets.get(f, "")]}"'
                        for fi, f in enumerate(facets))
        tags = "".join(f'<span class="qb-tag">{_esc(k)}: {_esc(v)}</span>'
                       for k, v in entry.facets.items())
        body = "".join(f'<div class="qb-field"><div class="qb-label">{_esc(label)}</div>'
                       f"<pre>{_esc(text)}</pre></div>" for label, text in entry.fields)
        first_page.append(f'<details class="qb-entry"{attrs}><summary><span class="n">{number}.'
                          f'</span> <span class="qb-title">{_esc(entry.title)}</span>{tags}'
                          f"</summary>{body}</details>")

    parts = [f"<style>{''.join(css)}</style>"]
    if heading is not None:
        parts.append(f"<h2>{_esc(heading)}</h2>")
    parts.append(f'<div class="qb" id="{prefix}" data-page-size="{page_size}">')
    parts.extend(radios)
    if facets:
        parts.append(f'<div class="qb-facets">{"".join(groups)}</div>')
    note = f"{len(shown)} {'entry' if len(shown) == 1 else 'entries'}"
    if left_out:
        note = (f"Showing the first {len(shown)} of {total} entries; "
                f"{left_out} left out.")
    elif not shown:
        note = "No entries."
    parts.append(f'<p class="qb-note muted">{_esc(note)}</p>')
    pages = max(1, -(-len(shown) // page_size))
    status = (f"entries 1\u2013{min(page_size, len(shown))} of {len(shown)} \u00b7 page 1 of "
              f"{pages}") if shown else "no entry matches"
    disabled_next = " disabled" if pages == 1 else ""
    parts.append(f'<div class="qb-pager"><button type="button" disabled>\u2190 previous</button>'
                 f'<span class="qb-status">{_esc(status)}</span>'
                 f'<button type="button"{disabled_next}>next \u2192</button></div>')
    parts.append(f'<div class="qb-entries">{"".join(first_page)}</div>')
    parts.append(f'<script type="application/json" class="qb-data">{data}</script>')
    parts.append(f'<script class="qb-js">{SCRIPT}</script></div>')
    return "".join(parts)
