"""The docs' pictures of a population report (docs/population.md): its first community's
social graph, a person card (one with a flagged value, if any) and the sample sessions.

    python scripts/population_screenshots.py RUN_DIR [--out docs/images]

RUN_DIR is a `personalens generate` output (e.g. `personalens demo`'s runs/demo/population);
writes population-graph.png, population-card.png and population-sessions.png.
"""

import argparse
import json
from pathlib import Path

from screenshot import element_screenshot  # scripts/ is the script's folder

WIDTH = 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a `personalens generate` run directory")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parents[1] / "docs" / "images")
    args = parser.parse_args()
    page = args.run / "report.html"
    quality = json.loads((args.run / "metrics.json").read_text()).get("quality", {})
    card = (".person-card:has(.label.warn)" if quality.get("wrong_kind_values")
            else ".person-card")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, selector, open_details in (("graph", "svg.social-graph", False),
                                         ("card", card, True),
                                         ("sessions", "div.sessions", False)):
        out = args.out / f"population-{name}.png"
        element_screenshot(page, out, selector, width=WIDTH, open_details=open_details)
        print(f"{out}: {out.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
