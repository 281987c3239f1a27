"""Does a large population's report open quickly? `personalens generate`'s report.html in
headless Chromium.

    python bench/population_report.py [--people 1000] [--work DIR]

Generates N people (communities of at most 100, as bench/scaling.py does) with the tests'
schema-aware scripted double (unless --work holds that run already), reruns the command (every
community skipped: the report alone is drawn again), then prints both wall times,
report.html's size, and, in headless Chromium (tests/devtools_pipe.py): the seconds from
opening the page to a loaded document (median of 3 opens), its DOM size, and the seconds to
open every community and card at once and lay the page out (the worst a reader can ask for).
"""

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from scaling import Chromium, generate_argv, measure  # bench/ is the script's folder

OPEN_ALL = ("(() => {const t = performance.now();"
            "document.querySelectorAll('details').forEach(d => d.open = true);"
            "document.body.offsetHeight; return performance.now() - t;})()")


def chromium_figures(page: Path, profile: Path) -> tuple[list[float], int, int, float]:
    """(open seconds of 3 opens, DOM elements, person cards, seconds to open everything)."""
    browser = Chromium(profile)
    try:
        warm = profile.parent / "blank.html"
        warm.write_text("<!doctype html><title>x</title>")
        browser.open_seconds(warm)  # the browser's own start is not the page's
        opens = [browser.open_seconds(page)[0] for _ in range(3)]
        target = browser.call("Target.createTarget", url=page.as_uri())["targetId"]
        session = browser.call("Target.attachToTarget", targetId=target,
                               flatten=True)["sessionId"]

        def value(expression: str):
            return browser.call("Runtime.evaluate", session, expression=expression,
                                returnByValue=True, timeout=120)["result"]["value"]

        while not value("document.readyState === 'complete' && "
                        "location.protocol === 'file:'"):
            time.sleep(0.01)
        elements = value("document.getElementsByTagName('*').length")
        cards = value("document.querySelectorAll('.person-card').length")
        expand = value(OPEN_ALL) / 1000
        return opens, elements, cards, expand
    finally:
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=1000)
    parser.add_argument("--work", type=Path, help="work folder (kept); default a temporary one")
    args = parser.parse_args()
    if shutil.which("chromium") is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    work = (args.work or Path(tempfile.mkdtemp(prefix="personalens-popreport-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    try:
        out = work / f"generate-{args.people}"
        print(f"people: {args.people:,} (communities of at most 100)")
        if not (out / "report.html").exists():  # a kept --work folder's run is reused
            seconds, rss = measure(generate_argv(args.people, out), work / "cache",
                                   work / "generate.log")
            print(f"generate (scripted double), report included: {seconds:.1f} s wall, "
                  f"{rss:.0f} MiB peak RSS")
        # The same command again: every community is skipped; summarise and report.html only.
        seconds, rss = measure(generate_argv(args.people, out), work / "cache",
                               work / "rerun.log")
        print(f"rerun (read and assess every community, write report.html): {seconds:.1f} s "
              f"wall, {rss:.0f} MiB peak RSS")
        page = out / "report.html"
        opens, elements, cards, expand = chromium_figures(page, work / "chromium-profile")
        print(f"report.html: {page.stat().st_size / 2**20:.2f} MiB, {elements:,} DOM elements, "
              f"{cards:,} person cards")
        print(f"Chromium open to a loaded document: median {statistics.median(opens):.2f} s "
              f"(opens: {', '.join(f'{s:.2f}' for s in opens)})")
        print(f"open every community and card, then lay out: {expand:.2f} s")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
