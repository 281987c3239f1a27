"""Retrieval evaluation speed: personalens's overhead over bare encoding, and the warm cache.

    python bench/retrieval_speed.py [--rounds 4]

On the shared release data (community_0, noise 0.7), each of three commands runs in its own
fresh process, and the wall time of the whole process is measured:
  bare: a minimal script that imports sentence-transformers, loads the bundled MiniLM and
        encodes exactly the chunks and questions the evaluation encodes;
  cold: `personalens personabench eval --no-answer --retriever minilm --noise 0.7` with an
        empty embedding cache (the unpacked MiniLM stays, as after a first install);
  warm: the same evaluation again, into a new run directory, with the cache filled by cold.
Rounds alternate the order (bare, cold, warm / cold, warm, bare), so neither of bare and cold is
always first. Prints every round's times and ratios, then the medians and the ratios of the
medians. Targets: cold / bare <= 1.15; cold / warm >= 10.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO.parent / "shared/anchors/personabench/eval_data/eval_data_v1/synthetic_data/"
        "community_0")
EXE = str(Path(sys.executable).with_name("personalens"))
BARE = """
import json, sys
from sentence_transformers import SentenceTransformer
texts = json.load(open(sys.argv[1]))
model = SentenceTransformer(texts["model"], device="cpu")
model.encode(texts["chunks"], batch_size=32)
model.encode(texts["questions"], batch_size=32)
"""


def texts(scratch: Path) -> Path:
    """The chunks and questions of the evaluation, and the unpacked MiniLM's folder."""
    from personalens.population.release_reader import load_community
    from personalens.retrieval.dense import bundled_minilm_path

    probe = scratch / "bm25-probe"  # the planned questions, as the CLI plans them
    run([EXE, "personabench", "eval", "--data", str(DATA), "--noise", "0.7", "--retriever",
         "bm25", "--no-answer", "--out", str(probe)])
    questions = [json.loads(line)["question"]
                 for line in (probe / "records.jsonl").read_text().splitlines()]
    level = load_community(DATA, ["0.7"])
    chunks = [s.text for p in level.people("0.7") for s in level.levels["0.7"].sessions[p]]
    path = scratch / "texts.json"
    path.write_text(json.dumps({"model": str(bundled_minilm_path()), "chunks": chunks,
                                "questions": questions}))
    print(f"chunks={len(chunks)} questions={len(questions)}")
    return path


def run(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="pl-bench-"))
    os.environ["PERSONALENS_CACHE_DIR"] = str(scratch / "cache")
    path = texts(scratch)
    evaluate = [EXE, "personabench", "eval", "--data", str(DATA), "--noise", "0.7",
                "--retriever", "minilm", "--k", "5", "--no-answer", "--out"]

    def cold(i: int) -> float:
        for cached in (scratch / "cache").glob("embeddings.sqlite*"):
            cached.unlink()
        return run([*evaluate, str(scratch / f"cold{i}")])

    commands = {"bare": lambda i: run([sys.executable, "-c", BARE, str(path)]), "cold": cold,
                "warm": lambda i: run([*evaluate, str(scratch / f"warm{i}")])}
    times: dict[str, list[float]] = {name: [] for name in commands}
    print(f"load average at start {os.getloadavg()[0]:.2f}")
    for i in range(args.rounds):
        order = ["bare", "cold", "warm"] if i % 2 == 0 else ["cold", "warm", "bare"]
        for name in order:
            times[name].append(commands[name](i))
        b, c, w = (times[n][-1] for n in ("bare", "cold", "warm"))
        print(f"round {i + 1} ({', '.join(order)}): bare {b:6.2f} s  cold {c:6.2f} s  "
              f"warm {w:5.2f} s  cold/bare {c / b:.3f}  cold/warm {c / w:.1f}x", flush=True)
    b, c, w = (statistics.median(times[n]) for n in ("bare", "cold", "warm"))
    print(f"median of {args.rounds}: bare {b:6.2f} s  cold {c:6.2f} s  warm {w:5.2f} s")
    print(f"cold/bare = {c / b:.3f} (target <= 1.15); cold/warm = {c / w:.1f}x (target >= 10x)")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
