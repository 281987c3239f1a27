"""`personalens scorecard --dry-run`: the calls each system's evaluations book, per role."""

from personalens.scorecard.dry_run import _specs
from personalens.scorecard.inputs import make_plan


def test_the_scorecard_dry_run_books_a_reranker_under_the_model_it_runs(tmp_path):
    plan = make_plan(["a=scripted,retriever=rerank-llm:scripted",
                      "b=openai/x,retriever=rerank-llm"], out=tmp_path / "card",
                     lenses="personabench")
    a, b = plan.evaluations()
    assert _specs(a) == {"target": "scripted", "reranker": "scripted"}
    assert _specs(b) == {"target": "openai/x", "reranker": "local/smollm2-135m"}
