"""Does PQB's personal typo model recover known typing habits?

    python bench/pqb_typo_recovery.py [--words-per-user 3500] [--seed 0] [--distance 2]

Six synthetic users type clean English (the user-written PersonaBench anchor utterances, or the
bundled example community when the anchor is absent) with known per-kind typo rates
(population.typo_habits.apply_typos). The DictionaryCorrector corrects their text and
learn_profile learns their profile. Printed: truth, realised (what the generator actually did,
learnt against the clean text) and learnt rate per kind; each user's learnt total against the
realised one; mean absolute errors overall and per kind; learnt / true rate per kind over all
users, and the learnt rates of kinds a user never makes; whether the aligner names every
generated edit as its kind; the corrector's word-level precision and recall on typos, per
kind; corrector timings, and the words whose uncached lookup took over 0.1 s.
"""

import argparse
import asyncio
import json
import random
import time
from collections import Counter
from pathlib import Path

from personalens.lenses.pqb.spacy_pipeline import load_pipeline
from personalens.lenses.pqb.spelling_correction import DictionaryCorrector
from personalens.lenses.pqb.typo_edits import align, word_spans
from personalens.lenses.pqb.typo_profile import TypoProfile, learn_profile
from personalens.population import typo_habits
from personalens.population.typo_habits import KINDS, apply_typos

REPO = Path(__file__).resolve().parents[1]
ANCHOR = (REPO.parent / "shared/anchors/personabench/eval_data/eval_data_v1/synthetic_data"
          / "community_0/private_data/noise_0.0/conversation_data_all.json")
EXAMPLE = (REPO / "src/personalens/lenses/personabench/example_data/community_example"
           / "private_data/noise_0.0/conversation_data_all.json")

# Per-kind rates (edits per eligible word); totals from 3 % to 15 % of eligible words.
USERS = {
    "swapper 3%": {"transposition": 0.020, "adjacent_key": 0.010},
    "dropper 5%": {"deletion": 0.035, "transposition": 0.015},
    "fat fingers 8%": {"adjacent_key": 0.050, "insertion": 0.020, "other": 0.010},
    "stutterer 10%": {"repetition": 0.060, "deletion": 0.020, "transposition": 0.020},
    "balanced 12%": dict.fromkeys(KINDS, 0.020),
    "sloppy 15%": {"transposition": 0.040, "deletion": 0.040, "adjacent_key": 0.030,
                   "repetition": 0.020, "insertion": 0.010, "other": 0.010},
}


def user_texts(path: Path) -> list[str]:
    """Every utterance a community member wrote themselves, in file order."""
    people = json.loads(path.read_text())
    return [u["content"] for person in people for target in person["Data"]
            for session in target["Conversations"] for u in session["conversation"]
            if u["role"] == person["Name"]]


def chunks(texts: list[str], n: int, words: int) -> list[list[str]]:
    """`n` disjoint runs of consecutive utterances of about `words` words each."""
    out, current, count = [], [], 0
    for text in texts:
        current.append(text)
        count += len(text.split())
        if count >= words:
            out.append(current)
            current, count = [], 0
        if len(out) == n:
            break
    return out


def corrector_scores(clean: list[str], typed: list[str], fixed: list[str]) -> dict[str, Counter]:
    """Word-level outcome counts per typo kind ("none" = a word typed correctly)."""
    scores: dict[str, Counter] = {}
    for texts in zip(clean, typed, fixed, strict=True):
        for (*_, c), (*_, t), (*_, f) in zip(*(word_spans(x) for x in texts), strict=True):
            kinds = [e.kind for e in align(c, t)]
            kind = kinds[0] if len(kinds) == 1 else ("none" if not kinds else "multiple")
            tally = scores.setdefault(kind, Counter())
            tally["words"] += 1
            tally["changed"] += f != t
            tally["fixed"] += f.lower() == c.lower() and t.lower() != c.lower()
    return scores


def rate_table(name: str, truth: dict, realised: TypoProfile, learnt: TypoProfile) -> list[str]:
    rows = [f"| {name} | {k} | {truth.get(k, 0):.4f} | {realised.rates[k]:.4f} | "
            f"{learnt.rates[k]:.4f} |" for k in KINDS]
    totals = [sum(truth.values()), sum(realised.rates.values()), sum(learnt.rates.values())]
    return [*rows, f"| {name} | **all kinds** | " + " | ".join(f"{t:.4f}" for t in totals)
            + f" (learnt {totals[2] / totals[1] - 1:+.0%} vs realised) |"]


GENERATED: list[tuple[str, str, str]] = []  # (word, kind, typed) for every generated edit


def _recording_misspell(word: str, kind: str, rng, _misspell=typo_habits.misspell) -> str:
    typed = _misspell(word, kind, rng)
    if typed != word:
        GENERATED.append((word, kind, typed))
    return typed


typo_habits.misspell = _recording_misspell  # apply_typos looks it up at call time


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


async def run(words_per_user: int, seed: int, distance: int) -> None:
    source = ANCHOR if ANCHOR.exists() else EXAMPLE
    texts = chunks(user_texts(source), len(USERS), words_per_user)
    nlp = load_pipeline()
    corrector = DictionaryCorrector(distance=distance)
    rows, errors, scores = [], {"truth": [], "realised": []}, {}
    ratios, spurious = Counter(), []
    timings = Counter()
    for i, (name, rates) in enumerate(USERS.items()):
        clean = texts[i % len(texts)]
        rng = random.Random(seed * 100 + i)
        typed = [apply_typos(t, rates, rng) for t in clean]
        started = time.perf_counter()
        fixed = await corrector.correct(typed)
        timings["cached"] += time.perf_counter() - started
        realised = learn_profile(typed, clean, nlp)
        learnt = learn_profile(typed, fixed, nlp)
        rows += rate_table(name, rates, realised, learnt)
        errors["truth"].append({k: abs(learnt.rates[k] - rates.get(k, 0)) for k in KINDS})
        errors["realised"].append({k: abs(learnt.rates[k] - realised.rates[k]) for k in KINDS})
        for k in KINDS:
            ratios[k, "truth"] += rates.get(k, 0)
            ratios[k, "learnt"] += learnt.rates[k]
        spurious += [learnt.rates[k] for k in KINDS if k not in rates]
        for kind, tally in corrector_scores(clean, typed, fixed).items():
            scores.setdefault(kind, Counter()).update(tally)
        timings["words"] += sum(len(word_spans(t)) for t in typed)
        timings["eligible"] += realised.eligible_words
    generated = len(GENERATED)
    named = sum([e.kind for e in align(w, t)] == [k] for w, k, t in GENERATED)
    timings["uncached"], slow = await time_uncached(texts, seed, distance)
    report(source, rows, errors, scores, timings)
    print("\nlearnt / true rate, summed over users: " + ", ".join(
        f"{k} {ratios[k, 'learnt'] / ratios[k, 'truth']:.2f}" for k in KINDS))
    print(f"learnt rates of kinds a user never makes: {min(spurious):.4f} to {max(spurious):.4f} "
          f"({len(spurious)} user-kind cells)")
    print(f"aligner: {named} of {generated} generated edits named as their own kind")
    print(f"uncached lookups over 0.1 s: {len(slow)} words, {min(slow, default=0):.2f} to "
          f"{max(slow, default=0):.2f} s each, {sum(slow):.2f} s in all")


class _Uncached(DictionaryCorrector):
    """The same corrector with its per-word cache emptied before every word; slow words timed."""

    slow: list[float]

    def correct_word(self, word: str) -> str:
        self._cache.clear()
        started = time.perf_counter()
        fixed = super().correct_word(word)
        if (elapsed := time.perf_counter() - started) > 0.1:
            self.slow.append(elapsed)
        return fixed


async def time_uncached(texts: list[list[str]], seed: int, distance: int
                        ) -> tuple[float, list[float]]:
    """The same correction work as the run, without the per-word cache."""
    corrector = _Uncached(distance=distance)
    corrector.slow = []
    started = time.perf_counter()
    for i, rates in enumerate(USERS.values()):
        rng = random.Random(seed * 100 + i)
        await corrector.correct([apply_typos(t, rates, rng) for t in texts[i % len(texts)]])
    return time.perf_counter() - started, corrector.slow


def report(source: Path, rows: list[str], errors: dict, scores: dict, timings: Counter) -> None:
    print(f"text: {source} ({timings['words']} words, {timings['eligible']} eligible, "
          f"{len(USERS)} users)\n")
    print("| user | kind | truth rate | realised rate | learnt rate |\n|---|---|---|---|---|")
    print("\n".join(rows))
    print("\n| MAE of learnt rate vs | overall | " + " | ".join(KINDS) + " |")
    print("|---|---|" + "---|" * len(KINDS))
    for against, per_user in errors.items():
        per_kind = [mean([e[k] for e in per_user]) for k in KINDS]
        print(f"| {against} | {mean(per_kind):.4f} | "
              + " | ".join(f"{v:.4f}" for v in per_kind) + " |")
    typos = {k: v for k, v in scores.items() if k != "none"}
    changed = sum(v["changed"] for v in scores.values())
    fixed = sum(v["fixed"] for v in typos.values())
    detected = sum(v["changed"] for v in typos.values())
    words = sum(v["words"] for v in typos.values())
    print(f"\ncorrector: precision {fixed / changed:.3f} ({fixed} of {changed} changed words "
          f"restored), recall {fixed / words:.3f} ({fixed} of {words} typos restored), "
          f"detection {detected / words:.3f}; false alarms on correct words "
          f"{scores['none']['changed']} of {scores['none']['words']} "
          f"({scores['none']['changed'] / scores['none']['words']:.2%})")
    print("\n| kind | typos | detected | restored |\n|---|---|---|---|")
    for kind in [*KINDS, "multiple"]:
        if kind in typos:
            t = typos[kind]
            print(f"| {kind} | {t['words']} | {t['changed'] / t['words']:.3f} | "
                  f"{t['fixed'] / t['words']:.3f} |")
    print(f"\ncorrector time, per-word cache: {timings['cached']:.2f} s; without cache: "
          f"{timings['uncached']:.2f} s ({timings['words']} words)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words-per-user", type=int, default=3500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--distance", type=int, default=2, help="the speller's edit distance")
    args = parser.parse_args()
    asyncio.run(run(args.words_per_user, args.seed, args.distance))


if __name__ == "__main__":
    main()
