"""`personalens compare` on pqb runs: paired differences against hand-computed values, the
figures equal to the runs' own metrics.json, and every bad input refused with nothing written.

The hand-made runs hold three items (P1, P2, P3), each asked by two users (u1, u2), with these
ranks of the item (None: not in the top 20):

            clean: P1u1 P1u2 P2u1 P2u2 P3u1 P3u2   typo: P1u1 P1u2 P2u1 P2u2 P3u1 P3u2
    bm25           1    1    1    -    1    5            1    1    1    1    1    -
    minilm         1    -    -    -    1    1            1    -    -    -    1    1
"""

import json
from pathlib import Path

import pytest

from personalens.compare.paired_tests import compare_pairs
from personalens.compare.run_inputs import System
from personalens.lenses.commands import Headline
from personalens.report import forest_plot
from tests.cli_runner import personalens
from tests.compare_runs import UNITS, compare, personabench_run, pqb_run
from tests.conftest import SHARED

QUERIES = SHARED / "anchors/pqb/dataset/Musical_Instruments.excerpt.json"
META = Path(__file__).parents[1] / "fixtures/pqb/meta_Musical_Instruments.jsonl"


def _pair(comparison: dict, headline: str) -> dict:
    return next(p for p in comparison["pairs"] if p["headline"] == headline)


@pytest.fixture
def two_runs(tmp_path):
    return pqb_run(tmp_path / "a", "bm25"), pqb_run(tmp_path / "b", "minilm")


def test_paired_differences_of_pqb_runs_hand_computed(two_runs, tmp_path):
    out = tmp_path / "cmp"
    result, _ = compare(*two_runs, "--out", out)
    assert result.returncode == 0, result.stderr
    assert f"report: {out / 'report.html'}" in result.stdout
    comparison = json.loads((out / "comparison.json").read_text())
    runs = comparison["runs"]
    assert runs["bm25"]["headlines"]["hit.clean.20"] == {"value": pytest.approx(5 / 6), "n": 6}
    assert runs["minilm"]["headlines"]["hit.clean.20"]["value"] == pytest.approx(3 / 6)
    # Hit@20 clean: bm25 - minilm = 5/6 - 3/6; the discordant queries are P1u2 and P2u1, both
    # hit by bm25 only, so McNemar's exact p is 2 x (1/2)^2.
    hit = _pair(comparison, "hit.clean.20")
    assert (hit["a"], hit["b"], hit["n"], hit["test"]) == ("bm25", "minilm", 6, "mcnemar_exact")
    assert hit["diff"] == pytest.approx(1 / 3) and hit["p"] == pytest.approx(0.5)
    # Paired: every resample's difference is a mean of the per-query differences
    # (0, 1, 1, 0, 0, 0), never below 0, and 2.5 % of resamples draw none of the two ones
    # ((2/3)^6 = 8.8 %). An unpaired bootstrap (each run's queries resampled on their own)
    # dips below 0.
    assert hit["ci_low"] == 0.0 and hit["ci_high"] > hit["diff"]
    # Hit@20 typo: discordant 3 (bm25 only: P1u2, P2u1, P2u2) against 1 (minilm only: P3u2):
    # p = P(X <= 1) + P(X >= 3) for X ~ Bin(4, 1/2) = 10/16.
    typo = _pair(comparison, "hit.typo.20")
    assert typo["diff"] == pytest.approx(1 / 3) and typo["p"] == pytest.approx(10 / 16)
    # MRR clean: (1 + 1 + 1 + 0 + 1 + 1/5)/6 - (1 + 0 + 0 + 0 + 1 + 1)/6 = 0.2; the non-zero
    # differences 1, 1, -0.8: 4 of the 8 sign patterns sum to |1.2| or more.
    mrr = _pair(comparison, "mrr.clean")
    assert mrr["diff"] == pytest.approx(0.2) and mrr["test"] == "sign_flip"
    assert mrr["p"] == pytest.approx(0.5)
    # Flip rate @1 (paper): bm25 flips on P2 and P3 of 3 eligible pairs, minilm on P1 of 2
    # (P2: neither user hits): 2/3 - 1/2. Every one of the 8 swaps of a pair's rows gives a
    # difference at least as large (1, -1/6, -2/3, 2/3, 1/6, -1, -1/6), so p = 1.
    flip = _pair(comparison, "flip_rate.paper.1")
    assert flip["diff"] == pytest.approx(1 / 6) and flip["n"] == 3
    assert flip["test"] == "paired_permutation" and flip["p"] == pytest.approx(1.0)
    # Flip rate @20 (paper): bm25's pairs (1,1), (1,0), (1,1): 1 flip of 3; minilm's (1,0),
    # (0,0), (1,1): 1 of 2: 1/3 - 1/2. The four swaps of P1 and P2 (P3 is alike) give
    # -1/6, 2/3, -2/3 and 1/6: p = 1.
    flip20 = _pair(comparison, "flip_rate.paper.20")
    assert runs["bm25"]["headlines"]["flip_rate.paper.20"] == {"value": pytest.approx(1 / 3),
                                                                "n": 3}
    assert (flip20["diff"], flip20["n"]) == (pytest.approx(-1 / 6), 3)
    assert flip20["p"] == pytest.approx(1.0)
    # Hit@1 drop (clean - typo) per query: bm25 0, 0, 0, -1 (P2u2 hits only typed), 0, 0;
    # minilm 0 everywhere: -1/6 - 0, one non-zero difference: p = 1. Hit@20 drop: bm25
    # -1 (P2u2) and +1 (P3u2, clean rank 5, typo none): 0.
    drop1 = _pair(comparison, "hit.drop.1")
    assert runs["bm25"]["headlines"]["hit.drop.1"]["value"] == pytest.approx(-1 / 6)
    assert (drop1["diff"], drop1["test"], drop1["p"]) == (pytest.approx(-1 / 6), "sign_flip",
                                                          pytest.approx(1.0))
    drop20 = _pair(comparison, "hit.drop.20")
    assert runs["bm25"]["headlines"]["hit.drop.20"] == {"value": 0.0, "n": 6}
    assert (drop20["diff"], drop20["p"]) == (0.0, pytest.approx(1.0))
    # Holm over the report's 7 tests: the smallest p (0.5) times 7, capped at 1.
    assert [p["headline"] for p in comparison["pairs"]] == [
        "flip_rate.paper.1", "flip_rate.paper.20", "hit.clean.20", "hit.typo.20",
        "hit.drop.1", "hit.drop.20", "mrr.clean"]
    assert hit["p_adj"] == pytest.approx(1.0)
    report = (out / "report.html").read_text()
    assert "Paired differences" in report and "Units where two systems differ most" in report
    assert "query of u2 for P1" in report  # a unit where the two differ, in the browser


def test_bh_correction_and_order_of_runs(two_runs, tmp_path):
    """Given the other way round, every difference changes sign."""
    result, _ = compare(two_runs[1], two_runs[0], "--out", tmp_path / "cmp", "--correction",
                        "bh")
    assert result.returncode == 0, result.stderr
    comparison = json.loads((tmp_path / "cmp/comparison.json").read_text())
    hit = _pair(comparison, "hit.clean.20")
    assert (hit["a"], hit["diff"]) == ("minilm", pytest.approx(-1 / 3))
    assert hit["ci_high"] == 0.0
    assert comparison["correction"] == "bh" and hit["p_adj"] == pytest.approx(1.0)


def _system(name: str) -> System:
    return System(name, Path(name), True, [])


def test_holm_and_bh_adjust_across_the_whole_report():
    """Three 0/1 headlines with 10, 8 and 6 discordant units, all one way: McNemar's p are
    2/2^10 = 1/512, 1/128 and 1/32. Holm: 3/512, max(3/512, 2/128) = 1/64, 1/32. BH:
    min(3 x 1/512, ...) = 3/512, min(3/2 x 1/128, 1/32) = 3/256, 1/32."""
    a, b = _system("a"), _system("b")
    headlines = {name: {f"h{n}": Headline(f"h{n}", {str(i): float(name == "a" and i < n)
                                                    for i in range(12)}, binary=True)
                        for n in (10, 8, 6)} for name in "ab"}
    holm = compare_pairs([a, b], headlines)
    assert [p.p for p in holm] == pytest.approx([1 / 512, 1 / 128, 1 / 32])
    assert [p.p_adj for p in holm] == pytest.approx([3 / 512, 1 / 64, 1 / 32])
    bh = compare_pairs([a, b], headlines, correction="bh")
    assert [p.p_adj for p in bh] == pytest.approx([3 / 512, 3 / 256, 1 / 32])
    assert [p.value for p in bh] == pytest.approx([10 / 12, 8 / 12, 6 / 12])


def test_shared_items_restricts_every_figure_and_says_how_many(tmp_path):
    a = pqb_run(tmp_path / "a", "bm25")
    b = pqb_run(tmp_path / "b", "minilm", units=UNITS[:4], dataset_hash="data-2")
    out = tmp_path / "cmp"
    result, text = compare(a, b, "--out", out)
    assert result.returncode == 2 and "dataset_hash differs" in text
    assert str(a) in text and str(b) in text and text.count("\n") == 1
    assert not out.exists()
    result, _ = compare(a, b, "--out", out, "--shared-items")
    assert result.returncode == 0, result.stderr
    assert "shared items: 4" in result.stdout
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["shared_items"] == 4
    # bm25 on P1 and P2 only: hits 1, 1, 1, 0.
    assert comparison["runs"]["bm25"]["headlines"]["hit.clean.20"] == {
        "value": pytest.approx(3 / 4), "n": 4}
    assert comparison["runs"]["bm25"]["n_items"] == 4
    hits = comparison["tables"][2]["rows"][0]
    assert hits[0] == "bm25" and hits[4]["value"] == pytest.approx(3 / 4)
    assert "only the 4 items all runs share" in (out / "report.html").read_text()


def test_an_incomplete_run_is_refused_unless_allowed_then_marked(tmp_path):
    a = pqb_run(tmp_path / "a", "bm25", status="running")
    b = pqb_run(tmp_path / "b", "minilm")
    out = tmp_path / "cmp"
    result, text = compare(a, b, "--out", out)
    assert result.returncode == 2 and "incomplete" in text and str(a) in text
    assert text.count("\n") == 1 and not out.exists()
    result, _ = compare(a, b, "--out", out, "--allow-incomplete")
    assert result.returncode == 0, result.stderr
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["runs"]["bm25"]["status"] == "incomplete"
    assert [t["rows"][0][0] for t in comparison["tables"]] == ["bm25 [incomplete]"] * 4
    assert {p["a_label"] for p in comparison["pairs"]} == {"bm25 [incomplete]"}
    report = (out / "report.html").read_text()
    assert report.count("bm25 [incomplete]") >= 6  # runs, the 4 tables, the pairs


def test_a_run_with_failed_items_is_incomplete_and_scored_without_them(tmp_path):
    a = pqb_run(tmp_path / "a", "bm25", failed=("P4/u1",))
    b = pqb_run(tmp_path / "b", "minilm")
    result, text = compare(a, b, "--out", tmp_path / "refused")
    assert result.returncode == 2 and "incomplete" in text
    result, _ = compare(a, b, "--out", tmp_path / "cmp", "--allow-incomplete")
    assert result.returncode == 0, result.stderr
    comparison = json.loads((tmp_path / "cmp/comparison.json").read_text())
    assert comparison["runs"]["bm25"]["status"] == "incomplete"
    assert comparison["runs"]["bm25"]["headlines"]["hit.clean.20"] == {
        "value": pytest.approx(5 / 6), "n": 6}


def _not_a_run(tmp_path):
    (tmp_path / "empty").mkdir()
    return [tmp_path / "empty", pqb_run(tmp_path / "b", "minilm")], "not a run directory"


def _one_run(tmp_path):
    return [pqb_run(tmp_path / "a", "bm25")], "at least two run directories"


def _same_name(tmp_path):
    return [pqb_run(tmp_path / "a", "bm25"), pqb_run(tmp_path / "b", "bm25")], \
        "two systems are named 'bm25'"


def _other_lens(tmp_path):
    return [pqb_run(tmp_path / "a", "bm25"), personabench_run(tmp_path / "b", "bm25")], \
        "runs of different commands"


def _uncomparable(tmp_path):
    runs = [pqb_run(tmp_path / n, "bm25") for n in "ab"]
    for run in runs:
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["config"]["command"] = "pqb build"
        (run / "manifest.json").write_text(json.dumps(manifest))
    return runs, "runs of 'pqb build' cannot be compared"


def _foreign_records(tmp_path):
    runs = [pqb_run(tmp_path / n, r) for n, r in (("a", "bm25"), ("b", "minilm"))]
    lines = (runs[1] / "records.jsonl").read_text().replace('"pqb.eval/1"', '"prisk.eval/1"')
    (runs[1] / "records.jsonl").write_text(lines)
    return runs, f"{runs[1]}: record 'P1/u1' is a 'prisk.eval' record"


@pytest.mark.parametrize("case", [_not_a_run, _one_run, _same_name, _other_lens,
                                  _uncomparable, _foreign_records])
def test_bad_input_is_one_line_exit_2_nothing_written(case, tmp_path):
    runs, message = case(tmp_path)
    out = tmp_path / "cmp"
    result, text = compare(*runs, "--out", out)
    assert result.returncode == 2 and message in text, text
    assert result.stderr.count("\n") == 1 and not out.exists()


def test_pqb_compare_is_the_alias_for_pqb_runs_only(tmp_path):
    runs = [personabench_run(tmp_path / "a", "bm25"), personabench_run(tmp_path / "b", "minilm")]
    result = personalens("pqb", "compare", *runs, "--out", tmp_path / "cmp")
    assert result.returncode == 2 and "'pqb eval' runs" in result.stderr
    assert not (tmp_path / "cmp").exists()


@pytest.mark.minilm
def test_real_pqb_runs_figures_equal_their_metrics(tmp_path):
    """Two real runs of the release excerpt: every headline and table figure is the run's own
    metrics.json figure, recomputed from its records."""
    for retriever in ("bm25", "minilm"):
        result = personalens("pqb", "eval", "--queries", QUERIES, "--meta", META,
                             "--retriever", retriever, "--out", tmp_path / retriever)
        assert result.returncode == 0, result.stderr
    result = personalens("pqb", "compare", tmp_path / "bm25", tmp_path / "minilm", "--out",
                         tmp_path / "cmp")
    assert result.returncode == 0, result.stderr
    comparison = json.loads((tmp_path / "cmp/comparison.json").read_text())
    for retriever in ("bm25", "minilm"):
        metrics = json.loads((tmp_path / retriever / "metrics.json").read_text())
        assert comparison["metrics"][retriever] == metrics
        for key, figure in comparison["runs"][retriever]["headlines"].items():
            section, *path = key.split(".")
            expected = metrics[section]
            for part in path:
                expected = expected[part]
            assert figure["value"] == pytest.approx(expected["value"]), key
        paper, all_pairs, hits, _ = comparison["tables"]
        for table, definition in ((paper, "paper"), (all_pairs, "all_pairs")):
            row = next(r for r in table["rows"] if r[0] == retriever)
            assert row[1:] == [{k: metrics["flip_rate"][definition][str(n)][k]
                                for k in ("value", "ci_low", "ci_high")}
                               for n in (1, 5, 10, 20)]
        row = next(r for r in hits["rows"] if r[0] == retriever)
        assert row[-2] == metrics["mrr"]["clean"] and row[-1] == metrics["mrr"]["typo"]
    assert "Flip rate against K per retriever (all_pairs" in (tmp_path / "cmp/report.html") \
        .read_text()


def test_the_forest_plot_draws_defined_differences_and_marks_undefined_ones():
    png = forest_plot([("a - b: recall", 0.5, 0.0, 1.0), ("a - b: flip", None, None, None)],
                      "difference", "Paired differences")
    assert png.startswith(b"\x89PNG")
