"""`pqb eval --dry-run`: the plan's calls are the calls a real run makes, and nothing is
written."""

import json
from pathlib import Path

from personalens.lenses.pqb.call_plan import plan_calls as pqb_plan
from personalens.lenses.pqb.options import EvalOptions as PqbOptions
from tests.cli_runner import personalens
from tests.conftest import SHARED
from tests.fault_server import FaultServer

QUERIES = SHARED / "anchors/pqb/dataset/Musical_Instruments.excerpt.json"
META = Path(__file__).parents[2] / "fixtures/pqb/meta_Musical_Instruments.jsonl"


def usage(run_dir) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())["usage"]


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
