"""Overall recall@5 of BM25 and MiniLM on the released PersonaBench community_0, per noise level.

    python bench/personabench_recall_sweep.py

Runs `personalens personabench eval --no-answer --retriever bm25,minilm --k 5
--noise 0.0,0.3,0.5,0.7` on the shared anchor copy of the release (3 people with documents)
and prints the scored questions and `retrieval.overall.recall` per retriever and noise level.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO.parent / "shared/anchors/personabench/eval_data/eval_data_v1/synthetic_data"
        / "community_0")
NOISES = ["0.0", "0.3", "0.5", "0.7"]


def overall_retrieval(data: Path, noises: list[str]) -> dict[str, dict[float, dict]]:
    """`retrieval.overall` of a BM25 + MiniLM retrieval-only run: {retriever: {noise: block}}."""
    exe = str(Path(sys.executable).with_name("personalens"))
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([exe, "personabench", "eval", "--data", str(data), "--noise",
                        ",".join(noises), "--retriever", "bm25,minilm", "--k", "5",
                        "--no-answer", "--out", f"{scratch}/run"],
                       check=True, stdout=subprocess.DEVNULL)
        metrics = json.loads(Path(f"{scratch}/run/metrics.json").read_text())
    out: dict[str, dict[float, dict]] = {}
    for c in metrics["conditions"]:
        out.setdefault(c["retriever"], {})[c["noise"]] = c["retrieval"]["overall"]
    return out


def main() -> None:
    if not DATA.exists():
        sys.exit(f"needs the PersonaBench anchor at {DATA}")
    blocks = overall_retrieval(DATA, NOISES)
    print("| retriever | questions | " + " | ".join(f"noise {n}" for n in NOISES) + " |")
    print("|---|---|" + "---|" * len(NOISES))
    for retriever in ("bm25", "minilm"):
        overall = blocks[retriever]
        n = "/".join(sorted({str(overall[float(x)]["n"]) for x in NOISES}))
        print(f"| {retriever} | {n} | "
              + " | ".join(f"{overall[float(x)]['recall']:.3f}" for x in NOISES) + " |")


if __name__ == "__main__":
    main()
