"""The per-question browser: hostile text stays text, labels count, the limit holds, and the
CSS-only facet filters really hide entries in headless Chromium (the page has no script)."""

import fcntl
import html
import json
import os
import select
import shutil
import subprocess
import time

import pytest

from personalens.report import BrowserEntry, HtmlReport

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
    assert "<script" not in page and "<img" not in page
    assert html.escape(SCRIPT) in page and html.escape(IMG) in page
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


def test_two_browsers_in_one_report_use_distinct_ids():
    report = HtmlReport("two")
    report.browser([_entry("a", "x", "correct")], ["category"], heading="first")
    report.browser([_entry("b", "y", "correct")], ["category"], heading="second")
    page = report.render()
    ids = [chunk.split('"', 1)[0] for chunk in page.split(' id="')[1:]]
    assert len(ids) == len(set(ids)) == 2 + 2 + 2


class _Cdp:
    """Chrome DevTools Protocol over --remote-debugging-pipe (fd 3 in, fd 4 out), stdlib only."""

    def __init__(self, profile):
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire():  # in the child: the two pipe ends become fds 3 and 4
            r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", "--remote-debugging-pipe",
             "--window-size=1200,1600", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=wire)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next = 0

    def call(self, method, session=None, timeout=15.0, **params):
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._next:
                    assert "error" not in reply, reply
                    return reply["result"]
            left = deadline - time.monotonic()
            assert left > 0, f"no reply to {method}"
            if select.select([self._from_child], [], [], left)[0]:
                chunk = os.read(self._from_child, 1 << 16)
                assert chunk, "chromium closed the pipe"
                self._buffer += chunk

    def close(self):
        self.proc.kill()
        self.proc.wait(timeout=10)
        os.close(self._to_child)
        os.close(self._from_child)


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_clicking_facet_labels_filters_entries_in_chromium(tmp_path):
    entries = [_entry("alpha", "social", "incorrect", answer=SCRIPT + IMG),
               _entry("beta", "work", "correct"), _entry("gamma", "social", "correct")]
    page = tmp_path / "report.html"
    page.write_text(_page(entries))
    cdp = _Cdp(tmp_path / "profile")
    try:
        target = cdp.call("Target.createTarget", url=page.as_uri())["targetId"]
        session = cdp.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

        def evaluate(expression):
            result = cdp.call("Runtime.evaluate", session, expression=expression,
                              returnByValue=True)
            return result["result"].get("value")

        deadline = time.monotonic() + 15
        loaded = ("location.protocol === 'file:' && document.readyState === 'complete'"
                  " && document.querySelectorAll('.qb-entry').length === 3")
        while not evaluate(loaded):  # the new tab starts on about:blank
            assert time.monotonic() < deadline, "the report did not load"
            time.sleep(0.05)

        def visible():
            return evaluate(
                "[...document.querySelectorAll('.qb-entry')]"
                ".filter(e => getComputedStyle(e).display !== 'none')"
                ".map(e => e.querySelector('.qb-title').textContent)")

        def click(facet, value):  # a real mouse click on the label, found by its text
            box = evaluate(
                f"(() => {{ const l = [...document.querySelectorAll('.qb fieldset')]"
                f".find(f => f.querySelector('legend').textContent === {json.dumps(facet)})"
                f".querySelectorAll('label');"
                f"const m = [...l].find(x => x.firstChild.textContent.trim() === "
                f"{json.dumps(value)}); m.scrollIntoView({{block: 'center'}});"
                f"const r = m.getBoundingClientRect();"
                f"return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
            for kind in ("mousePressed", "mouseReleased"):
                cdp.call("Input.dispatchMouseEvent", session, type=kind, x=box[0], y=box[1],
                         button="left", clickCount=1)

        assert visible() == ["alpha", "beta", "gamma"]
        click("outcome", "incorrect")
        assert visible() == ["alpha"]
        click("category", "work")
        assert visible() == []  # facets combine with AND
        click("outcome", "all")
        assert visible() == ["beta"]
        click("category", "social")
        assert visible() == ["alpha", "gamma"]
        click("category", "all")
        assert visible() == ["alpha", "beta", "gamma"]
        # The hostile model answer is shown as text, and nothing ran.
        assert evaluate("document.body.getAttribute('data-x')") is None
        texts = evaluate("[...document.querySelectorAll('.qb-entry pre')].map(p => p.textContent)")
        assert SCRIPT + IMG in texts
    finally:
        cdp.close()
