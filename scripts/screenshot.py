"""A PNG of a report page, as the docs show it: headless Chromium, no network.

    python scripts/screenshot.py PAGE.html OUT.png [--width 1300] [--height 900]
    python scripts/screenshot.py PAGE.html OUT.png --element CSS-SELECTOR [--open]

Used for the docs' pictures (docs/images/): e.g. the scorecard of
`personalens scorecard --size tiny` with two systems (docs/compare-models.md). With
--element, the picture is that element alone (the first match), taken over the DevTools
protocol (tests/devtools_pipe.py); --open opens it first when it is a closed <details>.
"""

import argparse
import base64
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.devtools_pipe import DevToolsPipe  # noqa: E402


def screenshot(page: Path, out: Path, width: int = 1300, height: int = 900) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        f"--user-data-dir={profile}", "--hide-scrollbars",
                        f"--window-size={width},{height}", f"--screenshot={out.resolve()}",
                        page.resolve().as_uri()], check=True, capture_output=True,
                       timeout=120)


def element_screenshot(page: Path, out: Path, selector: str, *, width: int = 1300,
                       open_details: bool = False) -> None:
    """A PNG of the first element matching `selector` on `page` (the page laid out `width`
    px wide); with `open_details`, a closed <details> element is opened first."""
    with tempfile.TemporaryDirectory() as profile:
        browser = DevToolsPipe(Path(profile))
        try:
            target = browser.call("Target.createTarget", url=page.resolve().as_uri())
            session = browser.call("Target.attachToTarget", targetId=target["targetId"],
                                   flatten=True)["sessionId"]

            def value(expression: str):
                return browser.call("Runtime.evaluate", session, expression=expression,
                                    returnByValue=True)["result"].get("value")

            browser.call("Emulation.setDeviceMetricsOverride", session, width=width,
                         height=900, deviceScaleFactor=1, mobile=False)
            while not value("document.readyState === 'complete' && "
                            "location.protocol === 'file:'"):
                time.sleep(0.02)
            element = f"document.querySelector({json.dumps(selector)})"
            if not value(f"!!{element}"):
                sys.exit(f"no element matches {selector!r} in {page}")
            if open_details:
                value(f"(e => {{if (e.tagName === 'DETAILS') e.open = true;}})({element})")
            # The whole page in the viewport: capturing beyond it would lay the page out anew.
            browser.call("Emulation.setDeviceMetricsOverride", session, width=width,
                         height=value("document.documentElement.scrollHeight"),
                         deviceScaleFactor=1, mobile=False)
            box = value(f"(r => [r.left + scrollX, r.top + scrollY, r.width, r.height])"
                        f"({element}.getBoundingClientRect())")
            # Whole pixels around the box, so a border on a fractional edge is not cut off.
            left, top = math.floor(box[0]) - 1, math.floor(box[1]) - 1
            right, bottom = math.ceil(box[0] + box[2]) + 1, math.ceil(box[1] + box[3]) + 1
            shot = browser.call("Page.captureScreenshot", session, format="png",
                                clip={"x": left, "y": top, "width": right - left,
                                      "height": bottom - top, "scale": 1})
            out.write_bytes(base64.b64decode(shot["data"]))
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, default=1300)
    parser.add_argument("--height", type=int, default=900)
    parser.add_argument("--element", help="CSS selector: picture this element only")
    parser.add_argument("--open", action="store_true", help="open the element if a <details>")
    args = parser.parse_args()
    if args.element:
        element_screenshot(args.page, args.out, args.element, width=args.width,
                           open_details=args.open)
    else:
        screenshot(args.page, args.out, args.width, args.height)
    print(f"{args.out}: {args.out.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
