"""The int8 ONNX Runtime encoder against fp32 torch MiniLM: export time, throughput, retrieval.

    python bench/int8_encoding.py [--rounds 3]

On the released PersonaBench community_0 session chunks (noise 0.7, the largest level):
  export: the one-off torch.onnx export + int8 quantisation into an empty cache folder;
  throughput: fp32 `SentenceTransformer.encode` (batch 32) and `minilm-int8` (each text run
      alone), both loaded once in this process, alternating which goes first each round;
      medians of --rounds;
  batching: the int8 model on padded batches of 32 texts sorted by length (as
      sentence-transformers batches the fp32 side), its time, and how far a text's vector
      moves from its vector alone (activations are quantised with one range per batch);
  retrieval: `personalens personabench eval --no-answer --retriever minilm,minilm-int8` at
      noise 0.0/0.3/0.5/0.7: recall@5 and nDCG@5 of both and their differences.
Targets: int8 throughput >= 2x fp32; |recall and nDCG difference| <= 0.01 at every noise level.
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

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO.parent / "shared/anchors/personabench/eval_data/eval_data_v1/synthetic_data"
        / "community_0")
NOISES = ["0.0", "0.3", "0.5", "0.7"]


def chunks() -> list[str]:
    from personalens.population.release_reader import load_community

    level = load_community(DATA, ["0.7"])
    return [s.text for p in level.people("0.7") for s in level.levels["0.7"].sessions[p]]


def timed(encode, texts: list[str]) -> float:
    start = time.perf_counter()
    encode(texts)
    return time.perf_counter() - start


def throughput(texts: list[str], rounds: int) -> None:
    from sentence_transformers import SentenceTransformer

    from personalens.retrieval import int8_encoder
    from personalens.retrieval.model_source import resolve_model_source

    source, identity = resolve_model_source("minilm")
    start = time.perf_counter()
    folder = int8_encoder.ensure_export(source, identity)
    print(f"export (torch.onnx + quantize_dynamic, empty cache): "
          f"{time.perf_counter() - start:.1f} s")
    fp32 = SentenceTransformer(source, device="cpu")
    int8 = int8_encoder.Int8Encoder(folder)
    tokens = sum(min(len(ids), 256) for ids in fp32.tokenizer(texts)["input_ids"])
    print(f"{len(texts)} chunks, {tokens} tokens (truncated at 256)")

    def encode_fp32(batch):
        return fp32.encode(batch, batch_size=32, show_progress_bar=False)

    def encode_int8(batch):
        return int8.encode(batch)

    def encode_int8_batched(batch):
        order = sorted(range(len(batch)), key=lambda i: -len(batch[i]))
        out = np.empty((len(batch), 384), np.float32)
        for start in range(0, len(batch), 32):
            rows = order[start:start + 32]
            out[rows] = int8.encode_batch([batch[i] for i in rows])
        return out

    sides = {"fp32": encode_fp32, "int8": encode_int8, "int8 batched": encode_int8_batched}
    times: dict[str, list[float]] = {name: [] for name in sides}
    encode_fp32(texts[:64]), encode_int8(texts[:64])  # warm both sessions' first-call costs
    for r in range(rounds):
        order = list(sides) if r % 2 == 0 else list(reversed(sides))
        for name in order:
            times[name].append(timed(sides[name], texts))
        print(f"round {r + 1}: " + ", ".join(f"{n} {times[n][-1]:.1f} s" for n in sides))
    med = {n: statistics.median(t) for n, t in times.items()}
    for name in sides:
        print(f"{name}: median {med[name]:.2f} s, {tokens / med[name]:,.0f} tokens/s, "
              f"{len(texts) / med[name]:.1f} chunks/s")
    print(f"int8 / fp32 throughput: {med['fp32'] / med['int8']:.2f} x (target >= 2)")
    print(f"padded batches of 32, sorted by length: batched / alone time "
          f"{med['int8 batched'] / med['int8']:.2f}")
    moved = np.abs(encode_int8_batched(texts) - encode_int8(texts)).max()
    print(f"largest change of a vector coordinate in a batch against alone: {moved:.4f}")


def retrieval() -> None:
    exe = str(Path(sys.executable).with_name("personalens"))
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([exe, "personabench", "eval", "--data", str(DATA), "--noise",
                        ",".join(NOISES), "--retriever", "minilm,minilm-int8", "--k", "5",
                        "--no-answer", "--out", f"{scratch}/run"],
                       check=True, stdout=subprocess.DEVNULL)
        metrics = json.loads(Path(f"{scratch}/run/metrics.json").read_text())
    by = {(c["retriever"], c["noise"]): c["retrieval"]["overall"] for c in metrics["conditions"]}
    print("| noise | recall fp32 | recall int8 | Δ | nDCG fp32 | nDCG int8 | Δ |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for noise in NOISES:
        a, b = by[("minilm", float(noise))], by[("minilm-int8", float(noise))]
        dr, dn = b["recall"] - a["recall"], b["ndcg"] - a["ndcg"]
        worst = max(worst, abs(dr), abs(dn))
        print(f"| {noise} | {a['recall']:.3f} | {b['recall']:.3f} | {dr:+.3f} | "
              f"{a['ndcg']:.3f} | {b['ndcg']:.3f} | {dn:+.3f} |")
    print(f"largest |Δ|: {worst:.3f} (target <= 0.01)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"needs the PersonaBench anchor at {DATA}")
    os.environ["PERSONALENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="int8-bench-")
    throughput(chunks(), args.rounds)
    retrieval()


if __name__ == "__main__":
    main()
