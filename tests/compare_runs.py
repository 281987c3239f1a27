"""Small run directories for the compare tests, written as the harness leaves them: pqb eval
runs with hand-picked ranks and personabench eval runs with hand-picked scores (see the tests'
docstrings for the tables)."""

import json
from pathlib import Path

from personalens.lenses.personabench.records import (
    AnswerScores,
    PersonabenchRecord,
    RetrievalScores,
)
from personalens.lenses.pqb.records import EvalRecord
from tests.cli_runner import personalens

UNITS = [("P1", "u1"), ("P1", "u2"), ("P2", "u1"), ("P2", "u2"), ("P3", "u1"), ("P3", "u2")]
RANKS = {"bm25": ([1, 1, 1, None, 1, 5], [1, 1, 1, 1, 1, None]),
         "minilm": ([1, None, None, None, 1, 1], [1, None, None, None, 1, 1])}


def write_run(path: Path, records: list, *, command: str, config: dict | None = None,
              dataset_hash: str = "data-1", status: str = "complete",
              models: dict | None = None, failed: tuple[str, ...] = ()) -> Path:
    """A run directory as the harness leaves it: manifest.json and records.jsonl (each line
    the record's fields, its key, status and schema tag; then a line per `failed` key)."""
    path.mkdir(parents=True)
    (path / "manifest.json").write_text(json.dumps({
        "contract": 2, "command": command, "config": {"command": command, **(config or {})},
        "record_schema": type(records[0]).schema_tag(), "dataset_hash": dataset_hash,
        "status": status, "models": models or {}}))
    (path / "records.jsonl").write_text("".join(
        json.dumps({"key": r.key, "status": "ok", "schema": r.schema_tag(), **r.fields()}) + "\n"
        for r in records) + "".join(
        json.dumps({"key": key, "status": "failed", "schema": records[0].schema_tag(),
                    "error": {"kind": "rerank_failed", "message": "the reranker failed"}})
        + "\n" for key in failed))
    return path


def pqb_run(path: Path, retriever: str, *, units=UNITS, **kwargs) -> Path:
    clean, typo = RANKS[retriever]
    records = [EvalRecord(key=f"{item}/{uid}", parent_asin=item, asin=item, uid=uid,
                          syntax_query=f"query of {uid} for {item}",
                          typo_query=f"qeury of {uid} for {item}", rank_clean=c, rank_typo=t,
                          top_clean=[item] if c == 1 else ["other"], top_typo=[])
               for (item, uid), c, t in zip(UNITS, clean, typo, strict=True)
               if (item, uid) in units]
    return write_run(path, records, command="pqb eval", config={"retriever": retriever},
                     **kwargs)


def compare(*args) -> tuple:
    result = personalens("compare", *map(str, args))
    return result, result.stdout + result.stderr


VALUES = {"a": {"0.0": ([1, 1, 0], [1, 0, 1], 0.25), "0.5": ([0, 0, 0], None, None)},
          "b": {"0.0": ([0.5, 0, 0], [1, 1, 0], 1.0), "0.5": ([0, 0, 1], None, None)}}


def _record(retriever: str, noise: str, q: int, recall: float, f1: float | None,
            outdated: float | None) -> PersonabenchRecord:
    answered = {} if f1 is None else {
        "prediction": f"answer {q}", "end_to_end": AnswerScores(precision=f1, recall=f1, f1=f1),
        **({"outdated_recall": outdated} if outdated is not None and q == 1 else {})}
    return PersonabenchRecord(
        key=f"c/{noise}/{retriever}/q{q}", community="c", noise=noise, retriever=retriever,
        person="p", q_id=f"q{q}", question=f"question {q}?", type="Basic", difficulty="easy",
        category="basic", answer=f"gold {q}", ground_truth={"x": ["s1"]},
        retrieved_ids=[f"s{q}"], retrieval=RetrievalScores(recall=recall, ndcg=recall / 2),
        **answered)


def personabench_run(path: Path, retriever: str = "bm25", model: str = "a",
                     retrievers: tuple[str, ...] | None = None, **kwargs) -> Path:
    records = [_record(r, noise, q + 1, recalls[q], f1s[q] if f1s else None, outdated)
               for r in retrievers or (retriever,)
               for noise, (recalls, f1s, outdated) in VALUES[model].items() for q in range(3)]
    return write_run(path, records, command="personabench eval",
                     models={"target": f"openai/{model}"}, **kwargs)


def table_records(retriever: str, noise: str, recall: list[float], f1: list[float] | None,
                  ndcg: list[float] | None = None, *, questions: list[str] | None = None,
                  community: str = "c") -> list[PersonabenchRecord]:
    """PersonaBench records written out as a table: question i (q1, q2, ... unless
    `questions` names them) has recall[i], nDCG ndcg[i] (recall / 2 unless given) and, when
    `f1` is given, answer F1 f1[i]."""
    names = questions or [f"q{i + 1}" for i in range(len(recall))]
    ndcg = ndcg or [r / 2 for r in recall]
    return [PersonabenchRecord(
        key=f"{community}/{noise}/{retriever}/{q}", community=community, noise=noise,
        retriever=retriever, person="p", q_id=q, question=f"question {q}?", type="Basic",
        difficulty="easy", category="basic", answer=f"gold {q}", ground_truth={"x": ["s1"]},
        retrieved_ids=["s1"], retrieval=RetrievalScores(recall=r, ndcg=n),
        **({} if f1 is None else {"prediction": f"answer {q}",
                                  "end_to_end": AnswerScores(precision=f1[i], recall=f1[i],
                                                             f1=f1[i])}))
        for i, (q, r, n) in enumerate(zip(names, recall, ndcg, strict=True))]


def table_run(path: Path, model: str, records: list[PersonabenchRecord], *,
              metrics: bool = False, **kwargs) -> Path:
    """A personabench eval run of `records` answered by openai/<model>; with `metrics`, its
    metrics.json as the lens writes it (the scorecard copies its cells from there)."""
    run = write_run(path, records, command="personabench eval",
                    models={"target": f"openai/{model}"}, **kwargs)
    if metrics:
        from personalens.lenses.personabench.analysis import summarise
        from personalens.lenses.personabench.metrics import PersonabenchMetrics

        figures = PersonabenchMetrics.model_validate(summarise(
            records, n_planned=len(records),
            answered=any(r.end_to_end is not None for r in records))).to_json()
        (run / "metrics.json").write_text(json.dumps(figures))
    return run
