"""Any lens as an Inspect Task: its plan as the dataset, its `run_item` as the solver, its
record's own scores per sample and its `summarise` as the metric.

A lens declares only what is its own (`lenses.commands.InspectTask`): how an item reads as a
sample (input text, persona and gold in metadata), which of a record's scores a sample shows,
which of its metrics are the headline figures, and which of its options the task takes. The
task `personalens/<lens>` is generated from that (`lens_task_function`).
"""

import inspect
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from personalens.inspect_tasks.lens_session import LensSession, inspect_options
from personalens.inspect_tasks.parameters import (
    declaration,
    docstring,
    task_arguments,
    task_parameters,
)
from personalens.lenses import LENSES
from personalens.lenses.commands import lens_commands, resolve
from personalens.runs import Lens, LensOptions, Metrics

# Where a sample's score keeps its record line (the import reads it back), and the task
# metadata's key for the lens's name.
RECORD = "personalens_record"
LENS = "personalens_lens"


@dataclass(frozen=True)
class LensTask:
    """What a lens's task supplies beyond the lens itself."""

    name: str  # the lens's name, as `personalens.lenses.LENSES` has it
    lens: Callable[[Any], Lens]  # the lens's class, built from its options
    options: type[LensOptions]  # the lens's run command's options
    sample: Callable[[Any], dict]  # item -> Sample fields (input, target, metadata)
    figures: Callable[[dict], dict[str, float]]  # record line -> a sample's score values
    headlines: Callable[[Metrics], dict[str, float]]  # the lens's metrics -> headline figures
    answer: Callable[[dict], str] = lambda line: ""  # record line -> the sample's shown answer

    @classmethod
    def of(cls, lens: str) -> "LensTask":
        """The registered lens's task, from its declaration (its functions imported now)."""
        spec, options = declaration(lens)
        return cls(lens, resolve(spec.lens), options, resolve(spec.sample),
                   resolve(spec.figures), resolve(spec.headlines),
                   **({"answer": resolve(spec.answer)} if spec.answer else {}))


def task_lenses() -> list[str]:
    """The registered lenses with an Inspect task."""
    return [lens for lens in LENSES if lens_commands(lens).inspect is not None]


def lens_task_function(lens: str) -> Callable[..., Task]:
    """`personalens/<lens>`: the Inspect task of a registered lens, registered now. Its
    parameters are the declared options (`inspect_tasks.parameters`); calling it builds the
    lens from them (a bad value is one line naming it)."""
    spec, options = declaration(lens)
    parameters = task_parameters(spec, options)

    def build(*args: Any, **kwargs: Any) -> Task:
        arguments = task_arguments(parameters, args, kwargs)
        if spec.check:
            resolve(spec.check)(arguments)
        return lens_task(LensTask.of(lens), arguments)

    build.__name__ = build.__qualname__ = lens
    build.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [p.signature() for p in parameters], return_annotation=Task)
    build.__doc__ = docstring(lens_commands(lens).help, parameters)
    return task(name=lens)(build)


# The tasks of this process by run id: a solver, scorer or metric is registered with plain
# parameters (Inspect logs them), so each finds its lens here. Ids are unique, so two tasks of
# one lens (another data set, in one eval-set) keep their own lenses.
_RUNNING: dict[str, tuple[LensSession, LensTask]] = {}


def build_lens(spec: LensTask, task_args: dict[str, Any],
               models: dict[str, str] | None = None) -> Lens:
    """The lens a task runs, from the task's arguments (its options but the run directory and
    the models, which Inspect's roles play; `models` names them, role -> model, when known)."""
    return spec.lens(inspect_options(spec.options, models or {}, **task_args))


def lens_task(spec: LensTask, task_args: dict[str, Any]) -> Task:
    """The lens as a Task; `task_args` are the task's own arguments, kept in the log's
    metadata so `personalens import-inspect` can build the same lens again."""
    session = LensSession(build_lens(spec, task_args))
    run = f"{spec.name}-{uuid.uuid4().hex[:12]}"
    _RUNNING[run] = (session, spec)
    samples = [Sample(id=key, **spec.sample(item)) for key, item in session.items.items()]
    return Task(dataset=MemoryDataset(samples, name=spec.name), solver=lens_item(run),
                scorer=lens_record(run), metrics=[lens_metrics(run)],
                name=spec.name, metadata={LENS: spec.name, "task_args": task_args})


@solver
def lens_item(run: str) -> Solver:
    """Runs the lens's protocol for the sample's item (every model call through Inspect)."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.epoch > 1:
            # A second epoch would replay the first one's steps (dialogue turns, answers) from
            # the step store: the same record again, not a new draw.
            raise ValueError("personalens tasks run one epoch (--epochs 1); a lens draws its "
                             "own repeats (e.g. repeated answer samples)")
        session, spec = _RUNNING[run]
        line = await session.record_line(str(state.sample_id))
        state.store.set(RECORD, line)
        shown = spec.answer(line) if line["status"] == "ok" else ""
        state.output = ModelOutput.from_content(model="personalens", content=shown)
        return state
    return solve


@scorer(metrics=[])
def lens_record(run: str) -> Scorer:
    """The record's own scores (computed in the lens's protocol by its scoring), with the
    record line kept alongside."""
    async def score(state: TaskState, target: Target) -> Score:
        line = state.store.get(RECORD)
        spec = _RUNNING[run][1]
        ok = line["status"] == "ok"
        return Score(value=spec.figures(line) if ok else {}, answer=spec.answer(line) if ok
                     else None, metadata={RECORD: line},
                     explanation=None if ok else line["error"]["message"])
    return score


@metric
def lens_metrics(run: str) -> Metric:
    """The lens's headline figures over the scored samples, by the lens's own `summarise`."""
    def compute(scores: list[SampleScore]) -> dict[str, float]:
        session, spec = _RUNNING[run]
        return spec.headlines(session.summarise([str(s.sample_id) for s in scores]))
    return compute
