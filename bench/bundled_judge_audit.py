"""The bundled judge (SmolLM2-135M) audited: the figures docs/judges.md shows.

    python bench/bundled_judge_audit.py --out DIR

Runs, as a user would and resumably (each step is a personalens run directory; a rerun skips
what is done):
1. the tiny scorecard of the bundled model on prefdisco and prisk (DIR/card), its judge the
   bundled model;
2. `judge-audit` of each of its two judged runs (DIR/audit-prefdisco-tiny, DIR/audit-prisk-tiny);
3. a larger prisk data set with the bundled model (2 profiles, 5 records per risk of IRP,
   agreement and framing: DIR/prisk-build), its eval judged by the bundled model
   (DIR/prisk-eval), and its audit (DIR/prisk-audit).
Then prints, per audit and judged metric, the verdicts audited, the verdict, the headline on
the sample, and every figure as value (n) verdict. It prints no times.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

MODEL = "local/smollm2-135m"


def steps(out: Path) -> list[tuple[str, list[str]]]:
    card = ["scorecard", "--system", f"small={MODEL}", "--size", "tiny",
            "--lenses", "prefdisco,prisk", "--out", str(out / "card")]
    return [
        ("card", card),
        ("audit-prefdisco-tiny", ["judge-audit", str(out / "card/prefdisco/small"), "--out",
                                  str(out / "audit-prefdisco-tiny")]),
        ("audit-prisk-tiny", ["judge-audit", str(out / "card/prisk/small"), "--out",
                              str(out / "audit-prisk-tiny")]),
        ("prisk-build", ["prisk", "build", "--out", str(out / "prisk-build"), "--profiles", "2",
                         "--per-risk", "5", "--risks", "irp,agreement,framing"]),
        ("prisk-eval", ["prisk", "eval", "--data", str(out / "prisk-build/data"), "--out",
                        str(out / "prisk-eval"), "--risks", "irp,sycophancy", "--judge",
                        MODEL, "--max-tokens", "128"]),
        ("prisk-audit", ["judge-audit", str(out / "prisk-eval"), "--out",
                         str(out / "prisk-audit")]),
    ]


def run(out: Path) -> None:
    for name, args in steps(out):
        print(f"== {name}: personalens {' '.join(args)}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "personalens", *args], check=True)


def table(audit: Path) -> list[str]:
    found = json.loads((audit / "audit.json").read_text())
    lines = [f"### {audit.name}: {found['command']} run, overall {found['verdict']}", "",
             "| metric | audited (of the run's) | verdict | headline on the sample | figures "
             "(value, n, verdict) |", "|---|---|---|---|---|"]
    for metric in found["metrics"].values():
        for judge in metric["judges"].values():
            figures = "; ".join(
                f"{name} {_num(f['value'])} ({f['n']}, {f['verdict']})"
                for name, f in judge["figures"].items())
            lines.append(f"| {metric['label']} | {metric['sampled']} ({metric['in_run']}) | "
                         f"{judge['verdict']} | {_num(judge['headline']['value'])} | {figures} |")
    return [*lines, ""]


def _num(value) -> str:
    return "–" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--print-only", action="store_true",
                        help="Print the tables of audits already in --out; run nothing.")
    args = parser.parse_args()
    if not args.print_only:
        run(args.out)
    for name in ("audit-prefdisco-tiny", "audit-prisk-tiny", "prisk-audit"):
        if (args.out / name / "audit.json").is_file():
            print("\n".join(table(args.out / name)))


if __name__ == "__main__":
    main()
