"""Adding a lens is its package plus one registry line: the toy `echo` lens (tests/lenses/echo.py),
registered at test time, is a CLI group, a `personalens compare` command, a scorecard column
(with its size's options, the system's model and retriever) and an Inspect task, and nothing
else in personalens had to name it."""

import json

import pytest

from personalens.lenses import LENSES
from personalens.lenses.commands import comparable_commands
from tests.cli_runner import personalens
from tests.lenses import echo
from tests.scripted_roles import Roles

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Inspect's own
SYSTEMS = ["a=openai/sysa", "b=openai/sysb,retriever=minilm"]


@pytest.fixture
def registered(monkeypatch):
    """The echo lens in the registry (the one line a lens adds), for this test only."""
    from personalens.cli.subcommands import subcommand_summaries

    monkeypatch.setitem(LENSES, "echo", "tests.lenses.echo:LENS")
    subcommand_summaries.cache_clear()
    yield
    subcommand_summaries.cache_clear()


def _models(monkeypatch) -> Roles:
    """sysa repeats every word it is asked for; sysb never does."""
    return Roles(sysa=lambda messages, params: messages[-1]["content"].split(": ")[1],
                 sysb=lambda messages, params: "no.").install(monkeypatch)


def _population(root):
    """A folder that passes as a `personalens generate` output (echo reads none of it)."""
    (root / "synthetic_data").mkdir(parents=True)
    (root / "ground_truth" / "c").mkdir(parents=True)
    (root / "ground_truth" / "c" / "profiles.json").write_text("[]")
    return root


def test_the_cli_builds_its_commands_from_the_declaration(registered):
    listed = personalens("--help")
    assert listed.returncode == 0 and "echo" in listed.stdout
    shown = personalens("echo", "eval", "--help")
    assert shown.returncode == 0, shown.stderr
    for flag in ("--data", "--out", "--retriever", "--repeats", "--model"):
        assert flag in shown.stdout
    assert "personalens echo eval --data . --out runs/echo" in shown.stdout


def test_runs_of_it_compare_as_any_lens_commands_do(registered, monkeypatch, tmp_path):
    _models(monkeypatch)
    assert "echo eval" in comparable_commands()
    for name in ("sysa", "sysb"):
        ran = personalens("echo", "eval", "--data", tmp_path, "--model", f"openai/{name}",
                          "--out", tmp_path / name)
        assert ran.returncode == 0, ran.stderr
    compared = personalens("compare", tmp_path / "sysa", tmp_path / "sysb", "--out",
                           tmp_path / "compare")
    assert compared.returncode == 0, compared.stderr
    result = json.loads((tmp_path / "compare" / "comparison.json").read_text())
    assert result["command"] == "echo eval"
    [pair] = result["pairs"]
    assert (pair["headline"], pair["diff"], pair["n"]) == ("echo_rate", 1.0, len(echo.WORDS))


def test_it_is_a_scorecard_column_with_its_sizes_options(registered, monkeypatch, tmp_path):
    from personalens.scorecard.inputs import make_plan
    from personalens.scorecard.runner import run_scorecard

    _models(monkeypatch)
    out = tmp_path / "card"
    plan = make_plan(SYSTEMS, out=out, judge="openai/judge", size="tiny",
                     population=_population(tmp_path / "population"), lenses="echo")
    card, complete = run_scorecard(plan, echo=lambda text: None, progress=False)
    assert complete and card["lenses"] == ["echo"]
    assert card["metrics"] == {"echo.echo_rate": {
        "label": "echo rate (0-1)", "short": "echo", "group": "repeat",
        "higher_is_better": True, "judged": False}}
    n = 2 * len(echo.WORDS)  # tiny asks each word twice (the lens's declared size)
    assert card["systems"]["a"]["echo"]["echo_rate"] == {"value": 1.0, "ci_low": 1.0,
                                                         "ci_high": 1.0, "n": n}
    assert card["systems"]["b"]["echo"]["echo_rate"]["value"] == 0.0
    assert card["pairs"]["a__vs__b"]["echo"]["echo_rate"]["diff"] == 1.0
    config = json.loads((out / "echo" / "b" / "manifest.json").read_text())["config"]
    assert (config["repeats"], config["retriever"]) == (2, "minilm")  # size and system
    assert config["data"] == str((tmp_path / "population").resolve())
    assert config["models"] == {"target": "openai/sysb"}
    page = (out / "scorecard.html").read_text()
    assert "repeat: echo ↑" in page and "repeat = echo" in page


def test_it_is_an_inspect_task_with_its_options_as_parameters(registered, tmp_path):
    import inspect

    from personalens.inspect_tasks.lens_task import lens_task_function, task_lenses
    from personalens.inspect_tasks.parameters import REQUIRED

    assert "echo" in task_lenses()
    task = lens_task_function("echo")
    parameters = inspect.signature(task).parameters
    assert list(parameters) == ["data", "retriever", "repeats"]
    assert parameters["data"].default is REQUIRED and parameters["repeats"].default == 1
    assert "Times each word is asked." in task.__doc__
    built = task(data=str(tmp_path), repeats=2)
    assert built.name == "echo" and len(built.dataset) == 2 * len(echo.WORDS)
    assert built.metadata["task_args"] == {"data": str(tmp_path), "retriever": "bm25",
                                           "repeats": 2}
    from tests.inspect_tasks.test_tasks import run_inspect

    log = run_inspect(built, tmp_path, "scripted")
    assert log.eval.task_registry_name == "personalens/echo"
    assert len(log.samples) == 2 * len(echo.WORDS)
