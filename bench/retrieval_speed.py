"""Retrieval evaluation speed: personalens's overhead over bare encoding, and the warm cache.

Runs `personabench eval --no-answer --retriever minilm --noise 0.7` on the shared release data
three ways in one process and prints ratios:
  1. bare: SentenceTransformer.encode of exactly the same chunks and questions (model preloaded);
  2. cold: the full personalens evaluation with an empty embedding cache (includes model load);
  3. warm: the same evaluation again, into a new run directory, with the cache filled by 2.
Targets: cold / bare <= 1.15; cold / warm >= 10.
"""

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO.parent / "shared/anchors/personabench/eval_data/eval_data_v1/synthetic_data/"
        "community_0")


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="pl-bench-"))
    os.environ["PERSONALENS_CACHE_DIR"] = str(scratch / "cache")
    from sentence_transformers import SentenceTransformer

    from personalens.lenses.personabench.command import EvalOptions, run_eval
    from personalens.lenses.personabench.evaluation import plan
    from personalens.population.release_reader import load_community
    from personalens.retrieval.dense import bundled_minilm_path

    community = load_community(DATA, ["0.7"])
    items = plan([community], ["0.7"], ["minilm"])
    chunks = [s.text for p in community.people("0.7") for s in community.levels["0.7"].sessions[p]]
    questions = [i.question.question for i in items]
    model = SentenceTransformer(str(bundled_minilm_path()), device="cpu")
    start = time.perf_counter()
    model.encode(chunks, batch_size=32)
    model.encode(questions, batch_size=32)
    bare = time.perf_counter() - start
    del model

    def evaluate(out: str) -> float:
        begin = time.perf_counter()
        run_eval(EvalOptions(data=DATA, out=scratch / out, noises=["0.7"], retrievers=["minilm"],
                             k=5, model=None))
        return time.perf_counter() - begin

    cold = evaluate("cold")
    warm = evaluate("warm")
    print(f"chunks={len(chunks)} questions={len(questions)}")
    print(f"bare encode      {bare:8.2f} s")
    print(f"personalens cold {cold:8.2f} s   ratio cold/bare = {cold / bare:.3f} (target <= 1.15)")
    print(f"personalens warm {warm:8.2f} s   speed-up cold/warm = {cold / warm:.1f}x "
          "(target >= 10x)")


if __name__ == "__main__":
    sys.exit(main())
