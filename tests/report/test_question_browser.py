"""The per-question browser: hostile text stays text, labels count, the limit holds, the
entries are embedded once as JSON with only the first page in the HTML, and in headless
Chromium the browser's own script (the only one the CSP allows) pages and filters them."""

import base64
import hashlib
import html
import json
import shutil
import time

import pytest

from personalens.report import BrowserEntry, HtmlReport, first_entries
from personalens.report.question_browser import PAGE_SIZE, SCRIPT_HASH
from personalens.report.question_browser import SCRIPT as BROWSER_SCRIPT
from tests.devtools_pipe import DevToolsPipe

CHROMIUM = shutil.which("chromium")
SCRIPT = "<script>document.body.setAttribute('data-x','EXEC'+'UTED')</script>"
IMG = "<img src=x onerror=\"document.body.setAttribute('data-x','EXEC'+'UTED')\">"


def _entry(title, category, outcome, answer="42"):
    return BrowserEntry(title=title, facets={"category": category, "outcome": outcome},
                        fields=[("retrieved", "doc 1\ndoc 2"), ("model answer", answer),
                                ("gold", "42")])


def _page(entries, facets=("category", "outcome"), **kwargs) -> str:
    report = HtmlReport("answers")
    report.browser(entries, list(facets), **kwargs)
    return report.render()


def test_hostile_title_facet_and_field_text_is_escaped():
    facet_name = "cat" + IMG
    entry = BrowserEntry(title="q " + SCRIPT, facets={facet_name: "v " + IMG, "outcome": SCRIPT},
                         fields=[(IMG, "answer " + SCRIPT + "\n" + IMG)])
    page = _page([entry], facets=[facet_name, "outcome"])
    # The only script elements are the browser's own: its data block and its code.
    assert page.count("<script") == 2 and "<img" not in page
    assert html.escape(SCRIPT) in page and html.escape(IMG) in page
    data = _data(page)
    assert "<" not in data and ">" not in data and "&" not in data  # nothing can end the block
    assert json.loads(data)["entries"][0][0] == "q " + SCRIPT
    # Ids, data attributes and CSS selectors come from indices, never from the text.
    assert 'data-f0="0"' in page and 'data-f1="0"' in page
    style = page.split("<body>", 1)[1].split("</style>", 1)[0]
    assert "onerror" not in style and "script" not in style


def test_labels_count_each_value_and_all():
    entries = [_entry("a", "social", "incorrect"), _entry("b", "work", "correct"),
               _entry("c", "social", "correct"), _entry("d", "", "correct")]
    page = _page(entries)
    assert 'all <span class="n">(4)</span>' in page
    assert 'social <span class="n">(2)</span>' in page
    assert 'work <span class="n">(1)</span>' in page
    assert '(none) <span class="n">(1)</span>' in page
    assert 'incorrect <span class="n">(1)</span>' in page
    assert '>correct <span class="n">(3)</span>' in page
    assert page.count('type="radio"') == (1 + 3) + (1 + 2)  # "all" + values, per facet
    assert "<pre>doc 1\ndoc 2</pre>" in page  # line breaks survive as text


def test_limit_keeps_the_first_entries_in_order_and_says_how_many_were_left_out():
    entries = [_entry(f"question {i:02d}", "c", "correct" if i % 2 else "incorrect")
               for i in range(25)]
    page = _page(entries, limit=10)
    shown = [f"question {i:02d}" for i in range(25) if f"question {i:02d}<" in page]
    assert shown == [f"question {i:02d}" for i in range(10)]
    assert "Showing the first 10 of 25 entries; 15 left out." in page
    assert 'all <span class="n">(10)</span>' in page  # counts describe what the page holds
    assert "left out" not in _page(entries[:3], limit=10)
    with pytest.raises(ValueError):
        _page(entries, limit=-1)


def _data(page: str) -> str:
    return page.split('<script type="application/json" class="qb-data">', 1)[1].split(
        "</script>", 1)[0]


def test_entries_are_embedded_once_as_json_and_only_the_first_page_as_html():
    entries = [_entry(f"question {i:03d}", ["social", "work"][i % 2],
                      "correct" if i % 3 else "incorrect", answer=f"answer {i}")
               for i in range(120)]
    page = _page(entries)
    data = json.loads(_data(page))
    assert len(data["entries"]) == 120 and data["facets"] == 2
    title, values, tags, fields = data["entries"][7]
    words = data["words"]
    assert title == "question 007"
    assert values == [1, 0]  # work is value 1 of category; correct is value 0 of outcome
    assert [words[t] for t in tags] == ["category", "work", "outcome", "correct"]
    assert [words[f] if i % 2 == 0 else f for i, f in enumerate(fields)] == [
        "retrieved", "doc 1\ndoc 2", "model answer", "answer 7", "gold", "42"]
    # Repeated labels and facet values are stored once.
    assert len(words) == len(set(words)) == 9
    html_part = page.split('class="qb-data"', 1)[0]
    assert html_part.count('<details class="qb-entry"') == PAGE_SIZE
    assert "question 049<" in html_part and "question 050" not in html_part
    assert "entries 1\u201350 of 120 \u00b7 page 1 of 3" in html_part
    # Counts still describe every entry, not just the first page.
    assert 'all <span class="n">(120)</span>' in page
    assert 'incorrect <span class="n">(40)</span>' in page


def test_the_csp_allows_exactly_the_browser_script():
    page = _page([_entry("a", "x", "correct")])
    code = page.split('<script class="qb-js">', 1)[1].split("</script>", 1)[0]
    assert code == BROWSER_SCRIPT
    digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
    assert f"sha256-{digest}" == SCRIPT_HASH
    assert f"script-src '{SCRIPT_HASH}'" in page.split("</head>", 1)[0]
    assert "default-src 'none'" in page


def test_two_browsers_in_one_report_use_distinct_ids():
    report = HtmlReport("two")
    report.browser([_entry("a", "x", "correct")], ["category"], heading="first")
    report.browser([_entry("b", "y", "correct")], ["category"], heading="second")
    page = report.render()
    ids = [chunk.split('"', 1)[0] for chunk in page.split(' id="')[1:]]
    assert len(ids) == len(set(ids)) == 2 + 2 + 2


class _Tab:
    """One report opened in a Chromium tab: evaluate JavaScript, click with the mouse."""

    def __init__(self, cdp: DevToolsPipe, page, entries_shown: int):
        self.cdp = cdp
        target = cdp.call("Target.createTarget", url=page.as_uri())["targetId"]
        self.session = cdp.call("Target.attachToTarget", targetId=target,
                                flatten=True)["sessionId"]
        deadline = time.monotonic() + 15
        loaded = ("location.protocol === 'file:' && document.readyState === 'complete'"
                  f" && document.querySelectorAll('.qb-entry').length === {entries_shown}")
        while not self.evaluate(loaded):  # the new tab starts on about:blank
            assert time.monotonic() < deadline, "the report did not load"
            time.sleep(0.05)

    def evaluate(self, expression):
        result = self.cdp.call("Runtime.evaluate", self.session, expression=expression,
                               returnByValue=True)
        return result["result"].get("value")

    def visible(self) -> list[str]:
        return self.evaluate(
            "[...document.querySelectorAll('.qb-entry')]"
            ".filter(e => getComputedStyle(e).display !== 'none')"
            ".map(e => e.querySelector('.qb-title').textContent)")

    def _click_at(self, finder: str) -> None:
        """A real mouse click on the element `finder` (a JS expression) evaluates to."""
        box = self.evaluate(
            f"(() => {{ const m = {finder}; m.scrollIntoView({{block: 'center'}});"
            f"const r = m.getBoundingClientRect();"
            f"return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.cdp.call("Input.dispatchMouseEvent", self.session, type=kind, x=box[0],
                          y=box[1], button="left", clickCount=1)

    def click(self, facet: str, value: str) -> None:
        """Clicks the label of a facet value, found by its text."""
        self._click_at(
            f"[...[...document.querySelectorAll('.qb fieldset')]"
            f".find(f => f.querySelector('legend').textContent === {json.dumps(facet)})"
            f".querySelectorAll('label')].find(x => x.firstChild.textContent.trim() === "
            f"{json.dumps(value)})")

    def page(self, which: str) -> None:
        """Clicks the pager's "previous" or "next" button."""
        self._click_at(f"document.querySelectorAll('.qb-pager button')"
                       f"[{0 if which == 'previous' else 1}]")

    def status(self) -> str:
        return self.evaluate("document.querySelector('.qb-status').textContent")


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_clicking_facet_labels_filters_entries_in_chromium(tmp_path):
    entries = [_entry("alpha", "social", "incorrect", answer=SCRIPT + IMG),
               _entry("beta", "work", "correct"), _entry("gamma", "social", "correct")]
    page = tmp_path / "report.html"
    page.write_text(_page(entries))
    cdp = DevToolsPipe(tmp_path / "profile")
    try:
        tab = _Tab(cdp, page, 3)
        assert tab.visible() == ["alpha", "beta", "gamma"]
        tab.click("outcome", "incorrect")
        assert tab.visible() == ["alpha"]
        tab.click("category", "work")
        assert tab.visible() == []  # facets combine with AND
        assert tab.status() == "no entry matches"
        tab.click("outcome", "all")
        assert tab.visible() == ["beta"]
        tab.click("category", "social")
        assert tab.visible() == ["alpha", "gamma"]
        tab.click("category", "all")
        assert tab.visible() == ["alpha", "beta", "gamma"]
        # The hostile model answer, drawn by the script from the JSON this time, is shown as
        # text, and nothing ran.
        assert tab.evaluate("document.body.getAttribute('data-x')") is None
        texts = tab.evaluate(
            "[...document.querySelectorAll('.qb-entry pre')].map(p => p.textContent)")
        assert SCRIPT + IMG in texts
    finally:
        cdp.close()


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_pages_of_fifty_and_filters_over_every_entry_in_chromium(tmp_path):
    entries = [_entry(f"question {i:03d}", ["social", "work"][i % 2],
                      "incorrect" if i % 3 == 0 else "correct",
                      answer=(SCRIPT + IMG) if i == 117 else f"answer {i}")
               for i in range(120)]
    page = tmp_path / "report.html"
    page.write_text(_page(entries))
    names = [f"question {i:03d}" for i in range(120)]
    cdp = DevToolsPipe(tmp_path / "profile")
    try:
        tab = _Tab(cdp, page, PAGE_SIZE)
        assert tab.visible() == names[:50]
        assert tab.status() == "entries 1\u201350 of 120 \u00b7 page 1 of 3"
        tab.page("next")
        assert tab.visible() == names[50:100]
        assert tab.evaluate("document.querySelector('.qb-entry .n').textContent") == "51."
        tab.page("next")
        assert tab.visible() == names[100:]
        assert tab.status() == "entries 101\u2013120 of 120 \u00b7 page 3 of 3"
        assert tab.evaluate("document.querySelectorAll('.qb-pager button')[1].disabled")
        tab.page("previous")
        assert tab.visible() == names[50:100]
        # A filter applies to every entry, not just the page, and starts again at page 1.
        tab.click("category", "work")
        work = names[1::2]
        assert tab.visible() == work[:50]
        assert tab.status() == "entries 1\u201350 of 60 \u00b7 page 1 of 2"
        tab.page("next")
        assert tab.visible() == work[50:]
        tab.click("outcome", "incorrect")
        assert tab.visible() == [n for i, n in enumerate(names) if i % 2 and i % 3 == 0]
        assert tab.evaluate("document.querySelectorAll('.qb-pager button')[1].disabled")
        tab.click("outcome", "all")
        tab.click("category", "all")
        tab.page("next")
        tab.page("next")
        assert tab.visible() == names[100:]
        texts = tab.evaluate(
            "[...document.querySelectorAll('.qb-entry pre')].map(p => p.textContent)")
        assert SCRIPT + IMG in texts  # entry 118 came from the JSON, as text
        assert tab.evaluate("document.body.getAttribute('data-x')") is None
    finally:
        cdp.close()


def test_first_entries_keeps_the_smallest_ranks_in_rank_order_ties_in_input_order():
    # Ranks 3, 1, 2, 1, 5: the two smallest are the two rank-1 entries, b before d (input
    # order); a reversed tie order or a largest-first heap would give another pair.
    ranked = [(3, _entry("a", "x", "o")), (1, _entry("b", "x", "o")),
              (2, _entry("c", "x", "o")), (1, _entry("d", "x", "o")),
              (5, _entry("e", "x", "o"))]
    kept = first_entries(iter(ranked), ["category"], limit=2)
    assert [e.title for e in kept.entries] == ["b", "d"]
    assert kept.total == 5 and kept.facets == ["category"]
    assert [e.title for e in first_entries(iter(ranked), ["category"], limit=4).entries] == [
        "b", "d", "c", "a"]


def test_a_caller_keeping_the_first_entries_gives_the_total_and_the_note_counts_from_it():
    kept = first_entries(((i, _entry(f"q{i}", "x", "o")) for i in range(25)), ["category"],
                         limit=10)
    page = _page(kept.entries, total=kept.total)
    assert "Showing the first 10 of 25 entries; 15 left out." in page
