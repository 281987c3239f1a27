"""Typed records (lens contract v2): schema tags on disk, failures as models, partial records."""

import pytest

from personalens.errors import InputError
from personalens.runs import ItemFailure, ItemRecords, LensRecord


class Scores(LensRecord):
    schema_name = "demo.eval"
    schema_version = 2

    recall: float
    answer: str | None = None


def test_a_record_writes_only_what_was_set_and_reads_back_by_its_schema():
    record = Scores(recall=0.5)
    assert record.fields() == {"recall": 0.5}  # unset answer: not written (lines stay as before)
    assert Scores(recall=0.5, answer=None).fields() == {"recall": 0.5, "answer": None}
    line = {**record.fields(), "key": "q1", "status": "ok", "schema": "demo.eval/2"}
    assert Scores.from_line(line) == Scores(key="q1", recall=0.5)
    # A line written before records carried a schema (contract v1) is read by today's model.
    assert Scores.from_line({"key": "q1", "status": "ok", "recall": 1.0}).recall == 1.0


@pytest.mark.parametrize("tag, message", [
    ("other.eval/2", "record 'q1' is a 'other.eval' record, not 'demo.eval'"),
    ("demo.eval/3", "record 'q1' has schema version 3, this personalens reads version 2"),
])
def test_a_record_of_another_schema_is_refused_with_one_line(tag, message):
    with pytest.raises(InputError, match=message):
        Scores.from_line({"key": "q1", "status": "ok", "schema": tag, "recall": 1.0})


def test_failed_items_come_back_as_item_failures_with_what_they_produced():
    lines = [{"key": "a", "status": "ok", "recall": 1.0},
             {"key": "b", "status": "failed", "recall": 0.25, "failed_steps": ["s1"],
              "error": {"kind": "timeout", "message": "slow", "attempts": 3, "final": True}},
             {"key": "c", "status": "failed", "error": {"kind": "x", "message": "m"}},
             {"key": "a", "status": "ok", "recall": 0.5}]  # a later line for a key wins
    records = ItemRecords.from_lines(lines, Scores)
    items = list(records)
    assert [type(r) for r in items] == [Scores, ItemFailure, ItemFailure]
    assert items[0].recall == 0.5 and [r.key for r in records.ok()] == ["a"]
    b, c = records.failures()
    assert (b.kind, b.attempts, b.final, b.failed_steps, b.data) == (
        "timeout", 3, True, ["s1"], {"recall": 0.25})
    # metrics.json lists a failure in its one shape: no data, no steps.
    assert b.model_dump() == {"key": "b", "kind": "timeout", "message": "slow", "attempts": 3,
                              "final": True}
    assert records.produced(b) == Scores(key="b", recall=0.25)
    assert records.produced(c) is None  # too little for a record
