"""`personalens scorecard --size tiny` with the bundled model, as the README runs it: one
system, every lens, from generation to the page. (Its time, ≤ 10 minutes on 2 cores from an
empty cache, is measured by bench/scorecard_tiny.py; the scripted end to end is
tests/scorecard/test_scorecard.py.)"""

import json

import pytest

from tests.cli_runner import personalens

BUNDLED = "local/smollm2-135m"
METRICS = {"personabench": ("recall", "f1"), "pqb": ("flip_rate", "typo_drop"),
           "prefdisco": ("normalign", "prefalign_discovery", "accuracy_drop"),
           "prisk": ("irp", "uir", "sycophancy")}


@pytest.mark.bundled_model
@pytest.mark.minilm
@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_a_tiny_scorecard_runs_every_lens_with_the_bundled_model(tmp_path):
    out = tmp_path / "card"
    result = personalens("scorecard", "--system", f"small={BUNDLED}", "--size", "tiny",
                         "--out", out, timeout=2300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == [f"scorecard: {out / 'scorecard.html'}",
                                          f"figures: {out / 'scorecard.json'}"]
    card = json.loads((out / "scorecard.json").read_text())
    assert (card["size"], card["judge"], card["user"]) == ("tiny", BUNDLED, BUNDLED)
    assert card["system_info"] == {"small": {"model": BUNDLED, "retriever": "minilm",
                                             "self_judged": True}}
    assert card["pairs"] == {}  # one system: nothing to pair
    for lens, names in METRICS.items():
        run = out / lens / "small"
        status = card["runs"]["small"][lens]["status"]
        manifest = json.loads((run / "manifest.json").read_text())
        assert manifest["status"] == "complete"
        # pqb's style gates rarely admit a query from three people's few sentences.
        assert status == "complete" or (lens, status) == ("pqb", "no items")
        assert sorted(card["systems"]["small"][lens]) == sorted(names)
        if status == "complete":
            assert set(manifest["models"].values()) <= {BUNDLED}
    metrics = json.loads((out / "prefdisco/small/metrics.json").read_text())
    assert card["systems"]["small"]["prefdisco"]["normalign"] == {
        k: metrics["normalign"]["overall"][k] for k in ("value", "ci_low", "ci_high", "n")}
    assert metrics["n_planned_instances"] == 2  # math and social, one problem each
    prisk = json.loads((out / "prisk/small/metrics.json").read_text())
    assert card["systems"]["small"]["prisk"]["sycophancy"] == \
        prisk["scores_100"]["sycophancy"]["profile_retrieval"]
    page = (out / "scorecard.html").read_text()
    assert 'href="prefdisco/small/report.html"' in page and "self-judged" in page
    # Rerunning resumes every run: nothing is asked of the model again.
    again = personalens("scorecard", "--system", f"small={BUNDLED}", "--size", "tiny",
                        "--out", out, "--dry-run", timeout=600)
    assert again.returncode == 0, again.stderr
    assert "generate population: done (reused)" in again.stdout
    assert "prefdisco · small: 6 items" in again.stdout
