"""prefq-bench's JSONL, as stellalisy/prefq-bench writes it: read, validated, made into instances.

A file starts with `{"type": "metadata", ...}`; then one `personalized_problem` per line:
problem_id, original_problem (the source benchmark's own row), persona, persona_preferences
(keyed by name) and evaluation_rubric.evaluation_criteria ({preference, description, weight,
levels: [{score, description}]}). The task of a record is its file's metadata `dataset`, else
the file's stem.

Validation lists every invalid record with its field. Warnings (a missing weight defaulted to
1/n as the release does, weights far from summing to 1, weights renormalised) are kept per
instance for the report.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from personalens.errors import InputError
from personalens.input_files import read_jsonl_objects
from personalens.lenses.prefdisco.problems import Problem, ProblemShapeError, normalise
from personalens.runs import write_atomic

WEIGHT_SUM_TOLERANCE = 0.05  # a sum further than this from 1 is reported
SCORE_RANGE = (1, 5)


@dataclass(frozen=True)
class Criterion:
    preference: str
    description: str
    levels: list[dict]
    weight: float  # as given, or the release's default 1/n when missing
    normalised_weight: float  # weight / sum of weights: these sum to exactly 1


@dataclass(frozen=True)
class Instance:
    task: str
    problem_id: str
    problem: Problem
    persona: dict | str
    preferences: dict[str, dict]
    criteria: list[Criterion]
    warnings: list[str] = field(default_factory=list)
    renormalised: bool = False  # the given weights did not sum to exactly 1

    @property
    def key(self) -> str:
        return f"{self.task}/{self.problem_id}"


@dataclass(frozen=True)
class Invalid:
    where: str
    problem_id: str | None
    field: str
    problem: str

    def line(self) -> str:
        record = f" (problem_id {self.problem_id})" if self.problem_id is not None else ""
        return f"{self.where}{record} field {self.field}: {self.problem}"


@dataclass
class Dataset:
    instances: list[Instance]
    invalid: list[Invalid]
    files: list[Path]


def data_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(path.rglob("*.jsonl"))
        if files:
            return files
        raise InputError("no .jsonl files in the folder", where=str(path))
    raise InputError("data file or folder not found", where=str(path))


def load(path: Path) -> Dataset:
    """Every record of a file or folder; invalid ones listed, not raised (see `require_valid`)."""
    files = data_files(path)
    instances: list[Instance] = []
    invalid: list[Invalid] = []
    seen: dict[str, str] = {}
    for file in files:
        task = file.stem
        for number, (where, row) in enumerate(read_jsonl_objects(file, "prefq-bench")):
            if number == 0 and row.get("type") == "metadata":
                task = str(row.get("dataset") or task)
                continue
            if row.get("type", "personalized_problem") != "personalized_problem":
                continue
            built = _instance(row, task, where)
            if isinstance(built, Invalid):
                invalid.append(built)
            elif built.key in seen:
                invalid.append(Invalid(where, built.problem_id, "problem_id",
                                       f"repeats {seen[built.key]} in task {task!r}"))
            else:
                seen[built.key] = where
                instances.append(built)
    return Dataset(instances, invalid, files)


def require_valid(dataset: Dataset, *, skip_invalid: bool) -> None:
    """Bad input unless every record is valid or the user asked to skip the invalid ones."""
    if not dataset.instances:
        reasons = "; ".join(i.line() for i in dataset.invalid[:3])
        raise InputError(f"no valid prefq-bench record{': ' + reasons if reasons else ''}")
    if dataset.invalid and not skip_invalid:
        lines = "\n  ".join(i.line() for i in dataset.invalid)
        raise InputError(f"{len(dataset.invalid)} invalid record(s) (--skip-invalid runs the "
                         f"rest):\n  {lines}")


def _instance(row: dict, task: str, where: str) -> Instance | Invalid:
    pid = None if row.get("problem_id") is None else str(row["problem_id"])

    def bad(field_name: str, problem: str) -> Invalid:
        return Invalid(where, pid, field_name, problem)

    if pid is None or not pid.strip():
        return bad("problem_id", "missing")
    try:
        problem = normalise(row.get("original_problem"), task)
    except ProblemShapeError as exc:
        return bad("original_problem", str(exc))
    preferences = row.get("persona_preferences")
    if not isinstance(preferences, dict) or not preferences:
        return bad("persona_preferences", "must be a non-empty object keyed by preference name")
    for name, preference in preferences.items():
        if not isinstance(preference, dict) or "value" not in preference:
            return bad(f"persona_preferences.{name}", "must be an object with a value")
    rubric = row.get("evaluation_rubric")
    criteria = rubric.get("evaluation_criteria") if isinstance(rubric, dict) else None
    if not isinstance(criteria, list) or not criteria:
        return bad("evaluation_rubric.evaluation_criteria", "must be a non-empty list")
    try:
        built, warnings, renormalised = _criteria(criteria, preferences)
    except _BadField as exc:
        return bad(*exc.args)
    return Instance(task, pid, problem, row.get("persona", {}), preferences, built, warnings,
                    renormalised)


class _BadField(ValueError):
    """args: (field, problem)"""


def _criteria(criteria: list, preferences: dict) -> tuple[list[Criterion], list[str], bool]:
    """(criteria, warnings, renormalised); raises _BadField at the first invalid field."""
    warnings, weights = [], []
    for index, criterion in enumerate(criteria):
        at = f"evaluation_rubric.evaluation_criteria[{index}]"
        if not isinstance(criterion, dict):
            raise _BadField(at, "must be an object")
        if criterion.get("preference") not in preferences:
            raise _BadField(f"{at}.preference", f"{criterion.get('preference')!r} names no "
                            "preference of this record")
        weight = criterion.get("weight")
        if weight is None:
            weight = 1.0 / len(criteria)
            warnings.append(f"{criterion['preference']}: no weight, 1/{len(criteria)} used")
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise _BadField(f"{at}.weight", f"{weight!r} is not a number")
        if weight < 0:
            raise _BadField(f"{at}.weight", f"{weight} is negative")
        for level_index, level in enumerate(criterion.get("levels") or []):
            score = level.get("score") if isinstance(level, dict) else None
            if isinstance(score, bool) or not isinstance(score, int | float) or not (
                    SCORE_RANGE[0] <= score <= SCORE_RANGE[1]):
                raise _BadField(f"{at}.levels[{level_index}].score", f"{score!r} is not in 1-5")
        weights.append(float(weight))
    total = sum(weights)
    if total <= 0:
        raise _BadField("evaluation_rubric.evaluation_criteria", "the weights sum to 0")
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        warnings.append(f"weights sum to {total:.3g}, far from 1")
    built = [Criterion(c["preference"], str(c.get("description", "")), list(c.get("levels") or []),
                       w, w / total) for c, w in zip(criteria, weights, strict=True)]
    return built, warnings, total != 1.0


def write(path: Path, dataset_name: str, rows: list[dict], metadata: dict) -> None:
    """A prefq-bench file: the metadata line, then one personalized_problem per row."""
    lines = [json.dumps({"type": "metadata", "dataset": dataset_name, **metadata})]
    lines += [json.dumps({"type": "personalized_problem", **row}) for row in rows]
    write_atomic(path, "\n".join(lines) + "\n")
