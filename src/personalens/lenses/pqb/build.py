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
from dataclasses import dataclass
from pathlib import Path

import pydantic

from personalens.lenses.pqb.build_report import report_sections
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
from personalens.lenses.pqb.options import BuildOptions
from personalens.lenses.pqb.pair_selection import SelectionOptions, select_pair
from personalens.lenses.pqb.records import BuildRecord, BuiltQuery, Candidate
from personalens.lenses.pqb.source_files import open_source
from personalens.lenses.pqb.spacy_pipeline import load_pipeline
from personalens.lenses.pqb.spelling_correction import Corrector, DictionaryCorrector, LLMCorrector
from personalens.lenses.pqb.style_profiles import (
    StyleProfiles,
    file_hashes,
    load_checked,
    parse_histories,
    profiled_users,
    train_profiles,
)
from personalens.lenses.pqb.typo_injection import inject_random, inject_typos, passes_similarity
from personalens.lenses.pqb.typo_profile import TypoProfile, learn_profile
from personalens.models.role_set import RoleSet
from personalens.report import HtmlReport
from personalens.retrieval import DenseRetriever
from personalens.runs import (
    ItemFailure,
    ItemRecords,
    Lens,
    Metrics,
    Outcome,
    RunContext,
    RunIdentity,
    StepFailed,
    Tally,
    run_lens,
    write_atomic,
)
from personalens.runs.blocking import run_blocking
from personalens.runs.run_directory import step_recorded

STYLE_STEP = "style/profiles"


@dataclass(frozen=True)
class BuildItem:
    product: Product
    users: list[str]

    @property
    def key(self) -> str:
        return f"item/{self.product.parent_asin}"


class BuildMetrics(Metrics):
    """The build's funnel, each count traceable to records.jsonl and the written files."""

    model_config = pydantic.ConfigDict(extra="allow")  # the summary's keys, as they were
    complete: bool
    users: int
    profiled_users: int
    items: int
    candidates: int
    candidates_valid: int
    queries: int
    typo_queries: int
    skipped_by_reason: dict[str, int]
    failures: list[ItemFailure]
    out: str  # the build folder

    def headlines(self) -> list[str]:
        out = Path(self.out)
        return [f"data: {out / 'queries.json'}, {out / 'corpus.jsonl'}",
                f"{self.profiled_users} of {self.users} users profiled; {self.items} items "
                f"tried; {self.queries} queries, {self.typo_queries} with typos"]


class PqbBuild(Lens[BuildOptions, BuildRecord, BuildMetrics]):
    """Items are products with two or more profiled users; the profiles and each user's
    spelling correction are steps before the plan, typo versions steps after it."""

    name = "pqb build"
    title = "personalens · PersonalQuery-Benchmark build"
    record_model = BuildRecord

    def __init__(self, options: BuildOptions, source: BuildSource | None = None):
        """Everything that can refuse the input does so here, before the folder exists.
        `source`: data already in memory instead of the options' files."""
        super().__init__(options, options.models.prices)
        self.source, self.dataset_hash = (source, None) if source else open_source(
            options.reviews, options.meta, options.population)
        settings = (options.models.resolved(BuildOptions.roles) if options.candidates == "model"
                    else {})
        if options.corrector_spec:  # served where the generator is
            settings["corrector"] = options.models["generator"].with_spec(options.corrector_spec)
        self.roles = RoleSet(settings, self.ledger)
        self.nlp = load_pipeline()
        if step_recorded(options.out, STYLE_STEP):
            self.style_input = None  # the recorded step holds the profiles
        else:
            sentences = parse_histories(self.source.histories, self.nlp, options.make_executor())
            self.style_input = (sentences, profiled_users(sentences, options.min_sentences))
        self.embedder = DenseRetriever(options.similarity_model)

    def identity(self) -> RunIdentity:
        return RunIdentity(options=self.options, dataset_hash=self.dataset_hash,
                           seeds={"build": self.options.seed, "encoder": self.options.seed},
                           models=self.roles.specs(), endpoints=self.roles.endpoints())

    async def setup(self, context: RunContext) -> None:
        style, self.steps = self.options.out / "style", context.steps

        async def train() -> dict:
            await run_blocking(train_profiles, *self.style_input, self.options, style)
            return file_hashes(style)
        self.profiles = load_checked(style, await self.steps.get(STYLE_STEP, train))
        profiled = sorted(self.profiles.gaussians)
        corrector = (LLMCorrector(self.roles["corrector"]) if "corrector" in self.roles
                     else DictionaryCorrector())
        self.typos = await self._typo_profiles(corrector, profiled)
        self.model = self.roles.models.get("generator")  # writes candidates (--candidates model)
        self.items = _items(self.source, profiled, self.options)

    def plan(self) -> list[BuildItem]:
        return self.items

    async def finish(self, records: ItemRecords[BuildRecord]) -> None:
        self.results = [await self._with_typos(r) for r in records]
        _write_dataset(self.options.out, self.source, self.results)
        write_atomic(self.options.out / "typo_profiles.json", json.dumps(
            {uid: p.to_json() for uid, p in self.typos.items()}, indent=1, sort_keys=True))

    def summarise(self, records: ItemRecords[BuildRecord], tally: Tally) -> BuildMetrics:
        return BuildMetrics.model_validate({
            **summarise(self.results, self.profiles, self.typos, self.source),
            "complete": tally.complete, "failures": tally.failures + tally.step_failures,
            "out": str(self.options.out)})

    def summary_line(self, metrics: BuildMetrics) -> str:
        options = self.options
        writer = (options.models["generator"].spec if options.candidates == "model"
                  else "templates")
        return (f"Source: {metrics.origin} · candidates: {options.candidates} ({writer}) · "
                f"seed {options.seed}")

    def report_sections(self, report: HtmlReport, metrics: BuildMetrics,
                        records: ItemRecords[BuildRecord]) -> None:
        report_sections(report, metrics, self.options)

    async def aclose(self) -> None:
        await self.roles.aclose()

    async def _typo_profiles(self, corrector: Corrector, users: list[str]
                             ) -> dict[str, TypoProfile]:
        histories = self.source.histories

        async def profile(uid: str) -> TypoProfile | None:
            async def correct():
                return await corrector.correct(histories[uid])
            try:
                corrected = await self.steps.get(f"correct/{uid}", correct)
            except StepFailed:
                return None  # recorded; the user's typo steps wait for a rerun that succeeds
            return learn_profile(histories[uid], corrected, self.nlp)

        learned = await asyncio.gather(*(profile(uid) for uid in users))
        return {uid: p for uid, p in zip(users, learned, strict=True) if p is not None}

    async def _candidates(self, terms: list[str]) -> list[str]:
        if self.options.candidates == "templates":
            return template_candidates(terms)

        async def one(i: int) -> str:
            completion = await self.model.complete(
                candidate_messages(terms, FRAMES[i % len(FRAMES)]), temperature=0.9, seed=i,
                max_tokens=80)
            return clean_reply(completion.text)
        n = self.options.candidates_per_item
        return list(await asyncio.gather(*(one(i) for i in range(n))))

    async def run_item(self, build_item: BuildItem) -> BuildRecord:
        product, users = build_item.product, build_item.users
        item = {"asin": product.parent_asin, "users": users}
        terms = core_terms(product.title, product.text, self.nlp)
        if terms is None:
            return BuildRecord(**item, outcome="skipped", reason="fewer than 5 core terms")
        checked = [Candidate(text=t, rejected=check_candidate(t, terms, self.nlp))
                   for t in await self._candidates(terms)]
        valid = list(dict.fromkeys(c.text for c in checked if c.rejected is None))
        kept = [valid[i] for i in coherent_subset(
            self.embedder.encode(valid), self.options.similarity)] if valid else []
        item.update(terms=terms, candidates=checked, kept=kept)
        if len(kept) < 2:
            return BuildRecord(**item, outcome="skipped",
                               reason="fewer than 2 coherent candidates")
        vectors = self.profiles.vectors(kept, self.nlp)
        gaussians = self.profiles.gaussians
        choice = select_pair(users, gaussians, vectors,
                             SelectionOptions(self.options.region, self.options.margin))
        if choice is None:
            # How close each user's nearest candidate came, to show what --region would admit.
            nearest = {u: float(gaussians[u].mahalanobis_sq(vectors).min()) for u in users}
            return BuildRecord(**item, outcome="skipped", reason="no user pair passes the gates",
                               nearest_mahalanobis_sq=nearest)
        queries = [BuiltQuery(uid=uid, syntax_query=kept[index])
                   for uid, index in ((choice.user_a, choice.candidate_a),
                                      (choice.user_b, choice.candidate_b))]
        return BuildRecord(**item, selection=choice.to_json(), queries=queries, outcome="ok")

    async def _with_typos(self, item: BuildRecord | ItemFailure) -> BuildRecord | ItemFailure:
        """The item with each chosen query's typo versions, each a step of its own: a user whose
        correction failed gets them on the rerun that corrects their texts."""
        if isinstance(item, ItemFailure) or item.outcome != "ok":
            return item
        queries = []
        for query in item.queries:
            profile = self.typos.get(query.uid)
            if profile is None:  # the correction step failed and is recorded; a rerun fills it
                typed = _versions(None, None, "the user's spelling correction failed")
            else:
                async def compute(query=query, profile=profile):
                    return self._typed(item.asin, query, profile)
                typed = await self.steps.get(f"typo/{item.asin}/{query.uid}", compute)
            queries.append(query.model_copy(update=typed))
        return item.model_copy(update={"queries": queries})

    def _typed(self, asin: str, query: BuiltQuery, profile: TypoProfile) -> dict:
        """The user's typo version of their query and a random-typo version editing as many
        words (one edit each), or why either is missing."""
        options, clean, uid = self.options, query.syntax_query, query.uid
        if not profile.edits:
            return _versions(None, None, "the user has no observed typos")
        personal = self._first_passing(clean, lambda rng: inject_typos(
            clean, profile, self.nlp, rng, max_words=options.max_typo_words),
            f"{options.seed}/{asin}/{uid}/personal")
        baseline = personal and self._first_passing(clean, lambda rng: inject_random(
            clean, len(personal.edits), rng), f"{options.seed}/{asin}/{uid}/random")
        return _versions(personal, baseline, f"no version kept cosine >= {options.similarity} "
                                             f"in {options.typo_attempts} draws")

    def _first_passing(self, clean: str, draw, seed: str):
        """The first of up to --typo-attempts seeded draws that edits something and keeps the
        similarity gate, or None."""
        for attempt in range(self.options.typo_attempts):
            injected = draw(random.Random(f"{seed}/{attempt}"))
            if injected.edits and passes_similarity(clean, injected.text, self.embedder.encode,
                                                    self.options.similarity):
                return injected
        return None


def run_build(options: BuildOptions, *, source: BuildSource | None = None,
              progress: bool = True) -> Outcome:
    outcome = run_lens(PqbBuild(options, source), options.out, progress=progress)
    _explain_empty(outcome.metrics, options.candidates)
    return outcome


def _explain_empty(summary: BuildMetrics, candidates: str) -> None:
    """Say which stage left the dataset empty, and what to change."""
    if summary.queries or not summary.items:
        return
    if candidates == "model" and summary.candidates and not summary.candidates_valid:
        print("no candidate kept the 5-core-term constraint: use a stronger --model, or "
              "--candidates templates (the bundled SmolLM2-135M cannot keep it)", file=sys.stderr)
    elif summary.skipped_by_reason.get("no user pair passes the gates"):
        print("no user pair passed the gates: records.jsonl shows each item's "
              "nearest_mahalanobis_sq; a larger --region admits more", file=sys.stderr)


def _items(source: BuildSource, profiled: list[str], options: BuildOptions) -> list[BuildItem]:
    """Items with at least two profiled users, most-owned first (ties by id), capped."""
    known = set(profiled)
    chosen = [BuildItem(product, profiled if options.pair_users == "all"
                        else sorted(set(product.users) & known)) for product in source.products]
    chosen = sorted((i for i in chosen if len(i.users) >= 2),
                    key=lambda i: (-len(i.users), i.product.parent_asin))
    return chosen[:options.max_items] if options.max_items else chosen


def _versions(personal, baseline, reason: str) -> dict:
    """A query's typo versions as queries.json holds them; `reason`: why one is missing."""
    return {"typo_query": personal and personal.text, "typo_edits": _edits(personal),
            "typo_skipped": None if personal else reason,
            "random_typo_query": baseline and baseline.text, "random_edits": _edits(baseline),
            "random_skipped": None if baseline else reason}


def _edits(injected) -> list[dict]:
    return [edit._asdict() for edit in injected.edits] if injected else []


def _write_dataset(out: Path, source: BuildSource,
                   results: list[BuildRecord | ItemFailure]) -> None:
    queries = {r.asin: [{"asin": r.asin, **q.model_dump(exclude_unset=True)} for q in r.queries]
               for r in _built(results) if r.outcome == "ok"}
    write_atomic(out / "queries.json", json.dumps(queries, indent=1, ensure_ascii=False))
    write_atomic(out / "corpus.jsonl", "".join(
        json.dumps(p.meta, ensure_ascii=False) + "\n" for p in source.products))


def _built(results: list[BuildRecord | ItemFailure]) -> list[BuildRecord]:
    return [r for r in results if not isinstance(r, ItemFailure)]


def summarise(results: list[BuildRecord | ItemFailure], profiles: StyleProfiles,
              typos: dict[str, TypoProfile], source: BuildSource) -> dict:
    """The build's numbers, each countable from records.jsonl and the written files."""
    built = _built(results)
    statuses = Counter("failed" if isinstance(r, ItemFailure) else r.outcome for r in results)
    reasons = Counter(r.reason for r in built if r.outcome == "skipped")
    candidates = [c for r in built for c in r.candidates]
    queries = [q for r in built if r.outcome == "ok" for q in r.queries]
    summary = {
        "origin": source.origin, "users": len(source.histories),
        "profiled_users": len(profiles.gaussians), "products": len(source.products),
        "items": len(results), "items_by_status": dict(statuses),
        "skipped_by_reason": dict(reasons),
        "candidates": len(candidates),
        "candidates_valid": sum(c.rejected is None for c in candidates),
        "candidates_kept": sum(len(r.kept) for r in built),
        "queries": len(queries),
        "typo_queries": sum(q.typo_query is not None for q in queries),
        "random_typo_queries": sum(q.random_typo_query is not None for q in queries),
        "typo_skipped_by_reason": dict(Counter(q.typo_skipped for q in queries
                                               if q.typo_skipped)),
        "random_skipped_by_reason": dict(Counter(q.random_skipped for q in queries
                                                 if q.random_skipped and q.typo_query)),
        "sentences": profiles.sentences,
        "typo_rates": {uid: p.rates for uid, p in sorted(typos.items())},
    }
    if source.typo_truth:
        summary["typo_recovery"] = typo_recovery(typos, source.typo_truth)
    return summary


def typo_recovery(learned: dict[str, TypoProfile], truth: dict[str, dict[str, float]]) -> dict:
    """Mean absolute error between learned and true per-kind rates, over users with both."""
    users = sorted(set(learned) & set(truth))
    errors = [abs(learned[u].rates.get(k, 0.0) - rate)
              for u in users for k, rate in truth[u].items()]
    return {"users": len(users), "mean_absolute_error":
            sum(errors) / len(errors) if errors else None}
