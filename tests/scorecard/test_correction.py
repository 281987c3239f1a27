"""The scorecard's options away from their defaults, through the real command (in this
process): `--correction bh` against holm, `--seed`, `--lenses` and `--population`, and what a
person reads of them (the page's "differs" mark), each against values computed by hand.

Each system's personabench eval is a hand-written run (the lens's own runner is replaced by
one that writes it), so the card's paired tests have these p-values. Ten questions at the tiny
size's noise 0.3, retriever minilm (nDCG = recall / 2):

              q1 .. q6   q7 .. q8   q9    q10
    a recall     1          0.5     0.5   0.5        F1: q1-q8 1, q9 0, q10 0.5
    b recall     0          0.5     0.5   0.5        F1: q1-q8 0, q9 1, q10 0.5

recall: a - b = 0.8 - 0.2 = 0.6; six differences of +1, the rest 0: exact sign-flip p = 2/2^6
= 1/32. F1: 0.85 - 0.15 = 0.7; eight +1 and one -1: the patterns of nine signs summing to
|7| or more are 1 + 9 + 9 + 1 of 512, p = 20/512 = 5/128.

The card corrects its 2 tests (recall, F1) across the card:
    holm: 2 x 1/32 = 1/16, then max(1/16, 5/128) = 1/16    -> both 0.0625: no pair differs
    bh:   5/128, then min(2 x 1/32, 5/128) = 5/128          -> both 0.039: both differ
Both raw p are below 0.05, so a mark made from the raw p shows under holm too.
(personalens compare, run by the card, corrects its own 3 tests (recall, nDCG, F1) apart:
holm 3/32 each; the card's 1/16 is its own correction, not a copy.)
"""

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from personalens.cli.app import app
from personalens.stats.paired import paired_difference
from tests.compare_runs import table_records, table_run

NOISE = "0.3"  # the tiny size's
RECALL = {"a": [1.0] * 6 + [0.5] * 4, "b": [0.0] * 6 + [0.5] * 4}
F1 = {"a": [1.0] * 8 + [0.0, 0.5], "b": [0.0] * 8 + [1.0, 0.5]}
HOLM, BH = 1 / 16, 5 / 128
TABLES = {NOISE: (RECALL, F1)}  # noise -> the records' values (a test may add a level)


def _population(root: Path) -> Path:
    """A folder that passes as a `personalens generate` output (its data is never read: the
    evals are replaced)."""
    (root / "synthetic_data").mkdir(parents=True)
    (root / "ground_truth" / "c").mkdir(parents=True)
    (root / "ground_truth" / "c" / "profiles.json").write_text("[]")
    return root


@pytest.fixture
def evals(monkeypatch):
    """Every run of the card writes the hand-written run of its system (once: a rerun resumes
    it as it is)."""
    from personalens.scorecard import runner

    ran = []

    def run(options, progress=True):
        out = Path(options.out)
        ran.append(out)
        if not out.exists():
            name = out.name
            table_run(out, f"sys{name}", [
                record for noise, (recall, f1) in TABLES.items()
                for record in table_records("minilm", noise, recall[name], f1[name])],
                metrics=True)
        return SimpleNamespace(complete=True, tally=SimpleNamespace(n_planned=10))

    monkeypatch.setattr(runner, "resolve", lambda target: run)
    return ran


def scorecard(out: Path, population: Path, *extra: str, size: str = "tiny") -> dict:
    result = CliRunner().invoke(app, [
        "scorecard", "--system", "a=openai/sysa", "--system", "b=openai/sysb",
        "--judge", "openai/judge", "--size", size, "--lenses", "personabench",
        "--population", str(population), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return json.loads((out / "scorecard.json").read_text())


def marked(page: str) -> dict[tuple[str, str], bool]:
    """(system, column) -> whether its cell carries the "differs" mark; the columns are the
    card's metrics in order (here recall, F1)."""
    body = page[page.index("<tbody>"):page.index("</tbody>")]
    out = {}
    for name, cells in re.findall(r"<tr><td>(\w+) [^<]*</td>(.*?)</tr>", body):
        for column, text in zip(("recall", "f1"), re.findall(r'<a href="[^"]+">([^<]*)</a>',
                                                           cells), strict=True):
            out[name, column] = text.endswith("*")
    return out


def test_bh_and_holm_adjust_the_cards_p_apart_and_the_page_marks_by_the_adjusted_p(
        tmp_path, evals):
    population, out = _population(tmp_path / "population"), tmp_path / "card"
    card = scorecard(out, population)
    assert evals == [out / "personabench" / "a", out / "personabench" / "b"]
    pairs = card["pairs"]["a__vs__b"]["personabench"]
    assert (pairs["recall"]["diff"], pairs["f1"]["diff"]) == (pytest.approx(0.6),
                                                              pytest.approx(0.7))
    assert (pairs["recall"]["n"], pairs["recall"]["test"]) == (10, "sign_flip")
    assert (pairs["recall"]["p"], pairs["f1"]["p"]) == (pytest.approx(1 / 32),
                                                        pytest.approx(5 / 128))
    assert card["correction"] == "holm"
    assert (pairs["recall"]["p_adj"], pairs["f1"]["p_adj"]) == (pytest.approx(HOLM),
                                                                pytest.approx(HOLM))
    # compare's own report corrects its three tests (recall, nDCG, F1): 3 x 1/32 each.
    compared = json.loads((out / "compare" / "personabench" / "comparison.json").read_text())
    assert [p["p_adj"] for p in compared["pairs"]] == pytest.approx([3 / 32] * 3)
    page = (out / "scorecard.html").read_text()
    # p < 0.05 raw, 0.0625 after holm: no cell is marked.
    assert marked(page) == {(s, m): False for s in "ab" for m in ("recall", "f1")}
    assert "after holm correction across the scorecard&#x27;s 2 paired tests" in page \
        or "after holm correction across the scorecard's 2 paired tests" in page

    card = scorecard(out, population, "--correction", "bh")  # the same runs, resumed
    pairs = card["pairs"]["a__vs__b"]["personabench"]
    assert card["correction"] == "bh"
    assert (pairs["recall"]["p"], pairs["f1"]["p"]) == (pytest.approx(1 / 32),
                                                        pytest.approx(5 / 128))
    assert (pairs["recall"]["p_adj"], pairs["f1"]["p_adj"]) == (pytest.approx(BH),
                                                                pytest.approx(BH))
    compared = json.loads((out / "compare" / "personabench" / "comparison.json").read_text())
    assert compared["correction"] == "bh"
    assert [p["p_adj"] for p in compared["pairs"]] == pytest.approx([5 / 128] * 3)
    page = (out / "scorecard.html").read_text()
    assert marked(page) == {(s, m): True for s in "ab" for m in ("recall", "f1")}
    assert "p (bh)" in page


def test_the_seed_reaches_the_cards_bootstrap(tmp_path, evals):
    """--seed 3: each pair's CI is the paired bootstrap of its units with seed 3, which for F1
    is not seed 0's (the exact test's p does not depend on the seed)."""
    card = scorecard(tmp_path / "card", _population(tmp_path / "population"), "--seed", "3")
    assert card["seed"] == 3
    entry = card["pairs"]["a__vs__b"]["personabench"]["f1"]
    order = sorted(range(10), key=lambda i: f"q{i + 1}")  # the units as compare pairs them
    a, b = ([F1[name][i] for i in order] for name in "ab")
    direct = {seed: paired_difference(a, b, seed=seed) for seed in (0, 3)}
    assert (entry["ci_low"], entry["ci_high"]) == (direct[3].ci_low, direct[3].ci_high)
    assert direct[0].ci_low != direct[3].ci_low
    assert entry["p"] == pytest.approx(5 / 128)


def test_the_lenses_and_the_population_given_are_the_ones_the_card_uses(tmp_path, evals):
    population = _population(tmp_path / "population")
    card = scorecard(tmp_path / "card", population)
    assert card["lenses"] == ["personabench"]
    assert card["population"] == str(population)
    assert list(card["metrics"]) == ["personabench.recall", "personabench.f1"]
    assert not (tmp_path / "card" / "population").exists()  # none generated
    # The cells: each system's own metrics.json figure at the size's noise.
    assert card["systems"]["a"]["personabench"]["recall"]["value"] == pytest.approx(0.8)
    assert card["systems"]["b"]["personabench"]["f1"]["value"] == pytest.approx(0.15)


def test_the_size_chooses_the_noise_level_the_card_reads(tmp_path, evals, monkeypatch):
    """The runs hold noise 0.3 (the table above) and 0.5, where a's recall is 1 and b's 0.5 on
    every question (a - b = 0.5 on all ten: sign-flip p = 2/2^10) and F1 is the other way
    round (0.5 - 1). --size small reads noise 0.5; tiny (above) 0.3."""
    monkeypatch.setitem(TABLES, "0.5", ({"a": [1.0] * 10, "b": [0.5] * 10},
                                        {"a": [0.5] * 10, "b": [1.0] * 10}))
    card = scorecard(tmp_path / "card", _population(tmp_path / "population"), size="small")
    assert card["size"] == "small"
    cells = {name: card["systems"][name]["personabench"] for name in "ab"}
    assert (cells["a"]["recall"]["value"], cells["b"]["recall"]["value"]) == (1.0, 0.5)
    assert (cells["a"]["f1"]["value"], cells["b"]["f1"]["value"]) == (0.5, 1.0)
    pairs = card["pairs"]["a__vs__b"]["personabench"]
    assert (pairs["recall"]["diff"], pairs["f1"]["diff"]) == (0.5, -0.5)
    assert pairs["recall"]["p"] == pytest.approx(2 / 2 ** 10)
    # holm over the card's 2 tests: 2 x 1/512 each
    assert pairs["f1"]["p_adj"] == pytest.approx(2 / 512)
