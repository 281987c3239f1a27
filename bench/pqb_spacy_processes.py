"""spaCy parsing for pqb: sentences/s with 1 and 2 processes, and the batch size.

    python bench/pqb_spacy_processes.py [--texts 6000] [--rounds 3]

Parses review-like texts (the PersonaBench anchor community_0's user turns, cycled to --texts)
with `syntax_features.text_rules`, the call pqb's style stage makes, for n_process 1 and 2 and
batch sizes 64/256/1024, alternating the order each round, and prints medians. The in-process
default (`processes_for`) uses 2 processes from MULTIPROCESS_FROM texts on.
"""

import argparse
import itertools
import json
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO.parent / "shared/anchors/personabench/eval_data/eval_data_v1/synthetic_data"
        / "community_0")


def user_turns(n: int) -> list[str]:
    turns = []
    for path in sorted(DATA.rglob("*.json")):
        try:
            value = json.loads(path.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue
        turns += [t["content"] for t in _turns(value) if t.get("role") == "user"]
    return list(itertools.islice(itertools.cycle(turns), n))


def _turns(value):
    if isinstance(value, dict):
        if "role" in value and isinstance(value.get("content"), str):
            yield value
        for v in value.values():
            yield from _turns(v)
    elif isinstance(value, list):
        for v in value:
            yield from _turns(v)


def main() -> None:
    from personalens.lenses.pqb.spacy_pipeline import load_pipeline
    from personalens.lenses.pqb.syntax_features import text_rules

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    texts = user_turns(args.texts)
    nlp = load_pipeline()
    sentences = sum(len(s) for s in text_rules(texts[:500], nlp)) * len(texts) / 500
    print(f"{len(texts)} texts, about {sentences:,.0f} sentences")
    configs = [(1, 256), (2, 256), (1, 64), (1, 1024), (2, 1024)]
    times: dict[tuple, list[float]] = {c: [] for c in configs}
    for r in range(args.rounds):
        for config in (configs if r % 2 == 0 else configs[::-1]):
            start = time.perf_counter()
            text_rules(texts, nlp, batch_size=config[1], n_process=config[0])
            times[config].append(time.perf_counter() - start)
    for (processes, batch), values in times.items():
        median = statistics.median(values)
        print(f"n_process={processes} batch_size={batch}: median {median:.1f} s, "
              f"{sentences / median:,.0f} sentences/s")
    one, two = statistics.median(times[(1, 256)]), statistics.median(times[(2, 256)])
    print(f"2 processes / 1 process throughput: {one / two:.2f} x")


if __name__ == "__main__":
    main()
