"""Every lens's metrics.json on committed fixtures, key by key, against the values recorded in
tests/golden/ (issue 21: the lens contract may change, no metric value may).

Each lens runs through the real CLI against scripted behaviours on a 127.0.0.1 server, so the
test does not depend on how options or records are spelled inside the package. To record new
golden files after a change that is meant to move a metric: PERSONALENS_WRITE_GOLDEN=1 pytest
tests/lenses/test_golden_metrics.py, then review the diff of tests/golden/.
"""

import json
import os
from pathlib import Path

import pytest

from tests.cli_runner import personalens
from tests.conftest import EXAMPLE
from tests.fault_server import FaultServer
from tests.lenses.personabench.test_e2e import oracle
from tests.lenses.pqb.test_eval import META, QUERIES
from tests.lenses.prefdisco import test_e2e as prefdisco_e2e
from tests.lenses.prisk import test_e2e as prisk_e2e
from tests.prisk_double import dataset as prisk_dataset

GOLDEN = Path(__file__).parents[1] / "golden"


def _partly_right(body: dict) -> str:
    """The gold answer with words added or dropped, so precision and recall differ (a perfect
    answer could not tell F1 from the mean of P and R)."""
    words = oracle(body).split()
    if len(body["messages"][-1]["content"]) % 2:
        return " ".join([*words, "plus", "pottery", "classes"])
    return " ".join(words[: max(1, len(words) // 2)])


def _personabench(tmp_path: Path) -> Path:
    out = tmp_path / "pb"
    with FaultServer(_partly_right) as server:
        result = personalens("personabench", "eval", "--data", EXAMPLE, "--noise", "0.0,0.5",
                             "--retriever", "bm25", "--model", "openai/m", "--no-cache",
                             "--base-url", server.base_url, "--out", out)
    assert result.returncode == 0, result.stderr
    return out


def _pqb(tmp_path: Path) -> Path:
    out = tmp_path / "pqb"
    result = personalens("pqb", "eval", "--queries", QUERIES, "--meta", META, "--retriever",
                         "bm25", "--out", out)
    assert result.returncode == 0, result.stderr
    return out


def _prefdisco(tmp_path: Path) -> Path:
    out = tmp_path / "pd"
    with FaultServer(prefdisco_e2e._roles()) as server:
        result = personalens(*prefdisco_e2e._args(prefdisco_e2e._dataset(tmp_path / "pd-data"),
                                                  server.base_url, out))
    assert result.returncode == 0, result.stderr
    return out


def _prisk(tmp_path: Path) -> Path:
    out = tmp_path / "prisk"
    with FaultServer(prisk_e2e._server_reply()) as server:
        result = personalens(*prisk_e2e._args(prisk_dataset(tmp_path / "prisk-data"),
                                              server.base_url, out))
    assert result.returncode == 0, result.stderr
    return out


def _flatten(value, prefix=""):
    """{"a.b.0": leaf}: a failing key names where the value moved."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items()
                for k, v in _flatten(item, f"{prefix}{key}.").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value)
                for k, v in _flatten(item, f"{prefix}{i}.").items()}
    return {prefix.rstrip("."): value}


@pytest.mark.parametrize("lens, run", [("personabench", _personabench), ("pqb", _pqb),
                                       ("prefdisco", _prefdisco), ("prisk", _prisk)])
def test_metrics_keep_their_values(tmp_path, lens, run):
    metrics = json.loads((run(tmp_path) / "metrics.json").read_text())
    golden = GOLDEN / f"{lens}.json"
    if os.environ.get("PERSONALENS_WRITE_GOLDEN") == "1":
        golden.write_text(json.dumps(metrics, indent=1, sort_keys=True) + "\n")
    expected = _flatten(json.loads(golden.read_text()))
    actual = _flatten(metrics)
    assert sorted(set(actual) ^ set(expected)) == []  # no key gained or lost
    moved = {k: (expected[k], actual[k]) for k in expected if not _same(expected[k], actual[k])}
    assert moved == {}


def _same(expected, actual) -> bool:
    numbers = (int, float)
    if isinstance(expected, numbers) and not isinstance(expected, bool) \
            and isinstance(actual, numbers) and not isinstance(actual, bool):
        return actual == pytest.approx(expected, rel=1e-9, abs=1e-12)
    return actual == expected
