"""Every path option of every command accepts relative paths, `~` and symlinks.

Each command runs from a working directory other than the data's, reaching the data through a
relative path, a symlinked folder or `~`; its outputs land where the path says, and a dataset
reached through any spelling has the same fingerprint as through its absolute path.
"""

import inspect
import json
import shutil
import typing
from pathlib import Path

import pytest
import typer

from personalens.cli.app import app
from personalens.cli.lazy_group import leaf_commands
from personalens.runs.options import user_path
from tests.cli_runner import personalens
from tests.conftest import EXAMPLE
from tests.lenses.pqb.test_build import GATES, write_reviews
from tests.lenses.pqb.test_eval import META, QUERIES
from tests.prefdisco_data import MMLU_ROW, record, write
from tests.prisk_double import dataset as prisk_dataset


def _ran(result, *allowed: int) -> None:
    """Finished (or finished incomplete: a scripted model answers badly), never crashed."""
    assert result.returncode in (allowed or (0,)), result.stderr
    assert "Traceback" not in result.stderr


def _manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


@pytest.fixture
def places(tmp_path, monkeypatch):
    """home/ holds the data (some of it behind a symlink); work/ is where commands run."""
    home, work = tmp_path / "home", tmp_path / "work"
    (home / "real").mkdir(parents=True)
    work.mkdir()
    (home / "linked").symlink_to(home / "real", target_is_directory=True)
    return home, work


@pytest.mark.minilm
@pytest.mark.slow
def test_personabench_and_pqb_from_another_directory(places):
    home, work = places
    shutil.copytree(EXAMPLE, home / "real" / "example")
    env = {"HOME": str(home)}
    # The example data has unrevealed items: validate reads it all, reports them, exits 1.
    checked = personalens("personabench", "validate", "../home/linked/example", cwd=work,
                          env=env)
    _ran(checked, 1)
    assert "is not revealed by its session(s)" in checked.stdout + checked.stderr
    _ran(personalens("personabench", "eval", "--data", "~/linked/example", "--noise", "0.0",
                     "--retriever", "bm25", "--no-answer", "--out", "runs/pb", cwd=work,
                     env=env))
    assert (work / "runs/pb/metrics.json").is_file()
    absolute = home / "pb-abs"
    _ran(personalens("personabench", "eval", "--data", (home / "real/example").resolve(),
                     "--noise", "0.0", "--retriever", "bm25", "--no-answer", "--out", absolute))
    assert _manifest(work / "runs/pb")["dataset_hash"] == _manifest(absolute)["dataset_hash"]

    shutil.copy(QUERIES, home / "real" / "queries.json")
    shutil.copy(META, home / "real" / "meta.jsonl")
    for name, retriever in (("a", "bm25"), ("b", "minilm")):  # two systems, two names
        _ran(personalens("pqb", "eval", "--queries", "../home/linked/queries.json", "--meta",
                         "~/linked/meta.jsonl", "--retriever", retriever, "--out",
                         f"runs/{name}", cwd=work, env=env))
    _ran(personalens("pqb", "compare", "runs/a", "~/../work/runs/b", "--out", "runs/cmp",
                     cwd=work, env=env))
    assert (work / "runs/cmp/report.html").is_file()
    _ran(personalens("compare", "runs/a", "~/../work/runs/b", "--out", "runs/cmp2", cwd=work,
                     env=env))
    assert (work / "runs/cmp2/comparison.json").is_file()
    _ran(personalens("pqb", "export-beir", "--queries", "../home/linked/queries.json",
                     "--meta", "~/linked/meta.jsonl", "--out", "beir", cwd=work, env=env))
    assert (work / "beir" / "corpus.jsonl").is_file()
    write_reviews(home / "real" / "reviews.jsonl")
    _ran(personalens("pqb", "build", "--reviews", "../home/linked/reviews.jsonl", "--meta",
                     "~/linked/meta.jsonl", "--candidates", "templates", *GATES, "--out",
                     "runs/pqb-build", cwd=work, env=env))
    assert (work / "runs/pqb-build/queries.json").is_file()


def test_prefdisco_and_prisk_from_another_directory(places):
    """The crash of issue 20: prefdisco and prisk eval on a relative --data path."""
    home, work = places
    env = {"HOME": str(home)}
    (home / "real" / "pd").mkdir()
    write(home / "real" / "pd" / "mmlu.jsonl",
          [record("p1", MMLU_ROW, {"tone": "warm"}, {"tone": 1.0})])
    pd_args = ("--model", "scripted", "--conditions", "baseline", "--no-cache",
               "--allow-self-judging")
    _ran(personalens("prefdisco", "eval", "--data", "../home/linked/pd", *pd_args, "--out",
                     "runs/pd", cwd=work, env=env), 0, 3)
    _ran(personalens("prefdisco", "eval", "--data", "~/linked/pd/mmlu.jsonl", *pd_args,
                     "--out", "runs/pd-file", cwd=work, env=env), 0, 3)
    _ran(personalens("prefdisco", "eval", "--data", home / "real" / "pd", *pd_args, "--out",
                     home / "pd-abs"), 0, 3)
    assert (_manifest(work / "runs/pd")["dataset_hash"]
            == _manifest(home / "pd-abs")["dataset_hash"])

    prisk_dataset(home / "real" / "prisk")
    prisk_args = ("--model", "scripted", "--retriever", "bm25", "--samples", "1",
                  "--base-samples", "1", "--no-cache")
    _ran(personalens("prisk", "eval", "--data", "../home/linked/prisk", *prisk_args, "--out",
                     "runs/prisk", cwd=work, env=env), 0, 3)
    _ran(personalens("prisk", "eval", "--data", home / "real" / "prisk", *prisk_args, "--out",
                     home / "prisk-abs"), 0, 3)
    assert (_manifest(work / "runs/prisk")["dataset_hash"]
            == _manifest(home / "prisk-abs")["dataset_hash"])
    (home / "real" / "scores.csv").write_text(
        "record,profile,memory,score\n" + "".join(
            f"r{r},{p},{m},{(r * 7 + p * 3 + m * 5) % 10}\n"
            for r in range(8) for p in (0, 1) for m in (0, 1)))
    _ran(personalens("prisk", "stats", "--scores", "~/linked/scores.csv", "--out",
                     "runs/stats", cwd=work, env=env))
    assert (work / "runs/stats/metrics.json").is_file()


def _path_parameters():
    """(command, parameter, parser) for every parameter annotated as a path."""
    group = typer.main.get_group(app)
    found = []

    for path, command in leaf_commands(group):
        name = " ".join(path)
        callback = command.callback
        # The signature, not get_type_hints: a command built from an options model sets it.
        for parameter, declared in inspect.signature(callback).parameters.items():
            hint = declared.annotation
            if typing.get_origin(hint) is not typing.Annotated:
                continue
            base, *extras = typing.get_args(hint)
            if Path in (base, *typing.get_args(base),
                        *[a for t in typing.get_args(base) for a in typing.get_args(t)]):
                info = next(e for e in extras if hasattr(e, "parser"))
                found.append((name, parameter, info.parser))
    return found


def test_every_path_parameter_of_every_command_is_read_by_user_path():
    found = _path_parameters()
    names = {(command, parameter) for command, parameter, _ in found}
    # The commands that crashed, and the demo (too slow to run here), are among them.
    assert {("prefdisco eval", "data"), ("prisk eval", "data"), ("demo", "out"),
            ("generate", "profile_schema"), ("prefdisco build", "problems")} <= names
    assert [(c, p) for c, p, parser in found if parser is not user_path] == []


def test_user_path_expands_home_and_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    monkeypatch.chdir(tmp_path)
    assert user_path("~/data/x.jsonl") == tmp_path / "me" / "data" / "x.jsonl"
    assert user_path("runs/../out") == tmp_path / "out"
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "target")
    assert user_path("link") == tmp_path / "link"  # the name given, not where it points


@pytest.mark.minilm
def test_the_builds_from_another_directory(places):
    """generate, prefdisco build and prisk build read their input files through relative,
    `~` and symlinked paths (a scripted model writes nothing valid: the runs end incomplete,
    exit 3, but never crash and write where --out says)."""
    home, work = places
    env = {"HOME": str(home)}
    data = Path(__file__).resolve().parents[2] / "src" / "personalens"
    shutil.copy(data / "population" / "data" / "demo_schema.yaml", home / "real" / "schema.yaml")
    (home / "real" / "personas.txt").write_text("A retired ferry captain.\nA young potter.\n"
                                               "A night-shift nurse.\n")
    _ran(personalens("generate", "--people", "3", "--communities", "1", "--model", "scripted",
                     "--schema", "~/linked/schema.yaml", "--personas",
                     "../home/linked/personas.txt", "--out", "runs/gen", cwd=work, env=env),
         0, 3)
    assert (work / "runs/gen/manifest.json").is_file()

    (home / "real" / "pd").mkdir()
    (home / "real" / "pd" / "mmlu.jsonl").write_text(json.dumps(MMLU_ROW) + "\n")
    _ran(personalens("prefdisco", "build", "--problems", "../home/linked/pd/mmlu.jsonl",
                     "--personas", "1", "--per-problem", "1", "--model", "scripted",
                     "--no-cache", "--out", "runs/pdb", cwd=work, env=env), 0, 3)
    config = _manifest(work / "runs/pdb")["config"]
    assert config["problems"] == [str((home / "real" / "pd" / "mmlu.jsonl").resolve())]

    shutil.copy(data / "lenses" / "prisk" / "data" / "aita_queries.csv",
                home / "real" / "aita.csv")
    _ran(personalens("prisk", "build", "--risks", "agreement", "--aita", "~/linked/aita.csv",
                     "--profiles", "1", "--per-risk", "1", "--model", "scripted", "--no-cache",
                     "--out", "runs/prb", cwd=work, env=env), 0, 3)
    assert (work / "runs/prb/manifest.json").is_file()
