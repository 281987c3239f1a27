"""Each user's syntactic profile: a Gaussian over the 16-dim style vectors of their sentences.

Stage 1 of `pqb build`. Users with fewer than `min_sentences` sentences are left out (PQB: 30).
The fitted feature space, encoder and Gaussians are saved in the build folder, and a resumed
build loads them instead of training again, so every later stage sees the same profiles.
"""

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from personalens.errors import InputError
from personalens.lenses.pqb.style_encoder import EncoderOptions, StyleEncoder, train_encoder
from personalens.lenses.pqb.syntax_features import FeatureSpace, text_rules
from personalens.lenses.pqb.user_gaussians import Gaussian, fit_full, fit_low_rank
from personalens.runs import write_atomic


@dataclass(frozen=True)
class ProfileOptions:
    min_sentences: int = 30
    min_df: int = 2
    covariance: str = "low_rank"  # or "full"
    rank: int = 4
    encoder: EncoderOptions = EncoderOptions()


@dataclass
class StyleProfiles:
    space: FeatureSpace
    encoder: StyleEncoder
    gaussians: dict[str, Gaussian]
    sentences: dict[str, int]  # every user's sentence count, kept or not

    def vectors(self, texts: list[str], nlp) -> np.ndarray:
        """Style vectors of whole texts (a query's sentences pooled into one count vector)."""
        pooled = [sum(sentences, Counter()) for sentences in text_rules(texts, nlp)]
        return self.encoder.encode(self.space.transform(pooled))


def build_profiles(histories: dict[str, list[str]], nlp, options: ProfileOptions,
                   folder: Path) -> StyleProfiles:
    if (folder / "gaussians.json").exists():
        return _load(folder)
    users = sorted(histories)
    per_user = {uid: [s for text in rules for s in text]
                for uid, rules in zip(users, _parse(histories, users, nlp), strict=True)}
    counts = {uid: len(sentences) for uid, sentences in per_user.items()}
    kept = [uid for uid in users if counts[uid] >= options.min_sentences]
    if len(kept) < 2:
        raise InputError(f"only {len(kept)} user(s) have >= {options.min_sentences} sentences; "
                         "pqb build needs at least 2 (lower --min-sentences)")
    sentences = [s for uid in kept for s in per_user[uid]]
    labels = [uid for uid in kept for _ in per_user[uid]]
    space = FeatureSpace.fit(sentences, min_df=options.min_df)
    features = space.transform(sentences)
    encoder = train_encoder(features, labels, options.encoder)
    vectors = encoder.encode(features)
    fit = fit_full if options.covariance == "full" else (
        lambda x: fit_low_rank(x, rank=options.rank))
    gaussians = {uid: fit(vectors[[i for i, u in enumerate(labels) if u == uid]])
                 for uid in kept}
    profiles = StyleProfiles(space, encoder, gaussians, counts)
    _save(profiles, folder)
    return profiles


def _parse(histories: dict[str, list[str]], users: list[str], nlp) -> list[list]:
    texts = [t for uid in users for t in histories[uid]]
    parsed = iter(text_rules(texts, nlp))
    return [[next(parsed) for _ in histories[uid]] for uid in users]


def _save(profiles: StyleProfiles, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "feature_space.json", json.dumps(profiles.space.to_json()))
    profiles.encoder.save(folder / "encoder")
    write_atomic(folder / "sentences.json", json.dumps(profiles.sentences, indent=1))
    # Written last: its presence marks a complete, loadable profile stage.
    write_atomic(folder / "gaussians.json", json.dumps(
        {uid: g.to_json() for uid, g in profiles.gaussians.items()}, indent=1))


def _load(folder: Path) -> StyleProfiles:
    return StyleProfiles(
        FeatureSpace.from_json(json.loads((folder / "feature_space.json").read_text())),
        StyleEncoder.load(folder / "encoder"),
        {uid: Gaussian.from_json(g)
         for uid, g in json.loads((folder / "gaussians.json").read_text()).items()},
        json.loads((folder / "sentences.json").read_text()))
