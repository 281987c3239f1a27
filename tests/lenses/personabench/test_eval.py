"""`personalens personabench eval` as a user runs it: nDCG on the released data against an
independent recomputation, exactly k chunks per question, the answering model sees exactly the
retrieved chunks, and the gt-context condition end to end.

Each test was checked by planting its bug in a scratch copy of the package and watching the test
fail (issue 9 §5). They use stable interfaces only: the `personalens` command and the files a run
writes (records.jsonl, manifest.json).
"""

import itertools
import json
import math
import re
from pathlib import Path

import pytest

from personalens.population.release_reader import load_community
from tests.cli_runner import personalens
from tests.conftest import EXAMPLE

COMMUNITY = EXAMPLE / "community_example"
NOISES = ("0.0", "0.5")


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]


def independent_ndcg(retrieved: list[str], alternatives: dict[str, list[str]], k: int) -> float:
    """nDCG@k from scratch: binary gains at the first occurrence of a relevant id, discount
    log2(rank + 1), ideal DCG over min(|G|, k) ranks; the best over every one-session-per-item
    combination G."""
    best = 0.0
    for combo in itertools.product(*alternatives.values()):
        gold = set(combo)
        seen: set[str] = set()
        dcg = 0.0
        for rank, doc in enumerate(retrieved[:k], start=1):
            if doc in gold and doc not in seen:
                dcg += 1 / math.log2(rank + 1)
            seen.add(doc)
        ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(gold), k) + 1))
        best = max(best, dcg / ideal)
    return best


@pytest.mark.parametrize("k", [3, 5])
def test_ndcg_on_the_released_data_matches_an_independent_recomputation(tmp_path, community_0,
                                                                        k):
    out = tmp_path / "run"
    result = personalens("personabench", "eval", "--data", community_0, "--noise", "0.0,0.5",
                         "--retriever", "bm25", "--k", k, "--no-answer", "--out", out)
    assert result.returncode == 0, result.stderr
    records = _records(out)
    assert len(records) == 2 * 116
    raw = {noise: {e["q_id"]: e["segment_id"] for e in json.loads(
        (community_0 / f"eval_info/qa_gt_context_all_noise_{noise}.json").read_text())}
        for noise in ("0.0", "0.5")}
    below_one = 0
    for r in records:
        assert r["ground_truth"] == raw[r["noise"]][r["q_id"]], r["key"]
        expected = independent_ndcg(r["retrieved_ids"], r["ground_truth"], k)
        assert abs(r["retrieval"]["ndcg"] - expected) <= 1e-9, r["key"]
        below_one += 0 < expected < 1
    assert below_one >= 20  # the check is not vacuous: many partial rankings


# --- retrieval returns k chunks, and the model sees exactly them ------------------------------


@pytest.fixture(scope="module", params=[3, 5])
def bm25_retrieval(request, tmp_path_factory):
    """Retrieval-only BM25 over the example community at both noise levels, k = 3 and 5."""
    k = request.param
    out = tmp_path_factory.mktemp(f"bm25-k{k}") / "run"
    result = personalens("personabench", "eval", "--data", COMMUNITY, "--noise",
                         ",".join(NOISES), "--retriever", "bm25", "--k", k, "--no-answer",
                         "--out", out)
    assert result.returncode == 0, result.stderr
    return k, out


def _sessions() -> dict[str, dict[str, dict[str, str]]]:
    """noise -> person -> segment id -> chunk text."""
    community = load_community(COMMUNITY, list(NOISES))
    return {noise: {person: {s.segment_id: s.text for s in sessions}
                    for person, sessions in community.levels[noise].sessions.items()}
            for noise in NOISES}


def test_every_question_gets_exactly_k_chunks(bm25_retrieval):
    k, out = bm25_retrieval
    sessions = _sessions()
    records = _records(out)
    assert len(records) == 2 * 27
    for r in records:
        own = sessions[r["noise"]][r["person"]]
        assert len(own) > k
        ids = r["retrieved_ids"]
        assert len(ids) == k, (r["key"], ids)
        assert len(set(ids)) == k and set(ids) <= set(own), r["key"]


def _excerpt_rule(question: str, chunks: list[str], reply: str) -> dict:
    """A scripted rule that fires only if the prompt holds exactly `chunks` as excerpts
    [1]..[n], in order, with nothing numbered [n + 1], for this question."""
    seen = "".join(rf"(?=.*\[{i}\] {re.escape(text)})" for i, text in enumerate(chunks, 1))
    return {"pattern": rf"\A{seen}(?!.*\[{len(chunks) + 1}\] )"
                       rf"(?=.*Question: {re.escape(question)}\s*\Z)",
            "reply": reply}


def _rules_file(path: Path, entries: list[tuple[str, list[str], str]]) -> Path:
    rules = [_excerpt_rule(question, chunks, reply) for question, chunks, reply in entries]
    path.write_text(json.dumps({"rules": rules, "default": "NOT EXACTLY THE RETRIEVED CHUNKS"}))
    return path


def test_the_answering_model_sees_exactly_the_retrieved_chunks(bm25_retrieval, tmp_path):
    k, retrieval_run = bm25_retrieval
    sessions = _sessions()
    retrieved = {r["key"]: r for r in _records(retrieval_run)}
    # The scripted model answers with the gold answer only when its prompt holds the k
    # retrieved chunks' texts, numbered 1..k in rank order, and no other excerpt.
    rules = _rules_file(tmp_path / "rules.json", [
        (r["question"], [sessions[r["noise"]][r["person"]][i] for i in r["retrieved_ids"]],
         json.dumps(r["answer"]))
        for r in retrieved.values()])
    out = tmp_path / "run"
    result = personalens("personabench", "eval", "--data", COMMUNITY, "--noise", ",".join(NOISES),
                         "--retriever", "bm25", "--k", k, "--model", f"scripted:{rules}",
                         "--no-cache", "--out", out)
    assert result.returncode == 0, result.stderr
    records = _records(out)
    assert len(records) == len(retrieved) == 54
    for r in records:
        assert r["retrieved_ids"] == retrieved[r["key"]]["retrieved_ids"]
        assert r["prediction"] == json.dumps(r["answer"]), r["key"]
        assert r["end_to_end"]["f1"] == 1.0, r["key"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["usage"]["target"]["requests"] == 54


# --- gt-context end to end -------------------------------------------------------------------


def test_gt_context_end_to_end(tmp_path):
    k = 3
    sessions = _sessions()
    truth = {noise: {e["q_id"]: e["segment_id"] for e in json.loads(
        (COMMUNITY / f"eval_info/qa_gt_context_all_noise_{noise}.json").read_text())}
        for noise in NOISES}

    def expected_ids(noise: str, q_id: str) -> list[str]:
        firsts = [ids[0] for ids in truth[noise][q_id].values()]
        return firsts if len(firsts) >= k else [firsts[i % len(firsts)] for i in range(k)]

    community = load_community(COMMUNITY, list(NOISES))
    entries = [(q.question, [sessions[noise][person][i] for i in expected_ids(noise, q.q_id)],
                json.dumps(q.answer))
               for noise in NOISES for person, qs in community.questions.items() for q in qs
               if q.type != "Subjective"]
    rules = _rules_file(tmp_path / "rules.json", entries)
    out = tmp_path / "run"
    result = personalens("personabench", "eval", "--data", COMMUNITY, "--noise", ",".join(NOISES),
                         "--retriever", "gt-context", "--k", k, "--model", f"scripted:{rules}",
                         "--no-cache", "--out", out)
    assert result.returncode == 0, result.stderr
    records = _records(out)
    assert len(records) == 54 and {r["retriever"] for r in records} == {"gt-context"}
    lengths = set()
    for r in records:
        ids = expected_ids(r["noise"], r["q_id"])
        lengths.add(len(ids))
        assert r["retrieved_ids"] == ids, r["key"]
        assert r["retrieval"]["recall"] == 1.0, r["key"]
        assert abs(r["retrieval"]["ndcg"] - independent_ndcg(ids, r["ground_truth"], len(ids))
                   ) <= 1e-9
        # The model was given exactly the ground-truth sessions and answered from them.
        assert r["prediction"] == json.dumps(r["answer"]), r["key"]
        assert r["end_to_end"]["f1"] == 1.0
    assert lengths == {3, 5}  # questions with 5 answer items get all 5 first sessions
    metrics = json.loads((out / "metrics.json").read_text())
    for condition in metrics["conditions"]:
        assert condition["retrieval"]["overall"]["recall"] == 1.0
        assert condition["end_to_end"]["overall"]["f1"] == 1.0
