"""`personalens import-inspect`: Inspect logs of a personalens task -> a run directory that
holds the same records and metrics as the lens's own run, and that `compare` reads."""

import json

import pytest

from tests import prefdisco_data as data
from tests.cli_runner import personalens
from tests.inspect_tasks.test_tasks import run_inspect
from tests.prefdisco_double import Roles, evaluate, judge_table, scripted_target, user_by_problem

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
W = {"visual": 0.75, "brevity": 0.25}
# (visual, brevity) per condition; PrefAlign = 0.75 v + 0.25 b = 2.0, 3.5 and 4.0
TABLE = {"p1/baseline": {"visual": 1, "brevity": 5}, "p1/discovery": {"visual": 4, "brevity": 2},
         "p1/oracle": {"visual": 5, "brevity": 1}}
MODELS = {"target": "personalens/openai/target", "user": "personalens/openai/user",
          "judge": "personalens/openai/judge"}


def _lines(run_dir) -> dict[str, dict]:
    return {line["key"]: line for line in map(json.loads, (run_dir / "records.jsonl")
                                              .read_text().splitlines())
            if line["schema"].startswith("prefdisco.eval")}


@pytest.fixture
def prefdisco_runs(tmp_path, monkeypatch):
    """The lens's own run and an Inspect log of the same task, data and scripted roles."""
    from personalens.inspect_tasks.registry import prefdisco

    folder = data.folder(tmp_path / "data", {"alpha": [data.weighted("p1", W)]})
    roles = Roles(target=scripted_target(questions=1), user=user_by_problem({"p1": "Visual."}),
                  judge=judge_table(TABLE)).install(monkeypatch)
    evaluate(folder, tmp_path / "own", roles)
    log = run_inspect(prefdisco(data=str(folder)), tmp_path, "openai/target",
                      user="openai/user", judge="openai/judge")
    return tmp_path, log.location


def test_an_imported_log_is_the_lens_run_again(prefdisco_runs):
    from personalens.inspect_tasks.log_import import import_logs

    root, log = prefdisco_runs
    outcome = import_logs([log], root / "imported")
    assert outcome.complete
    own, imported = root / "own", root / "imported"
    # Every item's record is the lens's own, field for field.
    assert _lines(imported) == _lines(own)
    own_metrics = json.loads((own / "metrics.json").read_text())
    metrics = json.loads((imported / "metrics.json").read_text())
    for condition, pa in (("baseline", 2.0), ("discovery", 3.5), ("oracle", 4.0)):
        assert metrics["prefalign"][condition]["mean"] == pytest.approx(pa, abs=1e-9)
        assert metrics["prefalign"][condition] == own_metrics["prefalign"][condition]
    manifest = json.loads((imported / "manifest.json").read_text())
    assert manifest["models"] == {"target": MODELS["target"], "user": MODELS["user"],
                                  "judge": MODELS["judge"]}
    assert manifest["config"]["command"] == "prefdisco eval"
    assert manifest["inspect_logs"] == [log] and manifest["status"] == "complete"
    assert "PrefAlign" in (imported / "report.html").read_text()


def test_compare_reads_an_imported_run_beside_the_lens_own(prefdisco_runs):
    root, log = prefdisco_runs
    result = personalens("import-inspect", log, "--out", root / "imported")
    assert result.returncode == 0, result.stderr
    assert "discovery: PrefAlign 3.50" in result.stdout
    result = personalens("compare", root / "own", root / "imported", "--out", root / "cmp")
    assert result.returncode == 0, result.stderr
    comparison = json.loads((root / "cmp" / "comparison.json").read_text())
    assert len(comparison["runs"]) == 2


def test_a_log_of_another_task_is_refused_in_one_line(tmp_path):
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample

    [log] = inspect_eval(Task(dataset=[Sample(input="hi", target="x")]), model="mockllm/model",
                         log_dir=str(tmp_path / "logs"), display="none")
    result = personalens("import-inspect", log.location, "--out", tmp_path / "run")
    assert result.returncode == 2
    assert "not a log of a personalens task" in result.stderr
    assert not (tmp_path / "run").exists()
