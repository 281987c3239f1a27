"""Data quality of a generated population, whatever model wrote it (cf. PersonaBench Fig. 3).

    python bench/population_quality.py runs/demo/population [--judge SPEC]

Prints one table per community: sessions and utterances per noise level, how many personal
sessions revealed their item in the model's own words (vs. the fallback line), how many noise
sessions leaked a queried item (lexical, or by a judge), and BM25 / MiniLM retrieval recall per
noise level.
"""

import argparse
import asyncio
import json
import tempfile
from pathlib import Path

from personalens.lenses.personabench.command import EvalOptions, run_eval
from personalens.lenses.personabench.validation import validate
from personalens.models import load_model
from personalens.population.release_reader import available_noises


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("generated", type=Path, help="output directory of `personalens generate`")
    parser.add_argument("--judge", help="judge model spec for semantic leak checks")
    args = parser.parse_args()
    data = args.generated / "synthetic_data"
    for truth in sorted((args.generated / "ground_truth").iterdir()):
        sessions = json.loads((truth / "sessions.json").read_text())
        personal = [s for s in sessions if not s["noise"]]
        by_model = sum(s["revealed_by"] == "model" for s in personal)
        replaced = sum(s["replaced_leak"] for s in sessions if s["noise"])
        print(f"## {truth.name}")
        print(f"personal sessions: {len(personal)}; item revealed in the model's own words: "
              f"{by_model} ({by_model / max(len(personal), 1):.0%}), by the fallback line: "
              f"{len(personal) - by_model}; noise sessions replaced after leaking: {replaced}")
    judge = load_model(args.judge, role="judge") if args.judge else None
    report = asyncio.run(validate(data, judge))
    leaks = sum("noise session" in e for e in report.errors)
    print(f"validator ({'judge ' + args.judge if judge else 'lexical'}): "
          f"{len(report.errors)} error(s), of which noise-session leaks: {leaks}")
    community = next(iter(sorted(p for p in data.iterdir() if p.is_dir())))
    noises = available_noises(community)
    with tempfile.TemporaryDirectory() as scratch:
        metrics = run_eval(EvalOptions(data=data, out=Path(scratch) / "run", noises=noises,
                                       retrievers=["bm25", "minilm"], k=5, model=None)).metrics
    print("\n| retriever | " + " | ".join(f"noise {n}" for n in noises) + " |")
    print("|---|" + "---|" * len(noises))
    for retriever in ("bm25", "minilm"):
        recalls = {c["noise"]: c["retrieval"]["overall"]["recall"]
                   for c in metrics["conditions"] if c["retriever"] == retriever}
        print(f"| {retriever} | " + " | ".join(f"{recalls[float(n)]:.3f}" for n in noises) + " |")
    print("\n" + "\n".join(report.summary))


if __name__ == "__main__":
    main()
