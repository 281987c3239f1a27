"""`personalens pqb build`: a PQB dataset from users' own writing and the items they own.

Stages: (1) a syntactic profile per user (style_profiles); (2) a typo profile per user from
their corrected texts; (3) per item, five core terms, candidate queries that keep them, the
coherent set (pairwise cosine >= 0.9), the pair of users chosen by PQB's gates, and each chosen
query typed with its user's typos and, as a baseline, with random typos. Every model-derived
value is a record (runs.step_store), so a killed build resumes where it stopped.

The folder it writes is both a run directory (manifest, records.jsonl, metrics.json,
report.html) and a dataset: queries.json (the release format plus `random_typo_query`) and
corpus.jsonl (meta_<Category>.jsonl lines), which `pqb eval --data` reads.
"""

import asyncio
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from personalens.errors import InputError
from personalens.lenses.pqb.build_report import build_report
from personalens.lenses.pqb.build_source import BuildSource, Product
from personalens.lenses.pqb.candidate_queries import (
    FRAMES,
    candidate_messages,
    check_candidate,
    clean_reply,
    coherent_subset,
    core_terms,
    template_candidates,
)
from personalens.lenses.pqb.pair_selection import SelectionOptions, select_pair
from personalens.lenses.pqb.spacy_pipeline import load_pipeline
from personalens.lenses.pqb.spelling_correction import get_corrector
from personalens.lenses.pqb.style_profiles import (
    ProfileOptions,
    StyleProfiles,
    load_profiles,
    parse_histories,
    profiled_users,
    saved,
    train_profiles,
)
from personalens.lenses.pqb.typo_injection import inject_random, inject_typos, passes_similarity
from personalens.lenses.pqb.typo_profile import TypoProfile, learn_profile
from personalens.models import DEFAULT_MODEL, RetryPolicy, UsageLedger, load_model, merge_usage
from personalens.models.spec import validate_spec
from personalens.retrieval import DenseRetriever
from personalens.runs import RunDirectory, package_versions, write_atomic
from personalens.runs.step_store import StepFailed, StepStore

CANDIDATE_SOURCES = ("model", "templates")


@dataclass(frozen=True)
class BuildOptions:
    out: Path
    source: BuildSource = field(repr=False, compare=False)
    source_config: dict = field(default_factory=dict)  # what identifies the input files
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    use_cache: bool = True
    concurrency: int | None = None
    max_attempts: int = 6
    candidates: str = "model"  # or "templates"
    candidates_per_item: int = 8
    similarity_model: str = "minilm"
    similarity: float = 0.9
    profile: ProfileOptions = ProfileOptions()
    selection: SelectionOptions = SelectionOptions()
    pair_users: str = "owners"  # "owners": the item's own users; "all": every profiled user
    max_items: int | None = None
    corrector: str = "dictionary"
    max_typo_words: int = 3
    typo_attempts: int = 5
    seed: int = 0

    def config(self) -> dict:
        p, s = self.profile, self.selection
        return {"lens": "pqb-build", **self.source_config, "model": self.model,
                "candidates": self.candidates, "candidates_per_item": self.candidates_per_item,
                "similarity_model": self.similarity_model, "similarity": self.similarity,
                "min_sentences": p.min_sentences, "min_df": p.min_df,
                "covariance": p.covariance, "rank": p.rank, "encoder": vars(p.encoder),
                "region": s.region, "margin": s.margin, "pair_users": self.pair_users,
                "max_items": self.max_items, "corrector": self.corrector,
                "max_typo_words": self.max_typo_words, "typo_attempts": self.typo_attempts,
                "seed": self.seed}


@dataclass
class _Context:
    options: BuildOptions
    nlp: object
    store: StepStore
    model: object | None
    corrector: object
    embedder: DenseRetriever
    ledger: UsageLedger
    profiles: StyleProfiles | None = None
    typos: dict[str, TypoProfile] = field(default_factory=dict)


def check_options(options: BuildOptions) -> None:
    """Refuse bad options before anything is written."""
    if options.candidates not in CANDIDATE_SOURCES:
        raise InputError(f"--candidates must be one of {', '.join(CANDIDATE_SOURCES)}")
    if options.pair_users not in ("owners", "all"):
        raise InputError("--pair-users must be 'owners' or 'all'")
    if options.profile.covariance not in ("low_rank", "full"):
        raise InputError("--covariance must be 'low_rank' or 'full'")
    if not 0 < options.similarity <= 1:
        raise InputError("--similarity must be in (0, 1]")
    if not 1 <= options.profile.rank <= options.profile.encoder.dim:
        raise InputError(f"--rank must be between 1 and {options.profile.encoder.dim}")
    for flag, value in (("--candidates-per-item", options.candidates_per_item),
                        ("--max-items", 1 if options.max_items is None else options.max_items),
                        ("--max-typo-words", options.max_typo_words),
                        ("--typo-attempts", options.typo_attempts),
                        ("--min-sentences", options.profile.min_sentences),
                        ("--encoder-epochs", options.profile.encoder.epochs)):
        if value < 1:
            raise InputError(f"{flag} must be at least 1")
    if options.candidates == "model":
        validate_spec(options.model)


def run_build(options: BuildOptions, progress=None) -> dict:
    """Everything that can refuse the input does so before the run directory is created."""
    check_options(options)
    nlp = load_pipeline()
    embedder = DenseRetriever(options.similarity_model)
    style = options.out / "style"
    sentences = None if saved(style) else parse_histories(options.source.histories, nlp)
    kept = None if sentences is None else profiled_users(sentences, options.profile)
    ledger = UsageLedger()
    model_options = {"ledger": ledger, "base_url": options.base_url,
                     "api_key_env": options.api_key_env, "use_cache": options.use_cache,
                     "concurrency": options.concurrency,
                     "retry": RetryPolicy(max_attempts=options.max_attempts)}
    model = (load_model(options.model, role="generator", **model_options)
             if options.candidates == "model" else None)
    corrector = get_corrector(options.corrector, **model_options)
    run = RunDirectory.open(options.out, {
        "command": " ".join(["personalens", *sys.argv[1:]]), "config": options.config(),
        "versions": package_versions(), "seeds": {"build": options.seed,
                                                  "encoder": options.profile.encoder.seed},
        "models": {"generator": options.model if options.candidates == "model" else None,
                   "corrector": options.corrector},
    })
    status = "interrupted"
    try:
        profiles = (load_profiles(style) if sentences is None
                    else train_profiles(sentences, kept, options.profile, style))
        context = _Context(options, nlp, StepStore(run), model, corrector, embedder, ledger,
                           profiles)
        summary = _execute(context, run, progress)
        status = "complete" if summary["complete"] else "incomplete"
    finally:
        run.close(status)
    return summary


def _execute(context: _Context, run: RunDirectory, progress) -> dict:
    options, source = context.options, context.options.source
    profiled = sorted(context.profiles.gaussians)
    items = _items(source, profiled, options)
    results: list[dict] = []

    async def build_one(product: Product, users: list[str]) -> dict:
        result = await _with_typos(context, await _item(context, product, users))
        if progress is not None:
            progress.advance()
        return result

    async def main():
        try:
            context.typos = await _typo_profiles(context, profiled)
            if progress is not None:
                progress.start(total=len(items), completed=0)
            # All items at once: the model's concurrency limit bounds the calls in flight, and
            # results keep the items' order whatever order they finish in.
            results.extend(await asyncio.gather(*(build_one(p, u) for p, u in items)))
        finally:
            for model in (context.model, getattr(context.corrector, "model", None)):
                if model is not None:
                    await model.aclose()
            if progress is not None:
                progress.stop()

    try:
        asyncio.run(main())
    finally:
        run.write_manifest(usage=merge_usage(run.previous_usage, context.ledger.as_dict()))
    _write_dataset(options.out, source, results)
    write_atomic(options.out / "typo_profiles.json", json.dumps(
        {uid: p.to_json() for uid, p in context.typos.items()}, indent=1, sort_keys=True))
    summary = summarise(results, context, source)
    run.write_outputs(summary, build_report(summary, run.manifest))
    return summary


def _items(source: BuildSource, profiled: list[str], options: BuildOptions
           ) -> list[tuple[Product, list[str]]]:
    """Items with at least two profiled users, most-owned first (ties by id), capped."""
    known = set(profiled)
    chosen = []
    for product in source.products:
        users = profiled if options.pair_users == "all" else sorted(
            set(product.users) & known)
        if len(users) >= 2:
            chosen.append((product, users))
    chosen.sort(key=lambda pu: (-len(pu[1]), pu[0].parent_asin))
    return chosen[:options.max_items] if options.max_items else chosen


async def _typo_profiles(context: _Context, users: list[str]) -> dict[str, TypoProfile]:
    histories = context.options.source.histories

    async def profile(uid: str) -> TypoProfile | None:
        async def correct():
            return await context.corrector.correct(histories[uid])
        try:
            corrected = await context.store.get(f"correct/{uid}", correct)
        except StepFailed:
            return None  # recorded; the user's typo steps wait for a rerun that succeeds
        return learn_profile(histories[uid], corrected, context.nlp)

    learned = await asyncio.gather(*(profile(uid) for uid in users))
    return {uid: p for uid, p in zip(users, learned, strict=True) if p is not None}


async def _item(context: _Context, product: Product, users: list[str]) -> dict:
    async def compute():
        return await _build_item(context, product, users)
    try:
        return await context.store.get(f"item/{product.parent_asin}", compute)
    except StepFailed as exc:
        return {"asin": product.parent_asin, "status": "failed", "error": str(exc)}


async def _candidates(context: _Context, terms: list[str]) -> list[str]:
    options = context.options
    if options.candidates == "templates":
        return template_candidates(terms)

    async def one(i: int) -> str:
        completion = await context.model.complete(
            candidate_messages(terms, FRAMES[i % len(FRAMES)]), temperature=0.9, seed=i,
            max_tokens=80)
        return clean_reply(completion.text)
    return list(await asyncio.gather(*(one(i) for i in range(options.candidates_per_item))))


async def _build_item(context: _Context, product: Product, users: list[str]) -> dict:
    result = {"asin": product.parent_asin, "users": users}
    terms = core_terms(product.title, product.text, context.nlp)
    if terms is None:
        return {**result, "status": "skipped", "reason": "fewer than 5 core terms"}
    written = await _candidates(context, terms)
    checked = [{"text": t, "rejected": check_candidate(t, terms, context.nlp)} for t in written]
    valid = list(dict.fromkeys(c["text"] for c in checked if c["rejected"] is None))
    kept = [valid[i] for i in coherent_subset(
        context.embedder.encode(valid), context.options.similarity)] if valid else []
    result.update(terms=terms, candidates=checked, kept=kept)
    if len(kept) < 2:
        return {**result, "status": "skipped", "reason": "fewer than 2 coherent candidates"}
    vectors = context.profiles.vectors(kept, context.nlp)
    choice = select_pair(users, context.profiles.gaussians, vectors, context.options.selection)
    if choice is None:
        # How close each user's nearest candidate came, to show what --region would admit.
        nearest = {u: float(context.profiles.gaussians[u].mahalanobis_sq(vectors).min())
                   for u in users}
        return {**result, "status": "skipped", "reason": "no user pair passes the gates",
                "nearest_mahalanobis_sq": nearest}
    result["selection"] = choice.to_json()
    result["queries"] = [{"uid": uid, "syntax_query": kept[index]}
                         for uid, index in ((choice.user_a, choice.candidate_a),
                                            (choice.user_b, choice.candidate_b))]
    return {**result, "status": "ok"}


async def _with_typos(context: _Context, item: dict) -> dict:
    """The item with each chosen query's typo versions, each a step of its own: a user whose
    correction failed gets them on the rerun that corrects their texts."""
    if item["status"] != "ok":
        return item
    queries = []
    for query in item["queries"]:
        profile = context.typos.get(query["uid"])
        if profile is None:  # the correction step failed and is recorded; a rerun fills it
            queries.append({**query, **_untyped("the user's spelling correction failed")})
            continue

        async def compute(query=query, profile=profile):
            return _typed(context, item["asin"], query, profile)
        queries.append({**query, **await context.store.get(
            f"typo/{item['asin']}/{query['uid']}", compute)})
    return {**item, "queries": queries}


def _untyped(reason: str) -> dict:
    return {"typo_query": None, "typo_edits": [], "typo_skipped": reason,
            "random_typo_query": None, "random_edits": [], "random_skipped": reason}


def _typed(context: _Context, asin: str, query: dict, profile: TypoProfile) -> dict:
    """The user's typo version of their query and a random-typo version editing as many words
    (one edit each), or why either is missing."""
    options, clean, uid = context.options, query["syntax_query"], query["uid"]
    if not profile.edits:
        return _untyped("the user has no observed typos")
    personal = _first_passing(context, clean, lambda rng: inject_typos(
        clean, profile, context.nlp, rng, max_words=options.max_typo_words),
        f"{options.seed}/{asin}/{uid}/personal")
    gate = f"no version kept cosine >= {options.similarity} in {options.typo_attempts} draws"
    if personal is None:
        return _untyped(gate)
    record = {"typo_query": personal.text, "typo_edits": _edits(personal), "typo_skipped": None}
    baseline = _first_passing(context, clean, lambda rng: inject_random(
        clean, len(personal.edits), rng), f"{options.seed}/{asin}/{uid}/random")
    if baseline is None:
        return {**record, "random_typo_query": None, "random_edits": [], "random_skipped": gate}
    return {**record, "random_typo_query": baseline.text, "random_edits": _edits(baseline),
            "random_skipped": None}


def _first_passing(context: _Context, clean: str, draw, seed: str):
    """The first of up to --typo-attempts seeded draws that edits something and keeps the
    similarity gate, or None."""
    for attempt in range(context.options.typo_attempts):
        injected = draw(random.Random(f"{seed}/{attempt}"))
        if injected.edits and passes_similarity(clean, injected.text, context.embedder.encode,
                                                context.options.similarity):
            return injected
    return None


def _edits(injected) -> list[dict]:
    return [edit._asdict() for edit in injected.edits]


def _write_dataset(out: Path, source: BuildSource, results: list[dict]) -> None:
    queries = {r["asin"]: [{"asin": r["asin"], **q} for q in r["queries"]]
               for r in results if r["status"] == "ok"}
    write_atomic(out / "queries.json", json.dumps(queries, indent=1, ensure_ascii=False))
    write_atomic(out / "corpus.jsonl", "".join(
        json.dumps(p.meta, ensure_ascii=False) + "\n" for p in source.products))


def summarise(results: list[dict], context: _Context, source: BuildSource) -> dict:
    """The build's numbers, each countable from records.jsonl and the written files."""
    statuses = Counter(r["status"] for r in results)
    reasons = Counter(r["reason"] for r in results if r["status"] == "skipped")
    candidates = [c for r in results for c in r.get("candidates", [])]
    queries = [q for r in results if r["status"] == "ok" for q in r["queries"]]
    profiles = context.profiles
    summary = {
        "complete": not context.store.failures,
        "origin": source.origin, "users": len(source.histories),
        "profiled_users": len(profiles.gaussians), "products": len(source.products),
        "items": len(results), "items_by_status": dict(statuses),
        "skipped_by_reason": dict(reasons),
        "candidates": len(candidates),
        "candidates_valid": sum(c["rejected"] is None for c in candidates),
        "candidates_kept": sum(len(r.get("kept", [])) for r in results),
        "queries": len(queries),
        "typo_queries": sum(q["typo_query"] is not None for q in queries),
        "random_typo_queries": sum(q["random_typo_query"] is not None for q in queries),
        "typo_skipped_by_reason": dict(Counter(q["typo_skipped"] for q in queries
                                               if q["typo_skipped"])),
        "random_skipped_by_reason": dict(Counter(q["random_skipped"] for q in queries
                                                 if q["random_skipped"] and q["typo_query"])),
        "sentences": profiles.sentences,
        "failures": context.store.failures,
        "typo_rates": {uid: p.rates for uid, p in sorted(context.typos.items())},
    }
    if source.typo_truth:
        summary["typo_recovery"] = typo_recovery(context.typos, source.typo_truth)
    return summary


def typo_recovery(learned: dict[str, TypoProfile], truth: dict[str, dict[str, float]]) -> dict:
    """Mean absolute error between learned and true per-kind rates, over users with both."""
    users = sorted(set(learned) & set(truth))
    errors = [abs(learned[u].rates.get(k, 0.0) - rate)
              for u in users for k, rate in truth[u].items()]
    return {"users": len(users), "mean_absolute_error":
            sum(errors) / len(errors) if errors else None}
