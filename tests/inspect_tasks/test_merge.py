"""`personalens import-inspect` of several logs of one task (a retried eval-set): each item's
line is merged from the logs, and an item that failed in every log stays one failed item
whose error is the last log's, whatever else the logs hold.

One Inspect log of the pqb task on the release excerpt (9 queries, no model call), copied into
two logs with failed samples (no score, Inspect's error):

                    first log          second log
    sample X        failed "timeout"   failed "rate limit"
    sample Y        failed "timeout"   recorded
    the other 7     recorded           recorded

Given first, second: X is failed with "rate limit" (the last log's), Y is its recorded line,
8 of the 9 items are scored and the run is incomplete. Given second, first: X's error is
"timeout", Y is still recorded (a failure never replaces a recorded line).
"""

import json
from pathlib import Path

import pytest

from tests.inspect_tasks.test_tasks import PQB_META, PQB_QUERIES, run_inspect

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _failed(log, failures: dict[str, str], path) -> str:
    """The log with those samples failed as Inspect records a sample error; its location."""
    from inspect_ai.log import EvalError, write_eval_log

    copy = log.model_copy(deep=True)
    for sample in copy.samples:
        if str(sample.id) in failures:
            sample.scores = None
            sample.error = EvalError(message=failures[str(sample.id)], traceback="",
                                     traceback_ansi="")
    write_eval_log(copy, str(path))
    return str(path)


def _lines(run) -> dict[str, dict]:
    return {line["key"]: line for line in map(json.loads, (run / "records.jsonl")
                                              .read_text().splitlines())}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    from personalens.inspect_tasks.lens_task import RECORD
    from personalens.inspect_tasks.registry import pqb

    root = tmp_path_factory.mktemp("inspect-merge")
    log = run_inspect(pqb(queries=str(PQB_QUERIES), meta=str(PQB_META)), root, "scripted")
    x, y = (str(s.id) for s in log.samples[:2])
    recorded = {str(s.id): s.scores["lens_record"].metadata[RECORD] for s in log.samples}
    first = _failed(log, {x: "timeout", y: "timeout"}, root / "first.eval")
    second = _failed(log, {x: "rate limit"}, root / "second.eval")
    return root, first, second, x, y, recorded


def _failure(message: str) -> dict:
    from personalens.inspect_tasks.log_import import INSPECT_FAILURE

    return {"kind": INSPECT_FAILURE, "message": message, "attempts": 1}


@pytest.mark.parametrize("order, error", [((0, 1), "rate limit"), ((1, 0), "timeout")],
                         ids=["first-then-second", "second-then-first"])
def test_two_failed_samples_merge_into_one_failed_item_with_the_last_logs_error(
        logs, order, error, tmp_path):
    from personalens.inspect_tasks.log_import import import_logs

    root, first, second, x, y, recorded = logs
    paths = [(first, second)[i] for i in order]
    outcome = import_logs([Path(p) for p in paths], tmp_path / "run")
    assert not outcome.complete
    lines = _lines(tmp_path / "run")
    assert len(lines) == 9  # the item failed twice is kept, failed, not dropped
    assert lines[x]["status"] == "failed" and lines[x]["error"] == _failure(error)
    assert lines[y]["status"] == "ok"
    assert {k: v for k, v in lines[y].items() if k in recorded[y]} == recorded[y]
    assert sum(line["status"] == "ok" for line in lines.values()) == 8
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "incomplete"
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["n_queries"] == 8  # scored over the eight recorded queries
    assert metrics["failures"] == [{"key": x, **_failure(error)}]


def test_merging_lines_by_hand():
    """Two failed lines of a key: the later one; a recorded line against failed ones: the
    recorded one, on either side; two recorded: the later."""
    from personalens.inspect_tasks.log_import import merged

    def failed(message):
        return {"key": "x", "status": "failed", "error": _failure(message)}

    ok, newer = {"key": "x", "status": "ok", "v": 1}, {"key": "x", "status": "ok", "v": 2}
    assert merged([{"x": failed("a")}, {"x": failed("b")}]) == {"x": failed("b")}
    assert merged([{"x": failed("b")}, {"x": failed("a")}]) == {"x": failed("a")}
    assert merged([{"x": failed("a")}, {"x": ok}, {"x": failed("b")}]) == {"x": ok}
    assert merged([{"x": ok}, {"x": failed("a")}, {"x": newer}]) == {"x": newer}
    assert merged([{"x": failed("a")}, {"y": ok}]) == {"x": failed("a"), "y": ok}


def test_the_failed_samples_are_read_as_inspect_wrote_them(logs):
    from inspect_ai.log import read_eval_log

    root, first, _, x, y, _ = logs
    log = read_eval_log(first)
    errors = {str(s.id): s.error.message for s in log.samples if s.error}
    assert errors == {x: "timeout", y: "timeout"}


def test_a_failed_sample_never_replaces_a_recorded_one_whatever_the_order():
    from personalens.inspect_tasks.log_import import merged

    ok, failed = {"key": "a", "status": "ok", "x": 1}, {"key": "a", "status": "failed"}
    retry = {"key": "b", "status": "ok", "x": 2}
    assert merged([{"a": failed}, {"a": ok}]) == {"a": ok}
    assert merged([{"a": ok, "b": {"key": "b", "status": "failed"}}, {"a": failed, "b": retry}]) \
        == {"a": ok, "b": retry}
    newer = {"key": "a", "status": "ok", "x": 3}
    assert merged([{"a": ok}, {"a": newer}]) == {"a": newer}
