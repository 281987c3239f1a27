"""Evaluation time of the PQB retrievers on a 10k-item product corpus, as ratios to BM25.

One run, one process: each retriever indexes the same deterministic synthetic corpus (10,000
product records, about 37 words each) and ranks the same 200 queries to depth 20, as a PQB
evaluation does. Times include model loading and start from an empty embedding cache; for
the retrievers that cache embeddings, a second (warm) evaluation is timed as well. The last
line is the cold SPLADE time as a multiple of the cold MiniLM time.

Everything is offline: `splade` runs on a SPLADE-shaped SparseEncoder built from the bundled
MiniLM (64 active dimensions per text, like a trained SPLADE's sparsity) and `rerank-ce` on
a CrossEncoder built from the bundled MiniLM. Speeds match the real models' architecture class
(MiniLM-sized), not the real checkpoints (SPLADE cocondenser and ColBERTv2 are BERT-base sized,
several times slower); ColBERT is not measured because PyLate is not installed here.
"""

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_ITEMS, N_QUERIES, DEPTH, SEED = 10_000, 200, 20, 0

BRANDS = ["Fender", "Yamaha", "Gibson", "Roland", "Casio", "Ibanez", "Korg", "Pearl", "Zildjian",
          "Shure", "Boss", "Epiphone", "Nintendo", "Sony", "Logitech", "Razer", "Pampers",
          "Graco", "Chicco", "Munchkin", "Philips", "Medela", "Ernie Ball", "D'Addario"]
KINDS = ["electric guitar", "acoustic guitar", "bass guitar", "ukulele", "digital piano",
         "keyboard stand", "drum set", "snare drum", "cymbal pack", "drumsticks",
         "microphone", "guitar pedal", "amplifier", "guitar strings", "capo", "tuner",
         "headphones", "game controller", "gaming mouse", "racing wheel", "console bundle",
         "baby stroller", "car seat", "high chair", "baby monitor", "diaper pack",
         "bottle warmer", "breast pump", "teething toy", "play mat"]
ADJECTIVES = ["compact", "portable", "professional", "beginner", "premium", "lightweight",
              "adjustable", "wireless", "vintage", "heavy duty", "foldable", "quiet"]
COLORS = ["black", "white", "red", "blue", "sunburst", "natural", "pink", "grey", "green"]
FEATURES = ["with carrying case", "with USB-C charging", "with Bluetooth", "for kids",
            "for live stage use", "with gig bag", "with 2-year warranty", "easy to clean",
            "with adjustable height", "BPA free", "with noise cancelling", "with metronome",
            "for travel", "with LED display", "with spare parts", "machine washable"]
FILLER = ["great", "sound", "quality", "durable", "build", "easy", "setup", "perfect", "gift",
          "value", "for", "money", "comfortable", "grip", "smooth", "finish", "solid",
          "construction", "works", "well", "highly", "rated", "reliable", "sturdy", "design"]


def corpus(rng: np.random.Generator):
    from personalens.retrieval import Document

    docs, titles = [], []
    for i in range(N_ITEMS):
        title = (f"{rng.choice(BRANDS)} {rng.choice(ADJECTIVES)} {rng.choice(COLORS)} "
                 f"{rng.choice(KINDS)} {rng.choice(FEATURES)}")
        body = " ".join(rng.choice(FILLER, size=int(rng.integers(20, 40))))
        docs.append(Document(f"item{i:05d}", f"{title}. {body}."))
        titles.append(title)
    return docs, titles


def queries(rng: np.random.Generator, titles: list[str]) -> list[str]:
    """A user's short query for a random item: some of its title words, in a shuffled order."""
    picked = rng.choice(len(titles), size=N_QUERIES, replace=False)
    out = []
    for i in picked:
        words = titles[i].split()
        keep = rng.choice(len(words), size=min(len(words), int(rng.integers(3, 6))), replace=False)
        out.append(" ".join(words[j] for j in sorted(keep)))
    return out


def empty_embedding_cache() -> None:
    """Delete the embedding cache; the unpacked MiniLM stays, as after a first install."""
    from personalens.paths import cache_dir

    for path in cache_dir().glob("embeddings.sqlite*"):
        path.unlink()


def evaluate(name: str, docs, texts) -> float:
    """Seconds to build the retriever, index the corpus and rank every query to DEPTH."""
    from personalens.retrieval import get_retriever

    start = time.perf_counter()
    ranking = get_retriever(name).index(docs).search(texts, DEPTH)
    elapsed = time.perf_counter() - start
    assert len(ranking.ids) == len(texts) and ranking.errors is None
    return elapsed


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="pl-pqb-bench-"))
    os.environ["PERSONALENS_CACHE_DIR"] = str(scratch / "cache")
    import transformers

    from personalens.retrieval.sparse import save_offline_splade

    transformers.logging.set_verbosity_error()  # the MiniLM-built heads log "newly initialised"
    rng = np.random.default_rng(SEED)
    docs, titles = corpus(rng)
    texts = queries(rng, titles)
    splade = save_offline_splade(scratch / "minilm-splade")
    runs = [("bm25", "bm25", False), ("minilm", "minilm", True),
            ("hybrid (bm25+minilm)", "hybrid", True),
            (f"splade ({splade.name}, top-64)", f"splade:{splade}", True),
            ("rerank-ce (MiniLM cross-encoder, BM25 top 25)", "rerank-ce:minilm", False)]
    print(f"items={len(docs)} queries={len(texts)} depth={DEPTH} "
          f"words/item={np.mean([len(d.text.split()) for d in docs]):.1f} "
          f"load average at start={os.getloadavg()[0]:.2f}")
    bm25, colds = None, {}
    for label, name, cached in runs:
        empty_embedding_cache()
        cold = colds[name.split(":")[0]] = evaluate(name, docs, texts)
        bm25 = bm25 or cold
        line = f"{label:48s} cold {cold:8.2f} s  {cold / bm25:7.1f} x bm25"
        if cached:
            warm = evaluate(name, docs, texts)
            line += f"   warm cache {warm:6.2f} s  {warm / bm25:6.1f} x bm25"
        print(line, flush=True)
    print(f"splade / minilm, cold = {colds['splade'] / colds['minilm']:.2f}")
    print(f"load average at end={os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
