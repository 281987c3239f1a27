"""Each user's syntactic profile: a Gaussian over the 16-dim style vectors of their sentences.

Stage 1 of `pqb build`. Users with fewer than `min_sentences` sentences are left out (PQB: 30).
The fitted feature space, encoder and Gaussians are written (atomically) to the build folder
by one step of the build, whose record holds each file's hash; a resumed build loads and checks
them instead of training again, so every later stage sees the same profiles.
Parsing comes first and on its own, so a source with too few writers is refused before any run
directory exists.
"""

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from personalens.errors import InputError
from personalens.lenses.pqb.options import BuildOptions
from personalens.lenses.pqb.style_encoder import EncoderOptions, StyleEncoder, train_encoder
from personalens.lenses.pqb.syntax_features import (
    PARSE_CHUNK,
    FeatureSpace,
    processes_for,
    text_rules,
)
from personalens.lenses.pqb.user_gaussians import Gaussian, fit_full, fit_low_rank
from personalens.runs import write_atomic
from personalens.runs.executor import Executor


@dataclass
class StyleProfiles:
    space: FeatureSpace
    encoder: StyleEncoder
    gaussians: dict[str, Gaussian]
    sentences: dict[str, int]  # every user's sentence count, profiled or not (the report)

    def vectors(self, texts: list[str], nlp) -> np.ndarray:
        """Style vectors of whole texts (a query's sentences pooled into one count vector)."""
        pooled = [sum(sentences, Counter()) for sentences in text_rules(texts, nlp)]
        return self.encoder.encode(self.space.transform(pooled, sparse=True))


def parse_histories(histories: dict[str, list[str]], nlp,
                    executor: Executor | None = None) -> dict[str, list[Counter]]:
    """Every user's sentences as rule counts, users in sorted order.

    On a distributed executor the texts are parsed in chunks, one task per chunk, each worker
    with the default pipeline.
    """
    users = sorted(histories)
    texts = [t for uid in users for t in histories[uid]]
    if executor is not None and executor.distributed:
        chunks = [texts[i:i + PARSE_CHUNK] for i in range(0, len(texts), PARSE_CHUNK)]
        parsed = iter([rules for chunk in executor.map(text_rules, chunks) for rules in chunk])
    else:
        parsed = iter(text_rules(texts, nlp, n_process=processes_for(len(texts))))
    return {uid: [s for _ in histories[uid] for s in next(parsed)] for uid in users}


def profiled_users(sentences: dict[str, list[Counter]], min_sentences: int) -> list[str]:
    """Users with enough sentences; InputError (before any run starts) if fewer than two."""
    kept = [uid for uid, s in sentences.items() if len(s) >= min_sentences]
    if len(kept) < 2:
        raise InputError(f"only {len(kept)} user(s) have >= {min_sentences} sentences; "
                         "pqb build needs at least 2 (lower --min-sentences)")
    return kept


def train_profiles(sentences: dict[str, list[Counter]], kept: list[str],
                   options: BuildOptions, folder: Path) -> StyleProfiles:
    rows = [s for uid in kept for s in sentences[uid]]
    labels = [uid for uid in kept for _ in sentences[uid]]
    space = FeatureSpace.fit(rows, min_df=options.min_df)
    # Sparse: sentences x rules is mostly zeros and, dense, would not fit at the paper's scale
    # (a million sentences x 22k rules); the encoder densifies one batch at a time.
    features = space.transform(rows, sparse=True)
    encoder = train_encoder(features, labels, EncoderOptions(epochs=options.encoder_epochs,
                                                             seed=options.seed))
    vectors = encoder.encode(features)
    owners = np.array(labels)
    gaussians = {uid: fit_full(vectors[owners == uid]) if options.covariance == "full"
                 else fit_low_rank(vectors[owners == uid], rank=options.rank) for uid in kept}
    profiles = StyleProfiles(space, encoder, gaussians,
                             {uid: len(s) for uid, s in sentences.items()})
    _save(profiles, folder)
    return profiles


def _save(profiles: StyleProfiles, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "feature_space.json", json.dumps(profiles.space.to_json()))
    profiles.encoder.save(folder / "encoder")
    write_atomic(folder / "sentences.json", json.dumps(profiles.sentences, indent=1))
    write_atomic(folder / "gaussians.json", json.dumps(
        {uid: g.to_json() for uid, g in profiles.gaussians.items()}, indent=1))


PROFILE_FILES = ("feature_space.json", "encoder", "sentences.json", "gaussians.json")


def file_hashes(folder: Path) -> dict[str, str]:
    """sha256 of each saved profile file: the step's record, checked when a rerun loads them."""
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
            for name in PROFILE_FILES}


def load_checked(folder: Path, hashes: dict[str, str]) -> StyleProfiles:
    """The saved profiles, refused if any file differs from what the build recorded."""
    try:
        found = file_hashes(folder)
    except OSError as exc:
        raise InputError(f"a style profile file is missing ({exc.strerror}); delete the build "
                         "folder and rebuild", where=str(folder)) from None
    changed = sorted(name for name in PROFILE_FILES if found[name] != hashes.get(name))
    if changed:
        raise InputError(f"{', '.join(changed)} changed since the build recorded them; delete "
                         "the build folder and rebuild", where=str(folder))
    return load_profiles(folder)


def load_profiles(folder: Path) -> StyleProfiles:
    return StyleProfiles(
        FeatureSpace.from_json(json.loads((folder / "feature_space.json").read_text())),
        StyleEncoder.load(folder / "encoder"),
        {uid: Gaussian.from_json(g)
         for uid, g in json.loads((folder / "gaussians.json").read_text()).items()},
        json.loads((folder / "sentences.json").read_text()))
