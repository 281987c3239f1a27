"""Data quality of a generated population, whatever model wrote it (cf. PersonaBench Fig. 3).

    python bench/population_quality.py runs/demo/population [--judge SPEC]

Prints, per community (from the generate run's metrics.json): sessions and utterances per noise
level, how many personal sessions revealed their item in the model's own words (vs. the
fallback line), how many noise sessions were replaced after leaking a queried item, and how
many sessions code wrote because the model failed. Then the output of
`personalens personabench validate` (lexical, or with --judge), and the overall BM25 / MiniLM
recall@5 per noise level from `personalens personabench eval --no-answer`.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

from personabench_recall_sweep import overall_retrieval  # bench/ is the script's folder

EXE = str(Path(sys.executable).with_name("personalens"))


def generation_stats(run: Path) -> None:
    for name, c in json.loads((run / "metrics.json").read_text())["communities"].items():
        levels = c["levels"]
        print(f"## {name}\n| quantity | value |\n|---|---|")
        print("| sessions (noise " + " / ".join(levels) + ") | "
              + " / ".join(str(v["sessions"]) for v in levels.values()) + " |")
        print("| utterances (noise " + " / ".join(levels) + ") | "
              + " / ".join(str(v["utterances"]) for v in levels.values()) + " |")
        n, model = c["personal_sessions"], c["revealed_by_model"]
        print(f"| personal sessions that revealed their item in the model's own words | "
              f"{model} of {n} ({model / max(n, 1):.0%}); {c['revealed_by_fallback']} by the "
              "fallback line |")
        print(f"| noise sessions replaced after leaking a queried item | "
              f"{c['noise_replaced_for_leaks']} of {c['noise_sessions']} |")
        print(f"| sessions written by code because the model failed | {c['written_by_code']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("generated", type=Path, help="output directory of `personalens generate`")
    parser.add_argument("--judge", help="judge model spec for semantic leak checks")
    args = parser.parse_args()
    generation_stats(args.generated)
    data = args.generated / "synthetic_data"
    judge = ["--judge", args.judge] if args.judge else []
    check = subprocess.run([EXE, "personabench", "validate", str(data), *judge],
                           capture_output=True, text=True)
    print(f"\nvalidator ({'judge ' + args.judge if judge else 'lexical'}):\n"
          + check.stdout + check.stderr)
    community = next(p for p in sorted(data.iterdir()) if p.is_dir())
    noises = sorted(p.name.removeprefix("noise_")
                    for p in (community / "private_data").glob("noise_*"))
    blocks = overall_retrieval(data, noises)
    print("| retriever | " + " | ".join(f"recall @ noise {n}" for n in noises) + " |")
    print("|---|" + "---|" * len(noises))
    for retriever in ("bm25", "minilm"):
        recalls = {noise: block["recall"] for noise, block in blocks[retriever].items()}
        print(f"| {retriever} | " + " | ".join(f"{recalls[float(n)]:.3f}" for n in noises) + " |")


if __name__ == "__main__":
    main()
