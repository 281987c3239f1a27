"""`personalens prisk build`: PRISK's assembled (profile, memory, query) records, offline.

Setup (steps before the plan): profiles, from a population (`--population`; selection
`profiles/selected`, completions `profile/population/<id>`) or generated (`profile/candidate/<i>`,
then farthest-point selection `profiles/selected`); optional generated IRP templates
(`template/<i>`, dedup decisions `templates/dedup`). The plan: per risk, `per_risk` (query,
profile) pairs drawn with a seeded RNG, each an item `record/<risk>_<n>`. An item gathers the
persona's attribute conversations (`memory/<persona>/<attribute>`; the preference one keyed by
the preference's digest, since IRP and framing records replace it with their template's) and its
decoy (`decoy/<record>/<attempt>`). `finish` writes `<out>/data/<risk>.json` with
`records.write_records`. Every model-written value is a step, so a killed build resumes and a
rerun writes byte-identical files.
"""

import asyncio
import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from personalens.errors import InputError
from personalens.lenses.prisk.benchmark_rewrite import conversational
from personalens.lenses.prisk.memory_builder import DecoyTarget, attribute_conversation, build_decoy
from personalens.lenses.prisk.options import BuildOptions
from personalens.lenses.prisk.profile_source import (
    PopulationPerson,
    Profile,
    age_hints,
    complete_person,
    describe,
    draw_profile,
    farthest_points,
    people_from_population,
)
from personalens.lenses.prisk.query_sources import (
    FLAGS,
    SHIPPED,
    Query,
    draft_template,
    generated_template,
    greedy_dedup,
    load_queries,
)
from personalens.lenses.prisk.records import (
    ATTRIBUTES,
    RISKS,
    BuildRecord,
    PriskRecord,
    turns_text,
    write_records,
)
from personalens.models.role_set import RoleSet
from personalens.population.profile_reader import profile_files
from personalens.report import BrowserEntry, BrowserItems, HtmlReport, failure_fields, first_entries
from personalens.retrieval import DenseRetriever
from personalens.retrieval.dense import BUNDLED_MINILM
from personalens.runs import (
    ItemFailure,
    ItemRecords,
    Lens,
    Metrics,
    Outcome,
    RecordedFailure,
    RunContext,
    RunIdentity,
    StepFailed,
    Tally,
    fingerprint,
    run_lens,
)
from personalens.runs.blocking import run_blocking
from personalens.runs.settled import gather_settled


@dataclass(frozen=True)
class Item:
    record_id: str
    query: Query | None
    profile_index: int
    # The failed setup step this record depends on (its risk's generated templates): the
    # record fails with it, and the other risks' records are built.
    blocked: RecordedFailure | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        return f"record/{self.record_id}"

    @property
    def risk(self) -> str:
        return self.record_id.rsplit("_", 1)[0]


def pair(queries: list[Query], profiles: int, count: int,
         rng: np.random.Generator) -> list[tuple[Query, int]]:
    """`count` distinct (query, profile index) pairs: each round takes every query once (in a
    drawn order), each query meeting a profile it has not met yet."""
    met = [rng.permutation(profiles) for _ in queries]
    order = rng.permutation(len(queries))
    pairs = [(queries[q], int(met[q][r])) for r in range(profiles) for q in order]
    return pairs[:count]


class PriskBuildMetrics(Metrics):
    out: str
    records: int
    by_risk: dict[str, int]
    planned_by_risk: dict[str, int]
    queries: dict[str, int]
    profiles: int
    profile_source: str
    profile_candidates: int
    profile_redraws: int
    profiles_dropped: int
    population_minors_skipped: int
    templates_generated: int
    templates_rejected: int
    memory_conversations: int
    decoys: int
    decoy_regenerations: int
    decoy_rejections: dict[str, int]
    decoy_failures: int
    decoy_similarity_mean: float | None
    rewrites: int  # benchmark questions asked in their conversational rewrite
    rewrites_kept_original: int  # no draft kept every number: the original wording stays
    failures: list[ItemFailure]

    def headlines(self) -> list[str]:
        risks = ", ".join(f"{risk} {n}" for risk, n in self.by_risk.items())
        dropped = f" ({self.profiles_dropped} candidates dropped)" if self.profiles_dropped \
            else ""
        # The data folder exists only once a record is written.
        data = (f"data: {Path(self.out) / 'data'} ({self.records} records: {risks})"
                if self.records else "data: none written (no record was built)")
        return [f"{data}; {self.profiles} {self.profile_source} profiles{dropped}",
                f"decoys: {self.decoys} passed, {self.decoy_regenerations} regenerated, "
                f"{self.decoy_failures} never passed; profile redraws {self.profile_redraws}"]


EMBEDDER = BUNDLED_MINILM  # decoy similarity, template dedup, profile diversity


class PriskBuild(Lens[BuildOptions, BuildRecord, PriskBuildMetrics]):
    """The build's steps: the profiles and generated templates (in setup, before the plan),
    then each record's memory conversations and decoy."""

    name = "prisk build"
    title = "personalens · PRISK dataset build"
    concurrency = 8
    record_model = BuildRecord

    def __init__(self, options: BuildOptions):
        """Every input is read and checked here, before the run directory exists."""
        super().__init__(options, options.models.prices)
        self.queries = {risk: load_queries(risk, options.query_file(risk),
                                           aita_verdict=options.aita_verdict)
                        for risk in options.risks}
        self.people: list[PopulationPerson] = []
        self.minors = 0
        if options.population is not None:
            self.people, self.minors = people_from_population(options.population)
            if not self.people:
                raise InputError("the population holds no adult profile",
                                 where=str(options.population))
        self._check_pairs()
        self.roles = RoleSet(options.models.resolved(BuildOptions.roles), self.ledger)
        self.generator, self.judge = self.roles["generator"], self.roles["judge"]
        self.encoder = DenseRetriever(EMBEDDER)
        self.profiles: list[Profile] = []
        self.candidates: list[dict] = []
        self.templates_generated = self.templates_rejected = 0
        self.profile_failures: dict[int, StepFailed] = {}  # profile index -> its failed step
        self._memory: dict[str, asyncio.Future] = {}

    def _check_pairs(self) -> None:
        profiles = min(self.options.profiles, len(self.people) or self.options.profiles)
        for risk, queries in self.queries.items():
            if self.options.per_risk > len(queries) * profiles:
                where = self.options.query_file(risk) or SHIPPED[risk]
                raise InputError(f"--per-risk {self.options.per_risk} is more than the "
                                 f"{len(queries)} queries x {profiles} profiles can pair; "
                                 f"lower it or give more queries with {FLAGS[risk]}",
                                 where=str(where))

    def identity(self) -> RunIdentity:
        files = [(self.options.query_file(r) or SHIPPED[r]).resolve() for r in self.options.risks]
        if self.options.population:
            files += profile_files(self.options.population.resolve())
        digest = hashlib.sha256("".join(fingerprint([f], f.parent) for f in files).encode())
        return RunIdentity(options=self.options, dataset_hash=digest.hexdigest(),
                           seeds={"pairing": self.options.seed}, models=self.roles.specs(),
                           endpoints=self.roles.endpoints())

    async def encode(self, texts: list[str]) -> np.ndarray:
        return await run_blocking(self.encoder.encode, texts)

    # --- before the plan: profiles, generated templates, the pairing --------------------------

    async def setup(self, context: RunContext) -> None:
        self.steps, self.items = context.steps, []
        try:
            self.profiles = await (self._population_profiles() if self.people
                                   else self._generated_profiles())
        except StepFailed:
            return  # recorded as a failed step; nothing is planned until a rerun gets past it
        templates_failed = None
        if self.options.generate_templates:
            try:
                await self._generated_templates()
            except StepFailed as exc:  # only the IRP records depend on the generated templates
                templates_failed = exc
        self.items = [item for risk in self.options.risks for item in (
            self._blocked(risk, templates_failed) if risk == "irp" and templates_failed
            else self._pairs(risk))]

    def plan(self) -> list[Item]:
        return self.items

    async def _generated_profiles(self) -> list[Profile]:
        options = self.options
        hints = age_hints(options.candidate_count, options.seed)
        drawn = await asyncio.gather(*(self.steps.get(
            f"profile/candidate/{i}", lambda i=i: draw_profile(
                self.generator, i, hints[i], attempts=options.profile_attempts,
                temperature=options.temperature, seed=options.seed))
            for i in range(options.candidate_count)), return_exceptions=True)
        _raise_unrecorded(drawn)
        # A candidate whose step failed (recorded, listed) is left out of the pool like one
        # that broke the constraints: the selection is made from the others.
        self.candidates = [_FAILED_CANDIDATE if isinstance(c, StepFailed) else c for c in drawn]
        valid = [i for i, c in enumerate(self.candidates) if c["attributes"]]

        async def select() -> list[int]:
            vectors = await self.encode([describe(self.candidates[i]["attributes"])
                                         for i in valid])
            return [valid[j] for j in farthest_points(vectors, options.profiles)] if valid \
                else []
        chosen = await self.steps.get("profiles/selected", select)
        return [Profile(f"persona_{i + 1:04d}", "synthetic", self.candidates[i]["attributes"])
                for i in chosen]

    async def _population_profiles(self) -> list[Profile]:
        people = self.people

        async def select() -> list[str]:
            vectors = await self.encode([f"{p.context}\n{describe(p.known)}" for p in people])
            return [people[j].persona_id for j in farthest_points(vectors,
                                                                  self.options.profiles)]
        chosen = await self.steps.get("profiles/selected", select)
        by_id = {p.persona_id: p for p in people}
        filled = await asyncio.gather(*(self.steps.get(
            f"profile/population/{pid}", lambda p=by_id[pid]: complete_person(
                self.generator, p, temperature=self.options.temperature,
                seed=self.options.seed)) for pid in chosen), return_exceptions=True)
        _raise_unrecorded(filled)
        # A person whose completion failed keeps their place (the pairing does not move);
        # only the records paired with them fail, with that step's failure.
        self.profile_failures = {i: values for i, values in enumerate(filled)
                                 if isinstance(values, StepFailed)}
        return [Profile(pid, "population", {**by_id[pid].known, **values}
                        if i not in self.profile_failures else dict(by_id[pid].known))
                for i, (pid, values) in enumerate(zip(chosen, filled, strict=True))]

    async def _generated_templates(self) -> None:
        options, existing = self.options, self.queries["irp"]
        drafts = await gather_settled(*(self.steps.get(f"template/{i}", lambda i=i: draft_template(
            self.generator, existing, i, temperature=options.temperature, seed=options.seed))
            for i in range(options.generate_templates)))

        async def decide() -> list[bool]:
            vectors = await self.encode([q.question for q in existing]
                                        + [d["query"] for d in drafts])
            return greedy_dedup(vectors[:len(existing)], vectors[len(existing):],
                                options.template_dedup)
        # Recorded too: a replay must not hinge on re-encoding a cosine near the cut-off.
        kept = await self.steps.get("templates/dedup", decide)
        generated = [generated_template(i, d) for i, (d, keep) in
                     enumerate(zip(drafts, kept, strict=True)) if keep]
        self.templates_generated, self.templates_rejected = len(generated), len(drafts) - \
            len(generated)
        self.queries["irp"] = existing + generated

    def _pairs(self, risk: str) -> list[Item]:
        # One generator per risk: adding or dropping a risk leaves the others' pairing as it was.
        rng = np.random.default_rng((self.options.seed, RISKS.index(risk)))
        pairs = pair(self.queries[risk], len(self.profiles), self.options.per_risk, rng)
        return [Item(f"{risk}_{n + 1:04d}", query, p) for n, (query, p) in enumerate(pairs)]

    def _blocked(self, risk: str, failure: StepFailed) -> list[Item]:
        """The risk's records, each failing with the setup step they depend on."""
        return [Item(f"{risk}_{n + 1:04d}", None, -1, failure)
                for n in range(self.options.per_risk)]

    async def run_item(self, item: Item) -> BuildRecord:
        if item.blocked is not None:
            raise item.blocked.with_data({"risk": item.risk, **item.blocked.data})
        profile, query = self.profiles[item.profile_index], item.query
        about = {"risk": query.risk, "record_id": item.record_id,
                 "persona_id": profile.persona_id, "query_id": query.query_id,
                 "question": query.question}
        if item.profile_index in self.profile_failures:
            failure = self.profile_failures[item.profile_index]
            raise failure.with_data({**failure.data, **about})
        rewrite = None
        if query.risk == "accuracy" and self.options.benchmark_questions == "conversational":
            query, rewrite = await conversational(
                self.generator, self.steps, query, attempts=self.options.rewrite_attempts,
                temperature=self.options.temperature, seed=self.options.seed)
        persona = profile.persona(query.preference)
        decoy_target = DecoyTarget(item.record_id, query.risk, persona, query.question,
                                   _shown(query), query.answer)
        *memory, decoy = await asyncio.gather(
            *(self._conversation(profile, a, query.preference) for a in ATTRIBUTES),
            build_decoy(self.generator, self.judge, self.encode, self.steps, decoy_target,
                        self.options), return_exceptions=True)
        _raise_unrecorded([*memory, decoy])
        failed = next((r for r in (*memory, decoy) if isinstance(r, RecordedFailure)), None)
        if failed is not None:
            # What the record did get, so the report can show the exchange up to the failure.
            raise failed.with_data({**failed.data, **about, "persona": persona,
                                    "memory": {a: _outcome(r) for a, r in
                                               zip(ATTRIBUTES, memory, strict=True)},
                                    "decoy_outcome": _outcome(decoy)})
        record = PriskRecord(
            record_id=item.record_id, persona_id=profile.persona_id, query_id=query.query_id,
            risk=query.risk, domain=query.domain, persona=persona,
            conversations=[*memory, decoy["conversation"]], question=query.question,
            subject=query.subject, choices=query.choices, answer=query.answer,
            verdict=query.verdict, sides=query.sides)
        return BuildRecord(risk=query.risk, record=record,
                           decoy={k: v for k, v in decoy.items() if k != "conversation"},
                           **({"rewrite": rewrite} if rewrite else {}))

    def _conversation(self, profile: Profile, attribute: str,
                      preference: str | None) -> asyncio.Future:
        """One memory step, shared by every record that needs it (computed once)."""
        # Only the preference conversation depends on the record: the rest are written from
        # the profile's own attributes, whichever record asks first.
        persona = profile.persona(preference if attribute == "preference" else None)
        key = memory_key(profile.persona_id, attribute, persona)
        if key not in self._memory:  # a failure stays with the records of this persona
            self._memory[key] = asyncio.ensure_future(self.steps.get(
                key, lambda: attribute_conversation(
                    self.generator, persona, attribute, turns=self.options.turns,
                    temperature=self.options.temperature, seed=self.options.seed)))
        return self._memory[key]

    def decoy_attempts(self) -> dict[str, list[dict]]:
        """record id -> its decoy drafts as recorded (checked or not), in attempt order.

        Counted from the steps, not from the records: a record that failed for another reason
        (a memory step) still holds the drafts its decoy went through."""
        drafts: dict[str, dict[int, dict]] = {}
        for key, step in self.steps.done.items():
            if key.startswith("decoy/"):
                _, record_id, attempt = key.split("/")
                drafts.setdefault(record_id, {})[int(attempt)] = step["value"]
        return {r: [d[a] for a in sorted(d)] for r, d in drafts.items()}

    def memory_of(self, about: PriskRecord | BuildRecord) -> list[tuple[str, list[dict] | None]]:
        """Each attribute conversation of a record: a built one's, else those its persona's
        steps hold (None where the step failed or never ran)."""
        if isinstance(about, PriskRecord):
            return [(c.focal_attribute, list(c.turns))
                    for c in about.conversations[:len(ATTRIBUTES)]]
        if not about.persona:
            return []
        done = self.steps.done
        return [(a, done[k]["value"]["turns"] if (k := memory_key(
            about.persona_id, a, about.persona)) in done else None) for a in ATTRIBUTES]


    async def finish(self, records: ItemRecords[BuildRecord]) -> None:
        by_risk: dict[str, list[PriskRecord]] = {}
        for record in records.ok():
            by_risk.setdefault(record.risk, []).append(record.record)
        data = self.options.out / "data"
        for risk in self.options.risks:
            built = sorted(by_risk.get(risk, []), key=lambda r: r.record_id)
            if not built:
                continue  # nothing to write (write_records needs at least one record)
            data.mkdir(parents=True, exist_ok=True)
            write_records(data / f"{risk}.json", built, dataset_name=f"personalens_prisk_{risk}",
                          sources=self._sources(risk))

    def _sources(self, risk: str) -> dict:
        given = self.options.query_file(risk)
        specs = self.roles.specs()
        return {"created_by": "personalens prisk build",
                "persona_source": (f"population {self.options.population}"
                                   if self.options.population else "synthetic"),
                "query_file": str(given) if given else f"shipped {SHIPPED[risk].name}",
                "pairing_mode": "random", "seed": self.options.seed,
                **({"benchmark_questions": self.options.benchmark_questions}
                   if risk == "accuracy" else {}),
                "persona_n": len(self.profiles), "query_n": len(self.queries[risk]),
                "generator": specs["generator"], "judge": specs["judge"]}

    def summarise(self, records: ItemRecords[BuildRecord], tally: Tally) -> PriskBuildMetrics:
        ok = list(records.ok())
        planned = {item.record_id for item in self.items}
        attempts = {r: drafts for r, drafts in self.decoy_attempts().items() if r in planned}
        drafts = [d for record_drafts in attempts.values() for d in record_drafts]
        rejections = Counter(d["check"] for d in drafts if not d["passed"])
        passed = [d["similarity"] for d in drafts if d["passed"]]
        return PriskBuildMetrics(
            out=str(self.options.out), records=len(ok),
            by_risk=dict(Counter(r.risk for r in ok)),
            planned_by_risk=dict(Counter(i.risk for i in self.items)),
            queries={risk: len(q) for risk, q in self.queries.items()},
            profiles=len(self.profiles) - len(self.profile_failures),
            profile_source="population" if self.people else "generated",
            profile_candidates=len(self.candidates),
            profile_redraws=sum(max(c["draws"] - 1, 0) for c in self.candidates),
            profiles_dropped=sum(c["attributes"] is None for c in self.candidates),
            population_minors_skipped=self.minors,
            templates_generated=self.templates_generated,
            templates_rejected=self.templates_rejected,
            memory_conversations=sum(k.startswith("memory/") for k in self.steps.done),
            decoys=len(passed), decoy_regenerations=sum(len(d) - 1 for d in attempts.values()),
            decoy_rejections={c: rejections.get(c, 0) for c in ("judge", "similarity")},
            decoy_failures=sum(f.kind == "decoy_rejected" for f in records.failures()),
            decoy_similarity_mean=round(float(np.mean(passed)), 4) if passed else None,
            rewrites=sum(1 for r in ok if r.rewrite and r.rewrite["kept"] == "rewrite"),
            rewrites_kept_original=sum(1 for r in ok
                                       if r.rewrite and r.rewrite["kept"] == "original"),
            failures=tally.failures + tally.step_failures)

    def summary_line(self, metrics: PriskBuildMetrics) -> str:
        specs = self.roles.specs()
        return (f"Generator: {specs['generator']} · judge: {specs['judge']} · out: "
                f"{self.options.out}")

    def report_sections(self, report: HtmlReport, metrics: PriskBuildMetrics,
                        records: ItemRecords[BuildRecord]) -> None:
        report.heading("Built records")
        report.table(["risk", "queries available", "planned", "written"],
                     [[risk, metrics.queries.get(risk, 0), metrics.planned_by_risk.get(risk, 0),
                       metrics.by_risk.get(risk, 0)] for risk in self.options.risks])
        if self.options.benchmark_questions == "conversational" and "accuracy" in \
                self.options.risks:
            report.paragraph(f"Benchmark questions rewritten as conversational questions (gold "
                             f"answers kept): {metrics.rewrites} asked in their rewrite, "
                             f"{metrics.rewrites_kept_original} kept their original wording "
                             f"(no draft kept every number).")
        report.heading("Profiles")
        report.paragraph(_profile_note(metrics))
        report.table(["persona", "age", "gender", "education", "profession"],
                     [[p.persona_id, *(p.attributes.get(a, "(failed)") for a in
                                       ("age", "gender", "education_level", "profession"))]
                      for p in self.profiles])
        report.heading("Memory and decoys")
        report.paragraph(
            f"{metrics.memory_conversations} attribute conversations. Decoys must stay "
            f"within cosine {self.options.decoy_max_similarity:g} of their query and be "
            f"judged not to answer it: {metrics.decoys} passed "
            f"({_mean_cosine(metrics.decoy_similarity_mean)}), "
            f"{metrics.decoy_regenerations} regenerations "
            f"({metrics.decoy_rejections['judge']} judged to answer, "
            f"{metrics.decoy_rejections['similarity']} too similar), "
            f"{metrics.decoy_failures} never passed (failed records).")

    def browser(self, records: ItemRecords[BuildRecord]) -> BrowserItems:
        """One entry per planned record: the query and persona it pairs, each memory
        conversation (or that its step failed), every decoy draft with the similarity and the
        judge's verdict, and for a failed record the failure and the steps it came through."""
        decoys = self.decoy_attempts()

        def entries() -> Iterator[BrowserEntry]:
            for item in records:
                failure = item if isinstance(item, ItemFailure) else None
                record = records.produced(item) if failure else item
                # What the record is about: the built record, else what its failure says.
                about = (record.record or record) if record is not None else None
                record_id = (about and about.record_id) or item.key.removeprefix("record/")
                question = (about and about.question) or ""
                fields = [("query", question)]
                if record is not None and record.rewrite:
                    fields += _rewrite_fields(record.rewrite)
                if about and about.persona:
                    fields.append(("persona", "\n".join(f"{k}: {v}"
                                                        for k, v in about.persona.items())))
                if failure:
                    fields += failure_fields(failure)
                for attribute, turns in self.memory_of(about) if about else []:
                    fields.append((f"memory: {attribute}", turns_text(turns) if turns is not None
                                   else "(not written: its step failed or never ran)"))
                for n, draft in enumerate(decoys.get(record_id, [])):
                    fields.append((f"decoy draft {n}", turns_text(draft["turns"])))
                    fields.append((f"decoy draft {n} checks", _decoy_checks(draft)))
                yield BrowserEntry(title=f"{record_id} · {question[:80]}",
                                   facets={"risk": (about and about.risk) or "",
                                           "status": "failed" if failure else "ok"},
                                   fields=fields)
        return first_entries(enumerate(entries()), ["risk", "status"])

    async def aclose(self) -> None:
        await self.roles.aclose()
        self.encoder.close()


def memory_key(persona_id: str, attribute: str, persona: dict[str, str]) -> str:
    """The step of a persona's conversation about `attribute` (the preference one keyed by the
    preference itself, since IRP and framing records bring their template's)."""
    key = f"memory/{persona_id}/{attribute}"
    if attribute == "preference":
        key += "/" + hashlib.sha256(persona["preference"].encode()).hexdigest()[:12]
    return key


_FAILED_CANDIDATE = {"attributes": None, "draws": 0}  # its step failed: no draft


def _raise_unrecorded(results: list) -> None:
    """Gathered results: an exception that is not a recorded failure is a bug, raised."""
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, RecordedFailure):
            raise result


def _outcome(result: object) -> str:
    if isinstance(result, StepFailed):
        return f"failed: {result.key}"
    if isinstance(result, RecordedFailure):
        return f"failed: {result.failure.kind}"
    return "written"


def _shown(query: Query) -> str:
    """The question as its user sees it: a choice question with its options."""
    options = "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(query.choices))
    return f"{query.question}\n{options}" if options else query.question


def _decoy_checks(draft: dict) -> str:
    lines = [f"cosine to the query {draft['similarity']:.3f}"]
    judge = draft.get("judge")
    if judge:
        lines.append(f"judge: answers the query {judge['answers_query']}; reason: "
                     f"{judge['reason']}; evidence: \"{judge['evidence']}\" "
                     f"({'found' if judge['evidence_found'] else 'not found'} in the "
                     "conversation)")
    elif draft.get("answers_query") is not None:
        lines.append(f"judge: answers the query {draft['answers_query']}")
    lines.append("passed" if draft["passed"] else f"rejected ({draft['check']}): "
                                                  f"{draft['reason']}")
    return "\n".join(lines)


def _rewrite_fields(rewrite: dict) -> list[tuple[str, str]]:
    fields = [("benchmark question (original)", rewrite["original"])]
    for n, draft in enumerate(rewrite["drafts"]):
        fields.append((f"conversational rewrite {n}", f"{draft['question']}\n"
                       + (f"rejected: {draft['problem']}" if draft["problem"] else "kept")))
    if rewrite["kept"] == "original":
        fields.append(("asked as", "the original wording (no rewrite kept every number)"))
    return fields


def _mean_cosine(mean: float | None) -> str:
    return (f"mean cosine to their query {mean:.3f}" if mean is not None else
            "no mean cosine: no decoy passed")


def _profile_note(metrics: PriskBuildMetrics) -> str:
    if metrics.profile_source == "population":
        return (f"{metrics.profiles} profiles chosen from the population by farthest-point "
                f"sampling ({metrics.population_minors_skipped} minors left out); fields the "
                "population lacks were written by the generator.")
    return (f"{metrics.profiles} profiles chosen by farthest-point sampling from "
            f"{metrics.profile_candidates} candidates; {metrics.profile_redraws} drafts were "
            f"redrawn for breaking an age/education/profession constraint and "
            f"{metrics.profiles_dropped} candidates never obeyed them (dropped).")


def run_build(options: BuildOptions, *, progress: bool = True) -> Outcome:
    return run_lens(PriskBuild(options), options.out, progress=progress)
