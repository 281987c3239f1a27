"""A finished `prefdisco eval` run as the judge audit reads it: every criterion verdict that
feeds PrefAlign (1-5), and every judged correctness (yes/no: every answer's under
`--correctness judge`, an open-ended gold's under `rules`), asked again with the run's judge
settings (temperatures, attempts, scoring mode).

The lens's own probes: PrefAlign, an answer the judge scored high (4-5) on a criterion is judged
again against the opposite of the user's value, and must not score high again; correctness,
the reference answer itself must be judged correct.
"""

from pathlib import Path
from typing import Any

from personalens.lenses.judged import JudgedRun, JudgedVerdict, Probe, ProbeFamily, Variant
from personalens.lenses.prefdisco import scoring
from personalens.lenses.prefdisco.evaluation import judge_correctness, rubric
from personalens.lenses.prefdisco.protocol import problem_text
from personalens.lenses.prefdisco.records import PrefdiscoRecord
from personalens.lenses.prefdisco.release_format import Instance, load
from personalens.models import ChatModel, ModelCallFailed
from personalens.models.rubric_judge import RubricCriterion, UnparseableVerdict, judge_criterion

HIGH = 4  # a criterion score at or above this says the answer fits the user's value
SEED_STRIDE = 100  # a fresh sample's seeds start here times its number


def opposite(criterion: RubricCriterion) -> RubricCriterion:
    """The criterion against the opposite of the user's value (the value's reason dropped: it
    argued for the value)."""
    return RubricCriterion(criterion.name, criterion.description, criterion.levels,
                           f"the opposite of this: {criterion.value}", None, criterion.material)


def _material(criterion: RubricCriterion) -> str:
    lines = [f"This user's preference: {criterion.value}"]
    if criterion.context:
        lines.append(f"Why it matters to them: {criterion.context}")
    return "\n".join(lines)


class PrefdiscoJudgedRun(JudgedRun):
    metrics = {"prefalign": "PrefAlign criteria (1-5)", "correctness": "correctness (yes/no)"}
    published = "PrefDisco: Fleiss' kappa 0.463 among annotators on attribute relevance"
    families = (
        ProbeFamily("opposite_value", "an answer scored 4-5 on a criterion, judged again against "
                    "the opposite of the user's value, does not score 4-5 again",
                    ("prefalign",)),
        ProbeFamily("reference", "the reference answer itself is judged correct",
                    ("correctness",)),
    )

    def __init__(self, run: Path, manifest: dict[str, Any]):
        super().__init__(run, manifest)
        data = self.data_path().resolve()
        dataset = load(data)
        self.check_data(dataset.files, data.parent if data.is_file() else data)
        self.instances: dict[str, Instance] = {i.key: i for i in dataset.instances}
        self.attempts = int(self.config.get("attempts", 3))
        self.temperature = float(self.config.get("judge_temperature", 0.0))
        # A run from before the option asked its correctness judge at the judge's temperature.
        self.correctness_temperature = float(self.config.get("correctness_temperature",
                                                             self.temperature))
        self.mode = str(self.config.get("scoring", "strict"))

    def verdicts(self) -> list[JudgedVerdict]:
        out: list[JudgedVerdict] = []
        for record in self.records(PrefdiscoRecord).ok():
            instance = self.instances.get(record.instance)
            if instance is None or record.response is None or record.dropped:
                continue
            item = f"{record.instance}/{record.condition}"
            for criterion in instance.criteria:
                recorded = next((c for c in record.criteria
                                 if c.preference == criterion.preference), None)
                if recorded is not None:
                    out.append(self._criterion_verdict(instance, item, record, criterion,
                                                       recorded))
            if record.correctness is not None and record.correctness.judged:
                out.append(self._correctness_verdict(instance, item, record))
        return out

    def _criterion_verdict(self, instance: Instance, item: str, record: PrefdiscoRecord,
                           criterion, recorded) -> JudgedVerdict:
        judged = rubric(instance, criterion)
        first = recorded.verdicts[0].score if recorded.verdicts else None
        return JudgedVerdict(
            key=f"{item}/prefalign/{criterion.preference}", item=item, metric="prefalign",
            criterion=criterion.preference, scale=(1, 5), question=instance.problem.question,
            response=record.response or "", score=None if first is None else float(first),
            description=criterion.description,
            levels=tuple((int(level["score"]), str(level.get("description", "")))
                         for level in criterion.levels),
            material=_material(judged),
            context={"instance": instance.key, "criterion": criterion.preference,
                     "weight": criterion.normalised_weight, "raw_weight": criterion.weight})

    def _correctness_verdict(self, instance: Instance, item: str,
                             record: PrefdiscoRecord) -> JudgedVerdict:
        problem = instance.problem
        return JudgedVerdict(
            key=f"{item}/correctness", item=item, metric="correctness", criterion="correctness",
            scale=(0, 1), question=problem.question, response=record.response or "",
            score=1.0 if record.correctness.correct else 0.0,
            description="Does the answer reach the reference answer?",
            levels=((1, "correct: it reaches the reference answer"),
                    (0, "not correct")),
            material=f"Problem:\n{problem_text(problem)}\nCorrect answer:\n{problem.gold}",
            context={"instance": instance.key})

    def probes(self, verdict: JudgedVerdict, first: float) -> list[Probe]:
        if verdict.metric == "prefalign" and first >= HIGH:
            return [Probe("opposite_value", Variant(verdict.response, change="opposite_value"),
                          "not_both_high", "judged against the opposite of the user's value")]
        if verdict.metric == "correctness":
            gold = self.instances[verdict.context["instance"]].problem.gold
            return [Probe("reference", Variant(str(gold)), "top",
                          "the reference answer, judged as the answer")]
        return []

    async def score(self, judge: ChatModel, verdict: JudgedVerdict,
                    variant: Variant) -> float | None:
        instance = self.instances[verdict.context["instance"]]
        seed = variant.sample * SEED_STRIDE
        if verdict.metric == "correctness":
            try:
                value = await judge_correctness(
                    judge, instance.problem, variant.response, attempts=self.attempts,
                    temperature=self.correctness_temperature, seed=seed, wording=variant.wording)
            except ModelCallFailed as exc:
                if exc.kind != "invalid_structured_output":
                    raise
                return None
            return float(value.correct)
        criterion = next(c for c in instance.criteria
                         if c.preference == verdict.context["criterion"])
        judged = rubric(instance, criterion)
        if variant.change == "opposite_value":
            judged = opposite(judged)
        try:
            result = await judge_criterion(judge, judged, variant.response, mode=self.mode,
                                           attempts=self.attempts, temperature=self.temperature,
                                           seed=seed, wording=variant.wording,
                                           swapped=variant.swapped)
        except UnparseableVerdict:  # release scoring: a reply with no JSON at all
            return None
        return result.score

    def headline(self, metric: str,
                 scored: list[tuple[JudgedVerdict, float | None]]) -> float | None:
        """PrefAlign: each answer's weighted mean over its criteria (normalised weights, as
        strict scoring), then the mean over answers; correctness: the share judged correct."""
        if metric != "prefalign":
            return super().headline(metric, scored)
        by_item: dict[str, list[tuple[float | None, float]]] = {}
        for verdict, score in scored:
            by_item.setdefault(verdict.item, []).append((score, verdict.context["weight"]))
        values = [v for v in (scoring.prefalign_strict(s) for s in by_item.values())
                  if v is not None]
        return sum(values) / len(values) if values else None
