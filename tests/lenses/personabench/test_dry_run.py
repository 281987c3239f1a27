"""`personabench eval --dry-run`: the plan's calls are the calls a real run makes, and nothing
is written. (The other lenses: tests/lenses/<lens>/test_dry_run.py.)"""

import json

import pytest

from personalens.lenses.personabench.call_plan import plan_calls as personabench_plan
from personalens.lenses.personabench.options import EvalOptions as PersonabenchOptions
from tests.cli_runner import personalens
from tests.conftest import EXAMPLE


def usage(run_dir) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())["usage"]


@pytest.mark.minilm
@pytest.mark.slow
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
