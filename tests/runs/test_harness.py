"""The run harness with a toy lens: resume, retries, failures, concurrency, identity, usage,
Ctrl-C; and the per-role model options every command shares."""

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from personalens.cli.model_options import Role, RoleModels, model_roles
from personalens.errors import InputError
from personalens.runs import (
    ItemFailure,
    Lens,
    LensOptions,
    LensRecord,
    Metrics,
    RecordedFailure,
    RunIdentity,
    Tally,
    run_lens,
)
from personalens.runs.blocking import call_on_loop, run_blocking


@dataclass(frozen=True)
class Toy:
    key: str


class ToyMetrics(Metrics):
    total: int
    n_failed: int


class ToyOptions(LensOptions):
    command = "toy"

    k: int = 1


class ToyRecord(LensRecord):
    schema_name = "toy"

    value: int


class ToyLens(Lens):
    name = "toy"
    record_model = ToyRecord

    def __init__(self, keys=("a", "b", "c"), failing=(), config=None, concurrency=32,
                 interrupt_at=None, prices=None, interrupt_signal=signal.SIGINT):
        super().__init__(ToyOptions(**(config or {})), prices)
        self.keys, self.failing = list(keys), set(failing)
        self.concurrency = concurrency
        self.interrupt_at, self.interrupt_signal = interrupt_at, interrupt_signal
        self.ran: list[str] = []
        self.in_flight = self.peak = 0
        self.closed = False

    def identity(self) -> RunIdentity:
        return RunIdentity(options=self.options, dataset_hash="h1",
                           seeds={"toy": 0}, models={"target": "scripted"})

    def plan(self):
        return [Toy(k) for k in self.keys]

    async def run_item(self, item: Toy) -> ToyRecord:
        self.ran.append(item.key)
        if item.key == self.interrupt_at:
            if self.interrupt_signal:  # a real Ctrl-C (or SIGTERM); 0: wait for one from outside
                os.kill(os.getpid(), self.interrupt_signal)
            await asyncio.sleep(5 if self.interrupt_signal else 120)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        self.ledger.record("target", _Usage(1000, 500), cached=False)
        if item.key in self.failing:
            raise RecordedFailure("server_error", f"{item.key} broke", 3, data={"half": 1})
        return ToyRecord(value=ord(item.key[0]))

    def summarise(self, records, tally: Tally) -> ToyMetrics:
        return ToyMetrics(total=sum(r.value for r in records.ok()), n_failed=tally.n_failed)

    def summary_line(self, metrics) -> str:
        return f"total {metrics.total}"

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class _Usage:
    prompt_tokens: int
    completion_tokens: int


def _records(out) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_finished_items_are_skipped_and_failed_ones_retried(tmp_path):
    out = tmp_path / "run"
    first = ToyLens(failing={"b"})
    outcome = run_lens(first, out, progress=False)
    assert not outcome.complete and first.closed
    assert outcome.metrics.total == ord("a") + ord("c") and outcome.metrics.n_failed == 1
    failed = [r for r in _records(out) if r["status"] == "failed"]
    # One failure shape, with what the item produced before it failed kept beside it.
    assert failed == [{"key": "b", "status": "failed", "half": 1, "schema": "toy/1",
                       "error": {"kind": "server_error", "message": "b broke", "attempts": 3}}]
    assert [r["schema"] for r in _records(out)] == ["toy/1"] * 3  # every line names its schema
    assert json.loads((out / "manifest.json").read_text())["status"] == "incomplete"
    assert "b broke" in (out / "report.html").read_text()
    second = ToyLens()
    outcome = run_lens(second, out, progress=False)
    assert second.ran == ["b"] and outcome.complete
    assert outcome.metrics.total == ord("a") + ord("b") + ord("c")
    assert sorted(r["key"] for r in _records(out)) == ["a", "b", "c"]  # the failure was dropped
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics == {"total": ord("a") + ord("b") + ord("c"), "n_failed": 0}


def test_concurrency_is_bounded_by_the_lens(tmp_path):
    lens = ToyLens(keys=[f"k{i}" for i in range(8)], concurrency=3)
    run_lens(lens, tmp_path / "run", progress=False)
    assert lens.peak == 3


def test_a_different_identity_and_duplicate_keys_are_refused(tmp_path):
    run_lens(ToyLens(), tmp_path / "run", progress=False)
    with pytest.raises(InputError, match="different configuration"):
        run_lens(ToyLens(config={"k": 2}), tmp_path / "run", progress=False)
    with pytest.raises(InputError, match="the plan names items twice: a"):
        run_lens(ToyLens(keys=["a", "b", "a"]), tmp_path / "other", progress=False)


def test_a_run_names_its_record_schema_and_a_newer_one_does_not_resume_it(tmp_path, monkeypatch):
    run_lens(ToyLens(keys=["a"]), tmp_path / "run", progress=False)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["record_schema"] == "toy/1"
    monkeypatch.setattr(ToyRecord, "schema_version", 2)  # what a toy record holds changed
    with pytest.raises(InputError, match="holds toy/1 records and this personalens writes toy/2"):
        run_lens(ToyLens(keys=["a", "b"]), tmp_path / "run", progress=False)
    assert [json.loads(line)["key"] for line in
            (tmp_path / "run" / "records.jsonl").read_text().splitlines()] == ["a"]


def test_usage_per_role_and_cost_add_up_across_sessions(tmp_path):
    out = tmp_path / "run"
    run_lens(ToyLens(failing={"c"}, prices={"target": (1.0, 2.0)}), out, progress=False)
    run_lens(ToyLens(prices={"target": (1.0, 2.0)}), out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    usage = manifest["usage"]["target"]
    assert (usage["requests"], usage["prompt_tokens"], usage["completion_tokens"]) == \
        (4, 4000, 2000)  # 3 items, then the retried one
    # (4000 * $1 + 2000 * $2) per million tokens.
    assert manifest["estimated_cost_usd"] == pytest.approx(0.008)
    assert manifest["models"] == {"target": "scripted"} and manifest["dataset_hash"] == "h1"


_INTERRUPTED = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from tests.runs.test_harness import ToyLens
from personalens.runs import run_lens
lens = ToyLens(keys=["a", "b", "c", "d"], concurrency=1, interrupt_at="c",
               interrupt_signal=int(sys.argv[3]))
try:
    run_lens(lens, Path(sys.argv[2]), progress=False)
finally:
    print("closed" if lens.closed else "not closed")
"""


def _interrupted_run(out: Path, signal_number: int, launcher: list[str] = (),
                     ignore_sigint: bool = False) -> subprocess.CompletedProcess:
    """The toy lens in a process of its own (a signal is delivered to the whole interpreter,
    as a user's is), started by `launcher` (`bash -c '"$@" & wait $!'`, timeout, nohup)."""
    command = [*launcher, sys.executable, "-c", _INTERRUPTED, str(Path(__file__).parents[2]),
               str(out), str(int(signal_number))]
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.run(command, capture_output=True, text=True, timeout=120,
                          preexec_fn=ignore)


def _assert_resumes(out: Path) -> None:
    assert [r["key"] for r in _records(out)] == ["a", "b"]
    resumed = ToyLens(keys=["a", "b", "c", "d"])
    assert run_lens(resumed, out, progress=False).complete and resumed.ran == ["c", "d"]


@pytest.mark.subprocess
@pytest.mark.parametrize(("signal_number", "status", "said", "recorded"), [
    (signal.SIGINT, 130, "interrupted; rerun the same command to resume", "interrupted"),
    # What timeout, a batch scheduler or docker stop send.
    (signal.SIGTERM, 143, "terminated (SIGTERM); rerun the same command to resume",
     "terminated"),
])
def test_an_interrupted_run_is_recorded_as_such_and_resumes(tmp_path, signal_number, status,
                                                             said, recorded):
    out = tmp_path / "run"
    result = _interrupted_run(out, signal_number)
    assert result.returncode == status, result.stderr
    assert result.stdout.strip() == "closed"
    assert said in result.stderr and "Traceback" not in result.stderr
    assert json.loads((out / "manifest.json").read_text())["status"] == recorded
    _assert_resumes(out)


BACKGROUND = ["bash", "-c", '"$@" & wait $!', "background"]  # a script's job: SIGINT ignored


@pytest.mark.subprocess
@pytest.mark.parametrize(("launcher", "ignore_sigint", "signal_number"), [
    ([], True, signal.SIGTERM),  # SIGINT ignored by whoever started it
    (BACKGROUND, False, signal.SIGTERM),
    (["bash", "-c", 'nohup "$@" & wait $!', "nohup"], False, signal.SIGTERM),
    # timeout sends the SIGTERM itself (the lens waits for it), to a background job.
    (["bash", "-c", 'timeout --preserve-status 3 "$@" & wait $!', "timeout"], False, 0),
], ids=["sigint-ignored", "background", "nohup", "timeout"])
def test_sigterm_stops_a_run_whatever_the_launcher_did_with_sigint(
        tmp_path, launcher, ignore_sigint, signal_number):
    out = tmp_path / "run"
    result = _interrupted_run(out, signal_number, launcher, ignore_sigint)
    assert result.returncode == 143, result.stderr
    assert result.stdout.strip() == "closed"
    assert "terminated (SIGTERM); rerun the same command to resume" in result.stderr
    assert json.loads((out / "manifest.json").read_text())["status"] == "terminated"
    _assert_resumes(out)


def test_sigterm_handling_leaves_the_callers_handler_in_place(tmp_path):
    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        assert run_lens(ToyLens(), tmp_path / "run", progress=False).complete
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_blocking_work_runs_off_the_loop_and_can_call_back_into_it():
    async def main():
        loop_thread = threading.current_thread()

        async def on_loop():
            return threading.current_thread() is loop_thread

        def blocking():
            return threading.current_thread() is not loop_thread, call_on_loop(on_loop)
        return await run_blocking(blocking)
    assert asyncio.run(main()) == (True, True)
    assert call_on_loop(lambda: None) is None  # outside a run there is no loop to return to


def _role_app(captured: dict) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @model_roles(Role("target", "model", "scripted"), Role("judge", "judge"))
    def run(models: RoleModels, k: int = 1) -> None:
        captured.update(models=models, k=k)
    return app


@pytest.mark.parametrize("args, expected", [
    ([], {"target": ("scripted", None, 6), "judge": None}),
    (["--base-url", "http://a", "--max-attempts", "2", "--judge", "openai/j"],
     {"target": ("scripted", "http://a", 2), "judge": ("openai/j", "http://a", 2)}),
    (["--base-url", "http://a", "--judge", "openai/j", "--judge-base-url", "http://b",
      "--judge-max-attempts", "9"],
     {"target": ("scripted", "http://a", 6), "judge": ("openai/j", "http://b", 9)}),
])
def test_each_role_gets_its_own_settings_falling_back_to_the_main_ones(args, expected):
    captured: dict = {}
    result = CliRunner().invoke(_role_app(captured), [*args, "--k", "3"])
    assert result.exit_code == 0, result.output
    models = captured["models"]
    assert captured["k"] == 3
    for role, want in expected.items():
        got = models[role]
        assert (got and (got.spec, got.base_url, got.max_attempts)) == want


def test_role_prices_fall_back_and_bad_endpoint_values_are_input_errors():
    captured: dict = {}
    result = CliRunner().invoke(_role_app(captured), [
        "--price-per-mtok-in", "1", "--price-per-mtok-out", "2", "--judge", "scripted",
        "--judge-price-per-mtok-out", "5"])
    assert result.exit_code == 0, result.output
    assert captured["models"].prices == {"target": (1.0, 2.0), "judge": (1.0, 5.0)}
    result = CliRunner().invoke(_role_app(captured), ["--judge", "x", "--judge-concurrency",
                                                      "0"])
    assert isinstance(result.exception, InputError)
    assert "--judge-concurrency must be at least 1" in str(result.exception)


class ReadsTwice(ToyLens):
    """Summarises from two passes over the records, as a lens keeping slim rows may."""

    def summarise(self, records, tally: Tally) -> ToyMetrics:
        self.passes = [[r.key for r in records], [r.key for r in records]]
        self.kinds = {type(r) for r in records}
        self.length = len(records)
        return super().summarise(records, tally)


def test_a_lens_reads_its_records_in_plan_order_as_often_as_it_likes(tmp_path):
    out = tmp_path / "run"
    run_lens(ToyLens(keys=["c", "a"], failing={"a"}), out, progress=False)
    lens = ReadsTwice(keys=["c", "b", "a"], failing={"b"})
    outcome = run_lens(lens, out, progress=False)
    # c replayed from disk, b failed this session, a retried and recorded: plan order.
    assert lens.passes == [["c", "b", "a"], ["c", "b", "a"]] and lens.length == 3
    assert lens.kinds == {ToyRecord, ItemFailure}  # typed: the record model, or the failure
    assert outcome.metrics.total == ord("a") + ord("c") and outcome.tally.n_failed == 1


class StepToy(ToyLens):
    """Item a needs step outer, which needs step inner (which fails); item b's own failure
    quotes the name of step lonely, which fails too but which b caught and carried on past."""

    async def setup(self, context) -> None:
        self.steps = context.steps

    async def run_item(self, item: Toy) -> ToyRecord:
        async def fail():
            raise RecordedFailure("server_error", "gave up", 3)

        async def outer():
            return await self.steps.get("inner", fail)

        if item.key == "a":
            return ToyRecord(value=await self.steps.get("outer", outer))
        if item.key == "b":
            with contextlib.suppress(RecordedFailure):
                await self.steps.get("lonely", fail)
            raise RecordedFailure("bad_answer", "lonely: the answer did not parse")
        return ToyRecord(value=1)


def test_a_step_failure_is_listed_once_as_the_item_it_failed(tmp_path):
    out = tmp_path / "run"
    tally = run_lens(StepToy(), out, progress=False).tally
    # a's record names the steps its failure came through, outermost first.
    items = {r["key"]: r for r in _records(out) if r["key"] in ("a", "b")}
    # Every line names its schema: the items' record model, or a step's.
    assert {r["key"]: r["schema"] for r in _records(out)} == {
        "inner": "step/1", "outer": "step/1", "lonely": "step/1", "a": "toy/1", "b": "toy/1",
        "c": "toy/1"}
    assert items["a"]["failed_steps"] == ["outer", "inner"] and "failed_steps" not in items["b"]
    assert [(f.key, f.message) for f in tally.failures] == [
        ("a", "outer: inner: gave up"), ("b", "lonely: the answer did not parse")]
    # inner and outer are a's; lonely failed no item (b's message only quotes it).
    assert [(f.key, f.message) for f in tally.step_failures] == [("lonely", "gave up")]


def test_a_failure_keeps_its_step_trail_through_with_data_and_plain_data():
    from personalens.runs import StepFailed
    inner = StepFailed("inner", RecordedFailure("timeout", "slow", 2, {"half": 1}))
    failure = StepFailed("outer", inner).with_data({"retrieved": [3]})
    back = RecordedFailure.from_data(failure.as_data())  # as a Ray worker returns it
    assert (back.failure.kind, back.failure.message, back.failure.attempts) == (
        "timeout", "outer: inner: slow", 2)
    assert back.data == {"retrieved": [3]} and back.steps == ["outer", "inner"]


def test_a_final_failure_is_recorded_as_final_and_others_keep_their_shape():
    from personalens.runs.failures import Failure
    assert Failure(kind="k", message="m").model_dump() == {"kind": "k", "message": "m",
                                                          "attempts": 1}
    assert Failure(kind="k", message="m", final=True).model_dump()["final"] is True
    carried = RecordedFailure("protocol", "broke", 3, final=True).with_data({"turns": []})
    assert carried.failure.final and carried.data == {"turns": []}
    assert RecordedFailure.from_data(carried.as_data()).failure.final


def test_the_cli_says_whether_a_rerun_can_help():
    from personalens.cli.run_output import _retry_advice
    from personalens.runs.lens import Tally

    def tally(*finals, unrecorded=0):
        failures = [{"key": f"k{i}", "kind": "x", "message": "m", "attempts": 1,
                     **({"final": True} if final else {})} for i, final in enumerate(finals)]
        return Tally(n_planned=5, n_recorded=5 - unrecorded, failures=failures,
                     step_failures=[])

    assert _retry_advice(tally(False, False)) == "rerun the same command to retry them"
    assert _retry_advice(tally(True, True)).startswith("rerunning will not change them")
    assert _retry_advice(tally(True, False)).startswith(
        "rerun the same command to retry the rest; 1 will fail the same way")
    # Items never recorded (an interrupted session) can still be run by a rerun.
    assert _retry_advice(tally(True, unrecorded=1)).startswith("rerun the same command")


@pytest.mark.subprocess
def test_outputs_follow_the_users_umask(tmp_path):
    """report.html, metrics.json and the manifest were written 0600 (mkstemp's mode)."""
    script = ("import os, sys; sys.path.insert(0, sys.argv[1]); os.umask(0o002)\n"
              "from pathlib import Path\nfrom tests.runs.test_harness import ToyLens\n"
              "from personalens.runs import run_lens\n"
              "run_lens(ToyLens(keys=['a']), Path(sys.argv[2]), progress=False)\n")
    out = tmp_path / "run"
    result = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parents[2]),
                             str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir() if not p.name.startswith(".")}
    assert modes["report.html"] == modes["metrics.json"] == modes["manifest.json"] == 0o664
    assert modes["records.jsonl"] == 0o664
