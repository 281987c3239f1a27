"""The hand-label sheet of a judge audit: a CSV of sampled verdicts, an offline form, reading back.

`write_label_sheet` writes the sample as a CSV with empty `annotator` and `label` columns, and
beside it a self-contained HTML form (no network; it works opened from the file system) that
fills the same CSV. The judge's score is never written: people label blind. `read_labels`
reads a filled sheet back, whether filled by the form or in a spreadsheet.

The form's rows are embedded once as JSON in a data block (`<script type="application/json">`,
never executed) in which every `<`, `>` and `&` is a \\u escape, so no answer can close it; the
one script, the only one the page's Content-Security-Policy allows (by its hash), builds the
cards with `textContent` only, so every text stays text.
"""

import base64
import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from personalens.errors import InputError
from personalens.runs.atomic import write_atomic

COLUMNS = ("unit", "lens", "metric", "criterion", "description", "levels", "material", "answer",
           "annotator", "label")

# Spreadsheets may turn a typed 3 into "3.0"; that is still a whole number.
_WHOLE = re.compile(r"[+-]?\d+(?:\.0*)?")


@dataclass(frozen=True)
class LabelRow:
    """One sampled verdict to label, as a person sees it (never with the judge's score)."""

    unit: str
    lens: str
    metric: str
    criterion: str
    description: str
    levels: tuple[tuple[int, str], ...]
    material: str
    answer: str


@dataclass(frozen=True)
class Label:
    """One person's label for one unit."""

    unit: str
    annotator: str
    label: int


def levels_text(levels: tuple[tuple[int, str], ...]) -> str:
    """The levels as the CSV holds them: one "score: text" line per level."""
    return "\n".join(f"{score}: {text}" for score, text in levels)


def write_label_sheet(rows: list[LabelRow], csv_path: Path) -> Path:
    """Write csv_path and the form beside it (suffix .html); return the form's path."""
    form_path = csv_path.with_suffix(".html")
    if form_path == csv_path:
        raise InputError("the label sheet cannot end in .html: its form is written beside it "
                         "with that suffix", where=str(csv_path))
    units = [row.unit for row in rows]
    if len(set(units)) != len(units):
        raise ValueError("label rows must have distinct units")
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(csv_path, _sheet_csv(rows))
    write_atomic(form_path, _form_html(rows))
    return form_path


def _sheet_csv(rows: list[LabelRow]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([row.unit, row.lens, row.metric, row.criterion, row.description,
                         levels_text(row.levels), row.material, row.answer, "", ""])
    return buffer.getvalue()


def read_labels(path: Path, scales: Mapping[str, tuple[int, int]]) -> list[Label]:
    """The labelled rows of a sheet (rows with an empty label are skipped: not labelled yet)."""
    labels: dict[tuple[str, str], tuple[Label, int]] = {}
    for line, record in _records(path):
        where = f"{path} line {line}"
        label = _parse_label(record, scales, where)
        if label is None:
            continue
        key = (label.unit, label.annotator)
        if key in labels and labels[key][0].label != label.label:
            earlier, first_line = labels[key]
            raise InputError(
                f"unit {label.unit!r} by annotator {label.annotator!r} is labelled "
                f"{label.label} here and {earlier.label} on line {first_line}", where=where)
        labels.setdefault(key, (label, line))
    return [label for label, _ in labels.values()]


def _records(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """(line the record starts on, {column: value}) for each non-blank record of the sheet."""
    # strict: a quote left open must be an error, not a field that swallows the rest of the file.
    reader = csv.reader(io.StringIO(_sheet_text(path), newline=""), strict=True)
    header = _header(reader, path)
    start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise InputError(f"not a readable CSV record ({error}): are its quotes balanced?",
                             where=f"{path} line {start}") from None
        if any(cell.strip() for cell in cells):
            yield start, {name: cells[i] for i, name in header if i < len(cells)}
        start = reader.line_num + 1


def _sheet_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError("label sheet not found", where=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read the label sheet: {error.strerror}", where=str(path)) \
            from None
    try:
        # utf-8-sig: a spreadsheet saving "CSV UTF-8" starts the file with a byte order mark.
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise InputError(f"the label sheet is not UTF-8 text (byte {error.start}: "
                         f"{error.reason})", where=f"{path} line {line}") from None


def _header(reader: Iterator[list[str]], path: Path) -> list[tuple[int, str]]:
    try:
        names = [name.strip() for name in next(reader, [])]
    except csv.Error as error:
        raise InputError(f"not a readable CSV header: {error}", where=f"{path} line 1") from None
    missing = [name for name in ("unit", "label") if name not in names]
    if missing:
        raise InputError(f"the header has no {' or '.join(repr(m) for m in missing)} column "
                         f"(expected {', '.join(COLUMNS)})", where=f"{path} line 1")
    # The first column of a name wins, so a later copy cannot shadow it.
    return [(i, name) for i, name in enumerate(names) if name in COLUMNS
            and names.index(name) == i]


def _parse_label(record: dict[str, str], scales: Mapping[str, tuple[int, int]],
                 where: str) -> Label | None:
    unit = record.get("unit", "").strip()
    if unit not in scales:
        raise InputError(f"unit {unit!r} is not in this run's audit sample", where=where)
    text = record.get("label", "").strip()
    if not text:
        return None
    if not _WHOLE.fullmatch(text):
        raise InputError(f"label {text!r} is not a whole number", where=where)
    value = int(text.split(".")[0])
    low, high = scales[unit]
    if not low <= value <= high:
        raise InputError(f"label {value} for unit {unit!r} is outside its scale {low}-{high}",
                         where=where)
    return Label(unit=unit, annotator=record.get("annotator", "").strip(), label=value)


def _sheet_key(rows: list[LabelRow]) -> str:
    """Names the sheet in localStorage: another sheet's choices must never show on this one."""
    units = json.dumps([row.unit for row in rows]).encode()
    return hashlib.sha256(units).hexdigest()[:16]


def _json_block(data: object) -> str:
    # "<", ">" and "&" occur only inside JSON strings, where \u escapes read back the same.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _form_html(rows: list[LabelRow]) -> str:
    data = {"key": _sheet_key(rows), "columns": list(COLUMNS),
            "rows": [asdict(row) for row in rows]}
    # Only this page's own style and script can apply: a payload that slipped past the
    # escaping (inline script, event handler, remote image) is refused by the browser.
    policy = (f"default-src 'none'; style-src {_csp_hash(_STYLE)}; "
              f"script-src {_csp_hash(_SCRIPT)}")
    return _PAGE.format(policy=policy, style=_STYLE, data=_json_block(data), script=_SCRIPT)


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.45;
max-width:60rem;margin:1.5rem auto;padding:0 1rem;color:#1d1d1d;background:#fff}
header{border-bottom:1px solid #ccc;padding-bottom:1rem;margin-bottom:1rem}
h1{font-size:1.4rem;margin:.2rem 0 .6rem}
.bar{display:flex;flex-wrap:wrap;align-items:center;gap:.6rem 1.2rem;position:sticky;top:0;
background:#fff;padding:.5rem 0;border-bottom:1px solid #eee;z-index:1}
.bar input{font:inherit;padding:.2rem .4rem}
.bar button{font:inherit;padding:.25rem .9rem;cursor:pointer}
#progress{font-weight:600;font-variant-numeric:tabular-nums}
.card{border:1px solid #bbb;border-radius:6px;padding:.6rem 1rem;margin:1rem 0}
.card.done{border-color:#4a7d4a}
.card h2{font-size:1rem;margin:.2rem 0 .4rem}
.card h3{font-size:.85rem;text-transform:uppercase;letter-spacing:.04em;color:#555;
margin:.8rem 0 .2rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:inherit;margin:0;padding:.5rem .7rem;
background:#f6f6f6;border:1px solid #e3e3e3;border-radius:4px}
pre.answer{background:#fffbe8;border:1px solid #d9c47a;border-left:4px solid #c9a227}
fieldset{border:1px solid #ddd;border-radius:4px;margin:.8rem 0 .2rem;padding:.3rem .7rem}
legend{font-weight:600;padding:0 .3rem}
label.level{display:flex;gap:.6rem;align-items:baseline;padding:.25rem 0;cursor:pointer}
.score{font-weight:700;min-width:1.5rem;font-variant-numeric:tabular-nums}
.clear{font:inherit;font-size:.85rem;margin-top:.3rem;cursor:pointer}
.muted{color:#666}
"""

# The data block holds {"key": sheet id, "columns": [...], "rows": [{unit, lens, metric,
# criterion, description, levels: [[score, text], ...], material, answer}, ...]}. Choices live
# in a Map keyed by unit (a unit named "__proto__" must stay a plain key) and in localStorage.
_SCRIPT = """(() => {
'use strict';
const data = JSON.parse(document.getElementById('sheet-data').textContent);
const storeKey = 'personalens-label-sheet:' + data.key;
const nameInput = document.getElementById('annotator');
const progress = document.getElementById('progress');
const chosen = new Map();
const radios = new Map();

const make = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

// Storage can be refused (some browsers' file:// policy, private windows): the form still
// works, it just forgets on reload.
const load = () => {
  try {
    const saved = JSON.parse(localStorage.getItem(storeKey) || '{}');
    nameInput.value = typeof saved.annotator === 'string' ? saved.annotator : '';
    for (const [unit, score] of saved.labels || []) chosen.set(unit, score);
  } catch (e) { /* nothing saved, or unreadable: start empty */ }
};
const save = () => {
  const state = {annotator: nameInput.value, labels: [...chosen]};
  try { localStorage.setItem(storeKey, JSON.stringify(state)); } catch (e) { /* see load */ }
};

const update = () => {
  const done = data.rows.filter(row => chosen.has(row.unit)).length;
  progress.textContent = done + ' of ' + data.rows.length + ' labelled';
  for (const [unit, inputs] of radios) {
    for (const input of inputs) input.checked = chosen.get(unit) === Number(input.value);
    inputs[0].closest('.card').classList.toggle('done', chosen.has(unit));
  }
};

const block = (card, title, text, cls) => {
  card.append(make('h3', '', title), make('pre', cls, text));
};

const levelsFieldset = (row, index) => {
  const fieldset = make('fieldset');
  fieldset.append(make('legend', '', 'Level the answer reaches'));
  const inputs = [];
  for (const [score, text] of row.levels) {
    const label = make('label', 'level');
    const input = make('input');
    input.type = 'radio';
    input.name = 'row-' + index;
    input.value = String(score);
    input.addEventListener('change', () => { chosen.set(row.unit, score); save(); update(); });
    label.append(input, make('span', 'score', String(score)), make('span', 'text', text));
    fieldset.append(label);
    inputs.push(input);
  }
  radios.set(row.unit, inputs);
  const clear = make('button', 'clear', 'clear this label');
  clear.type = 'button';
  clear.addEventListener('click', () => { chosen.delete(row.unit); save(); update(); });
  fieldset.append(clear);
  return fieldset;
};

const card = (row, index) => {
  const section = make('section', 'card');
  section.dataset.index = String(index);
  section.append(make('h2', '', (index + 1) + '. ' + [row.lens, row.metric, row.criterion]
    .join(' \\u00b7 ')));
  section.append(make('p', 'description', row.description));
  if (row.material) block(section, 'Material the judge also sees', row.material, 'material');
  block(section, 'Answer to label', row.answer, 'answer');
  section.append(levelsFieldset(row, index));
  return section;
};

// RFC 4180: a cell holding a quote, comma or line break is quoted, its quotes doubled.
const cell = value => {
  const text = String(value);
  return /[",\\r\\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
};
const levelsText = levels => levels.map(([score, text]) => score + ': ' + text).join('\\n');

window.labelsCsv = () => {
  const annotator = nameInput.value.trim();
  const lines = [data.columns.map(cell).join(',')];
  for (const row of data.rows) {
    const label = chosen.has(row.unit) ? String(chosen.get(row.unit)) : '';
    const values = {...row, levels: levelsText(row.levels), annotator, label};
    lines.push(data.columns.map(column => cell(values[column])).join(','));
  }
  return lines.join('\\r\\n') + '\\r\\n';
};

const download = () => {
  const blob = new Blob([window.labelsCsv()], {type: 'text/csv;charset=utf-8'});
  const link = make('a');
  link.href = URL.createObjectURL(blob);
  link.download = 'labels.csv';
  document.body.append(link);
  link.click();
  link.remove();
  // Revoking at once can cancel the download before the browser has read the blob.
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
};

load();
const cards = document.getElementById('cards');
data.rows.forEach((row, index) => cards.append(card(row, index)));
nameInput.addEventListener('input', save);
document.getElementById('download').addEventListener('click', download);
update();
document.body.dataset.ready = 'yes';
})();"""

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<title>Label sheet</title>
<style>{style}</style>
</head>
<body>
<header>
<h1>Label sheet</h1>
<p>For each card, read the criterion, its description and its levels, then the answer (with
the material the judge also saw). Pick the level the answer reaches. The model's score is
deliberately not shown: label what you see, not what a judge might have said.</p>
<p class="muted">Your choices are kept in this browser as you go. When you are done, press
<b>Download labels.csv</b> and send that file back.</p>
<div class="bar">
<label>Your name <input id="annotator" type="text" autocomplete="name"></label>
<span id="progress" aria-live="polite"></span>
<button id="download" type="button">Download labels.csv</button>
</div>
</header>
<main id="cards"></main>
<noscript><p>This form needs JavaScript; without it, fill the label column of the CSV in a
spreadsheet instead.</p></noscript>
<script type="application/json" id="sheet-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""
