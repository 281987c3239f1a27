"""The wheel carries every data file the code reads (issue 9): built from the checkout, installed
into an empty folder and run from there, not from the editable source."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]  # builds a wheel, runs generate: 15-25 s

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "personalens"
DATA = ["population/data/profile_schema.yaml", "population/data/demo_schema.yaml",
        "population/data/personas.txt", "population/data/first_names.txt",
        "population/data/last_names.txt", "lenses/prisk/data/irp_templates.json",
        "lenses/personabench/example_data/community_example/private_data/noise_0.0/"
        "Kwame Asante/conversation_data.json"]
RELEASE = ["eval_info/eval_info_all.json", "eval_info/qa_gt_context_all_noise_0.0.json",
           "graph_json/social_graph.json", "private_data/noise_0.0/conversation_data_all.json",
           "private_data/noise_0.0/user_ai_interaction_data_all.json",
           "private_data/noise_0.0/purchase_history_data_all.json"]

# Run in the subprocess: `personalens generate` from the installed copy, with the generator
# swapped for the schema-aware scripted double (as the `double` fixture does in-process).
GENERATE = """
import runpy, sys
target = sys.argv[1]
sys.path.append(sys.argv[2])  # tests.schema_double; appended so it cannot shadow the install
import personalens
assert personalens.__file__.startswith(target), personalens.__file__
import personalens.models.settings as settings_module
from tests.schema_double import schema_model

def load_model(spec, **kwargs):
    model = schema_model()
    model.ledger = kwargs["ledger"]
    return model

settings_module.load_model = load_model  # every role's model is built there
sys.argv = ["personalens", *sys.argv[3:]]
runpy.run_module("personalens", run_name="__main__", alter_sys=True)
"""


def _run(args: list, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=300)
    shown = [a for a in map(str, args) if a != GENERATE]
    assert result.returncode == 0, f"{shown}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built (through an sdist, as `python -m build` does) from a copy of the checkout.

    The copy keeps setuptools' build/ and egg-info out of the shared tree; a stale build/lib
    there could also slip files into the wheel that the configuration no longer ships.
    """
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    _run(["-m", "build", "--no-isolation", "--outdir", root / "dist", source], cwd=root)
    (found,) = (root / "dist").glob("personalens-*.whl")
    return found


def test_wheel_holds_every_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in DATA:
        assert f"personalens/{name}" in names
    shipped = {f"personalens/{p.relative_to(PACKAGE).as_posix()}" for p in PACKAGE.rglob("*")
               if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts}
    assert shipped - names == set()


def test_generate_runs_from_the_installed_wheel(wheel, tmp_path):
    target, cwd = tmp_path / "site", tmp_path / "elsewhere"
    target.mkdir()
    cwd.mkdir()
    _run(["-m", "pip", "install", "--no-deps", "--no-index", "--target", target, wheel], cwd=cwd)
    # PYTHONPATH comes before the venv's site-packages, where the editable install's .pth puts
    # src/ on sys.path; the dependencies still come from the venv.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env |= {"PYTHONPATH": str(target), "PYTHONNOUSERSITE": "1"}
    where = _run(["-c", "import personalens; print(personalens.__file__)"], cwd, env)
    assert Path(where.stdout.strip()).is_relative_to(target), where.stdout
    out = tmp_path / "gen"
    _run(["-c", GENERATE, target, REPO, "generate", "--model", "scripted", "--people", 3,
          "--communities", 1, "--attributes-per-person", 2, "--max-list-entries", 2,
          "--noise", "0.0", "--no-cache", "--out", out], cwd, env)
    community = out / "synthetic_data" / "community_0"
    for name in RELEASE:
        assert (community / name).is_file(), name
