"""`--dry-run` of personabench and pqb eval: the plan's calls are the calls a real run makes,
and nothing is written. (prefdisco and prisk: tests/test_<lens>_dry_run.py.)"""

import json
from pathlib import Path

from personalens.lenses.personabench.call_plan import plan_calls as personabench_plan
from personalens.lenses.personabench.options import EvalOptions as PersonabenchOptions
from personalens.lenses.pqb.call_plan import plan_calls as pqb_plan
from personalens.lenses.pqb.options import EvalOptions as PqbOptions
from personalens.runs.call_plan import CallPlan, estimated_tokens
from tests.cli_runner import personalens
from tests.conftest import EXAMPLE, SHARED
from tests.fault_server import FaultServer

QUERIES = SHARED / "anchors/pqb/dataset/Musical_Instruments.excerpt.json"
META = Path(__file__).parents[1] / "fixtures/pqb/meta_Musical_Instruments.jsonl"


def usage(run_dir) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())["usage"]


def test_a_plan_adds_calls_and_tokens_per_role_and_prices_them():
    plan = CallPlan("x eval", 3, "items")
    plan.add("target", 2, 100, 10)
    plan.add("target", 1, 50, 5)
    plan.add("judge", 4, 1000, 0)
    assert plan.usage() == {"judge": {"requests": 4, "prompt_tokens": 1000,
                                      "completion_tokens": 0},
                            "target": {"requests": 3, "prompt_tokens": 150,
                                       "completion_tokens": 15}}
    # USD per million tokens in and out: target 150 in at $2, 15 out at $10; judge 1000 in at $1.
    prices = {"target": (2.0, 10.0), "judge": (1.0, 0.0)}
    assert plan.cost(prices) == (150 * 2 + 15 * 10 + 1000 * 1) / 1e6
    assert plan.cost({}) is None
    assert estimated_tokens("abcde") == 2 and estimated_tokens(8) == 2


def test_personabench_plans_one_answer_per_scored_question_as_a_run_makes(tmp_path):
    out = tmp_path / "run"
    args = ["personabench", "eval", "--data", EXAMPLE, "--retriever", "bm25,minilm",
            "--noise", "0.5", "--model", "scripted", "--out", out]
    dry = personalens(*args, "--dry-run", "--price-per-mtok-in", "1")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith("dry run of personabench eval: 54 questions scored")
    assert "target (scripted): 54 calls" in dry.stdout and "estimated cost: $" in dry.stdout
    assert not out.exists()
    run = personalens(*args)
    assert run.returncode == 0, run.stderr
    plan = personabench_plan(PersonabenchOptions(data=EXAMPLE, out=out, retriever=["bm25",
                                                                                "minilm"],
                                                 models={"target": "scripted"}))
    assert set(plan.roles) == set(usage(out)) == {"target"}
    assert plan.roles["target"].calls == usage(out)["target"]["requests"] == 54
    # 27 questions per retriever; without answers there is nothing to call.
    bare = personabench_plan(PersonabenchOptions(data=EXAMPLE, out=out, retriever=["bm25"],
                                                 no_answer=True))
    assert (bare.items, bare.roles) == (27, {})


def test_pqb_plans_one_rerank_call_per_distinct_query_text_as_a_run_makes(tmp_path):
    out = tmp_path / "run"
    with FaultServer(lambda body: '{"ranking": [1, 2]}') as server:
        result = personalens("pqb", "eval", "--queries", QUERIES, "--meta", META,
                             "--retriever", "rerank-llm:openai/ranker", "--base-url",
                             server.base_url, "--no-cache", "--out", out)
    assert result.returncode == 0, result.stderr
    plan = pqb_plan(PqbOptions(queries=QUERIES, meta=META, retriever="rerank-llm:openai/ranker",
                               out=out))
    groups = json.loads(QUERIES.read_text())
    texts = {r[k] for g in groups.values() for r in g
             for k in ("syntax_query", "typo_query", "random_typo_query") if r.get(k)}
    assert plan.items == 9
    assert plan.roles["reranker"].calls == len(texts) == usage(out)["reranker"]["requests"]
    assert pqb_plan(PqbOptions(queries=QUERIES, meta=META, out=out)).roles == {}
