"""PQB syntactic profiles: how fast are rule extraction and encoder training on this machine?

1. Rule extraction: spaCy en_core_web_sm parse + D4/D3/P3 rules of 2,000 generated review-like
   sentences, one text per sentence (PQB's unit), then the feature space fit and transform.
2. Encoder training: 50 users × 60 sentences of synthetic sparse rule features over 22,000 rules
   (the paper's vocabulary size, about 35 active rules per sentence), default EncoderOptions;
   held-out and training-set nearest-centroid accuracy show what the run learned, next to
   nearest centroid on the raw features and a 64-dim encoder.
3. The rest of the method, for scale: fitting the 50 users' low-rank Gaussians and selecting
   the pair for 1,000 items of 3 users × 20 candidates.
Prints numbers from one run.
"""

import sys
import time

import numpy as np
import scipy.sparse

from personalens.lenses.pqb.pair_selection import select_pair
from personalens.lenses.pqb.spacy_pipeline import load_pipeline
from personalens.lenses.pqb.style_encoder import EncoderOptions, train_encoder
from personalens.lenses.pqb.syntax_features import FeatureSpace, text_rules
from personalens.lenses.pqb.user_gaussians import fit_low_rank

WORDS = {
    "noun": ["guitar", "strap", "pedal", "cable", "stroller", "bottle", "controller", "headset",
             "case", "tuner", "blanket", "game"],
    "adj": ["great", "cheap", "sturdy", "flimsy", "loud", "soft", "perfect", "decent", "solid"],
    "adv": ["sadly", "honestly", "really", "quickly", "surprisingly", "definitely"],
    "past": ["broke", "arrived", "worked", "stopped", "failed", "lasted"],
    "verb": ["love", "like", "recommend", "hate", "returned", "bought"],
    "who": ["son", "daughter", "wife", "husband", "friend", "band"],
}
TEMPLATES = [
    "I {verb} this {noun}.",
    "The {noun} {past} after two weeks, {adv}.",
    "{Adj} {noun}, {adj} sound and a {adj} price!",
    "My {who} uses it every day and {adv} loves the {noun}.",
    "If you need a {adj} {noun} for travel, this one is worth it.",
    "It is {adv} {adj}, but the {noun} could be better.",
    "Would buy again.",
    "{Adv}, the {noun} feels {adj} and the {noun} looks {adj}.",
    "We {verb} it because the old {noun} {past} when we moved.",
    "Not what I expected from a {noun} at this price.",
]


def review_sentences(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)

    def pick(kind: str) -> str:
        return str(rng.choice(WORDS[kind]))

    out = []
    for _ in range(n):
        template = str(rng.choice(TEMPLATES))
        slots = {k: pick(k) for k in WORDS} | {"Adj": pick("adj").capitalize(),
                                                 "Adv": pick("adv").capitalize()}
        out.append(template.format(**slots))
    return out


def synthetic_users(n_users: int, per_user: int, n_rules: int, seed: int = 0):
    """Sparse x/(1+x) rows: a Zipf-like rule popularity, tilted per user (log-normal)."""
    rng = np.random.default_rng(seed)
    base = 1.0 / (np.arange(n_rules) + 10.0)
    rows, users = [], []
    for u in range(n_users):
        p = base * rng.lognormal(0.0, 1.0, n_rules)
        counts = rng.multinomial(35, p / p.sum(), size=per_user).astype(np.float32)
        rows.append(scipy.sparse.csr_matrix(counts / (1 + counts)))
        users += [f"user{u:02d}"] * per_user
    return scipy.sparse.vstack(rows).tocsr(), users


def bench_rules() -> None:
    sentences = review_sentences(2000)
    start = time.perf_counter()
    nlp = load_pipeline()
    loaded = time.perf_counter()
    rules = text_rules(sentences, nlp=nlp, batch_size=256)
    parsed = time.perf_counter()
    counters = [c for text in rules for c in text]
    space = FeatureSpace.fit(counters, min_df=2)
    X = space.transform(counters)
    done = time.perf_counter()
    print(f"spaCy load                 {loaded - start:7.2f} s")
    print(f"parse + rules, 2000 texts  {parsed - loaded:7.2f} s   "
          f"{len(sentences) / (parsed - loaded):7.0f} sentences/s; 1,000,000 sentences at this "
          f"rate: {1e6 * (parsed - loaded) / len(sentences) / 60:.0f} min")
    print(f"fit + transform            {done - parsed:7.3f} s   vocabulary {len(space)}, "
          f"X {X.shape}")


def bench_encoder() -> None:
    X, users = synthetic_users(50, 60, 22_000)
    train = np.array([i % 60 < 45 for i in range(len(users))])  # 45 train, 15 held out each
    options = EncoderOptions()
    start = time.perf_counter()
    encoder = train_encoder(X[train], [u for u, t in zip(users, train, strict=True) if t],
                            options)
    trained = time.perf_counter()
    print(f"encoder training           {trained - start:7.2f} s   {options.epochs} epochs, "
          f"batch {options.batch_size}, 50 users × 45 sentences, 22,000 rules")
    print(f"loss first/last epoch      {encoder.history[0]:.3f} / {encoder.history[-1]:.3f}")
    labels = np.array([int(u[4:]) for u in users])
    Z = encoder.encode(X)
    print(f"nearest centroid, 16 dims  held out {centroid_accuracy(Z, labels, train, ~train):.3f}"
          f" (chance 0.020), training set {centroid_accuracy(Z, labels, train, train):.3f}")
    raw = centroid_accuracy(X, labels, train, ~train)
    wide = train_encoder(X[train], [u for u, t in zip(users, train, strict=True) if t],
                         EncoderOptions(dim=64))
    print(f"nearest centroid held out  raw 22,000-dim features {raw:.3f}; 64-dim encoder "
          f"{centroid_accuracy(wide.encode(X), labels, train, ~train):.3f}")
    bench_gaussians(Z, labels)


def centroid_accuracy(X, labels: np.ndarray, fit: np.ndarray, test: np.ndarray) -> float:
    """Share of `test` rows whose nearest user centroid (over `fit` rows) is their own user."""
    centroids = np.stack([np.asarray(X[fit & (labels == u)].mean(axis=0)).ravel()
                          for u in range(50)])
    rows = X[test]
    cross = np.asarray(rows @ centroids.T)
    distances = (centroids ** 2).sum(axis=1)[None] - 2 * cross  # + |row|^2, the same per row
    return float((distances.argmin(axis=1) == labels[test]).mean())


def bench_gaussians(Z: np.ndarray, labels: np.ndarray) -> None:
    start = time.perf_counter()
    gaussians = {str(u): fit_low_rank(Z[labels == u], rank=4) for u in range(50)}
    fitted = time.perf_counter()
    rng = np.random.default_rng(1)
    chosen = 0
    for _ in range(1000):
        users = [str(u) for u in rng.choice(50, size=3, replace=False)]
        chosen += select_pair(users, gaussians, Z[rng.choice(len(Z), size=20)]) is not None
    selected = time.perf_counter()
    print(f"50 low-rank Gaussians      {fitted - start:7.3f} s")
    print(f"select_pair × 1000 items   {selected - fitted:7.3f} s   ({chosen} items got a pair)")


def main() -> None:
    bench_rules()
    bench_encoder()


if __name__ == "__main__":
    sys.exit(main())
