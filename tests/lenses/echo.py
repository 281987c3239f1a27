"""A toy fifth lens, `echo`, declared only here: its options, records, metrics, the lens, its
comparison, its scorecard column and its Inspect task. `tests/lenses/test_registry.py` adds it
to the registry (one line, `lenses.LENSES["echo"]`) and finds it in every layer.

The lens asks its target to repeat each of a few words; a record's score is 1 when the reply
holds the word. `repeats` (asks per word) is the option its scorecard sizes set.
"""

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from personalens.lenses.commands import (
    SYSTEM,
    CardMetric,
    CardRun,
    Comparison,
    DeclaredCommand,
    Headline,
    InspectTask,
    LensCommands,
    Scorecard,
    Table,
)
from personalens.models.role import Role
from personalens.models.role_set import RoleModels, RoleSet
from personalens.runs import Lens, LensOptions, LensRecord, Metrics, RunIdentity, run_lens
from personalens.runs.options import UserPath, not_identity, option
from personalens.stats.estimate import Estimate

WORDS = ("amber", "birch", "cedar", "delta", "ember", "fjord")
MODULE = "tests.lenses.echo"


class EchoOptions(LensOptions):
    command = "echo eval"
    roles: ClassVar = (Role("target", "model", "scripted", "The model that repeats."),)

    data: UserPath = option(help="Any existing folder (the words are the lens's own).")
    out: UserPath = not_identity(help="Run directory.")
    retriever: str = option("bm25", "Recorded only: the system's retriever reaches it.")
    repeats: int = option(1, "Times each word is asked.", ge=1)
    models: RoleModels = option(RoleModels(), cli=False)


class EchoRecord(LensRecord):
    schema_name = "echo.eval"

    word: str
    reply: str
    echoed: float


class EchoMetrics(Metrics):
    echo_rate: Estimate
    n_failed: int

    def headlines(self) -> list[str]:
        return [f"echo rate {self.echo_rate.value}"]


@dataclass(frozen=True)
class Item:
    key: str
    word: str


class EchoEval(Lens[EchoOptions, EchoRecord, EchoMetrics]):
    name = title = "echo"
    record_model = EchoRecord

    def __init__(self, options: EchoOptions):
        super().__init__(options, options.models.prices)
        if not options.data.is_dir():
            from personalens.errors import InputError
            raise InputError("--data is not a folder", where=str(options.data))
        self.roles = RoleSet(options.models.resolved(EchoOptions.roles), self.ledger)

    def identity(self) -> RunIdentity:
        return RunIdentity(options=self.options,
                           dataset_hash=hashlib.sha256(" ".join(WORDS).encode()).hexdigest(),
                           seeds={}, models=self.roles.specs(),
                           endpoints=self.roles.endpoints())

    def plan(self) -> list[Item]:
        return [Item(f"{word}/{i}", word) for word in WORDS for i in range(self.options.repeats)]

    async def run_item(self, item: Item) -> EchoRecord:
        reply = (await self.roles["target"].complete(
            [{"role": "user", "content": f"Repeat: {item.word}"}])).text
        return EchoRecord(word=item.word, reply=reply, echoed=float(item.word in reply))

    def summarise(self, records, tally) -> EchoMetrics:
        return EchoMetrics(echo_rate=Estimate.of_mean([r.echoed for r in records.ok()]),
                           n_failed=tally.n_failed)

    def summary_line(self, metrics: EchoMetrics) -> str:
        return f"echo rate {metrics.echo_rate.value}"

    async def aclose(self) -> None:
        await self.roles.aclose()


def run_eval(options: EchoOptions, progress: bool = True):
    return run_lens(EchoEval(options), options.out, progress=progress)


class EchoComparison(Comparison):
    record_model = EchoRecord

    def systems(self, records: Iterable[Any], manifest: Mapping[str, Any]) -> dict[str, list]:
        return {manifest["models"]["target"]: [r for r in records if isinstance(r, EchoRecord)]}

    def item(self, record: EchoRecord) -> str:
        return record.key

    def headlines(self, records: list[EchoRecord]) -> dict[str, Headline]:
        return {"echo_rate": Headline("echo rate", {r.key: r.echoed for r in records},
                                      binary=True)}

    def tables(self, systems: Mapping[str, list[EchoRecord]], seed: int) -> list[Table]:
        return [Table("echo", ["system", "echo rate"],
                      [[name, Estimate.of_mean([r.echoed for r in records]).value]
                       for name, records in systems.items()])]

    def unit_text(self, records: list[EchoRecord]) -> dict[str, tuple[str, str]]:
        return {r.key: (r.word, r.reply) for r in records}


COMPARISON = EchoComparison()


def echo_rate(metrics: EchoMetrics, options: EchoOptions) -> Estimate:
    return metrics.echo_rate


def sample(item: Item) -> dict:
    return {"input": f"Repeat: {item.word}", "target": item.word,
            "metadata": {"word": item.word}}


def figures(line: dict) -> dict[str, float]:
    return {"echoed": line["echoed"]}


def headlines(metrics: EchoMetrics) -> dict[str, float]:
    return {"echo_rate": metrics.echo_rate.value}


LENS = LensCommands(
    name="echo",
    help="Echo: does the model repeat a word it is asked to repeat?",
    commands=[DeclaredCommand("eval", f"{MODULE}:EchoOptions", f"{MODULE}:run_eval",
                              "Ask the model to repeat each word.",
                              comparison=f"{MODULE}:COMPARISON",
                              metrics=f"{MODULE}:EchoMetrics",
                              example="personalens echo eval --data . --out runs/echo")],
    scorecard=Scorecard(
        group="repeat",
        metrics=(CardMetric("echo_rate", "echo rate (0-1)", "echo", f"{MODULE}:echo_rate",
                            "echo_rate", True, scale="0-1"),),
        eval=CardRun("eval", {"tiny": {"repeats": 2}, "small": {"repeats": 3},
                              "standard": {"repeats": 5}}, models={"target": SYSTEM})),
    inspect=InspectTask(f"{MODULE}:EchoEval", ("data", "retriever", "repeats"),
                        sample=f"{MODULE}:sample", figures=f"{MODULE}:figures",
                        headlines=f"{MODULE}:headlines"),
)
