"""Two-rater agreement (the judge audit): each figure against arithmetic done by hand below.

The tables are small and chosen so that each formula's near misses give another number:
quadratic, linear and unweighted kappa differ; AC2 differs from kappa; ordinal alpha differs from
nominal and interval alpha; dropping the unseen categories 3 and 4 changes the weighted figures.
"""

from fractions import Fraction as F

import krippendorff
import numpy as np
import pytest

from personalens.stats import agreement
from personalens.stats.agreement import (
    agreement_weights,
    cohen_kappa,
    exact_agreement,
    gwet_ac2,
    krippendorff_alpha,
    paired_units,
)
from personalens.stats.bootstrap import _percentiles

FIVE = [1, 2, 3, 4, 5]


def agreement_figures(*ratings, **options) -> dict[str, dict]:
    """The four figures as metrics hold them: {name: {value, ci_low, ci_high, n}}."""
    return {name: figure.model_dump()
            for name, figure in agreement.agreement_figures(*ratings, **options).items()}

# Case A, categories [1, 2, 3]; units (a, b): (1,1) (1,2) (2,2) (3,3) (3,1). Counts, a by b:
#          b=1 b=2 b=3 | a's margin
#   a=1     1   1   0  |  2/5
#   a=2     0   1   0  |  1/5
#   a=3     1   0   1  |  2/5
#   b's     2/5 2/5 1/5
A = ([1, 1, 2, 3, 3], [1, 2, 2, 3, 1])
# Weights, q = 3 (one step = 1, two steps = 2 between indices):
#   identity:  1, 0, 0    linear: 1, 1/2, 0    quadratic: 1, 1 - 1/4 = 3/4, 0
# Chance products a_k * b_l summed by distance: on the diagonal .4*.4 + .2*.4 + .4*.2 = 8/25;
# one step apart (1,2) .4*.4 + (2,1) .2*.4 + (2,3) .2*.2 + (3,2) .4*.4 = 11/25; two: 6/25.
A_DIAG, A_ONE_STEP = F(8, 25), F(11, 25)

# Case B, categories 1..5 with nobody giving a 3 or a 4; units (1,2) (2,2) (2,5) (5,5) (5,1).
# Both raters' margins: 1 -> 1/5, 2 -> 2/5, 5 -> 2/5.
B = ([1, 2, 2, 5, 5], [2, 2, 5, 5, 1])


def _kappa(p_o: F, p_e: F) -> F:
    return (p_o - p_e) / (1 - p_e)


# --- weights -------------------------------------------------------------------------------


def test_agreement_weights_count_steps_between_category_indices():
    assert agreement_weights(3, "identity").tolist() == np.eye(3).tolist()
    assert agreement_weights(3, "linear") == pytest.approx(
        np.array([[1, .5, 0], [.5, 1, .5], [0, .5, 1]]), abs=0)
    assert agreement_weights(3, "quadratic") == pytest.approx(
        np.array([[1, .75, 0], [.75, 1, .75], [0, .75, 1]]), abs=0)
    # q = 5, quadratic: 1 - d^2/16 for d = 0..4 steps.
    assert agreement_weights(5, "quadratic")[0].tolist() == [1, 15 / 16, 12 / 16, 7 / 16, 0]
    assert agreement_weights(5, "linear")[0].tolist() == [1, .75, .5, .25, 0]
    assert agreement_weights(1, "quadratic").tolist() == [[1.0]]
    with pytest.raises(ValueError, match="weights"):
        agreement_weights(3, "cubic")


# --- exact agreement and the paired units --------------------------------------------------


def test_exact_agreement_counts_equal_ratings_over_units_both_rated():
    assert exact_agreement(*A) == pytest.approx(3 / 5, abs=1e-15)  # (1,1) (2,2) (3,3)
    # A unit either rater skipped is no unit: the NaN units would otherwise add 1 and 0.
    a = [1, 1, 2, 3, 3, np.nan, 4, np.nan]
    b = [1, 2, 2, 3, 1, 4, np.nan, np.nan]
    pa, pb = paired_units(a, b)
    assert pa.tolist() == A[0] and pb.tolist() == A[1]
    assert exact_agreement(a, b) == pytest.approx(3 / 5, abs=1e-15)
    assert exact_agreement([np.nan, 1], [2, np.nan]) is None
    assert exact_agreement([], []) is None
    with pytest.raises(ValueError):
        paired_units([1, 2], [1, 2, 3])


# --- Cohen's kappa -------------------------------------------------------------------------


def test_kappa_unweighted_linear_and_quadratic_by_hand_are_three_different_numbers():
    # identity: p_o = 3/5; p_e = 8/25; kappa = (15/25 - 8/25) / (17/25) = 7/17 = 0.4118
    identity = _kappa(F(3, 5), A_DIAG)
    # linear: p_o = 3/5 + 1/2 * 1/5 (the unit (1,2)) = 7/10; (3,1) is two steps, weight 0
    #         p_e = 8/25 + 1/2 * 11/25 = 27/50; kappa = (35/50 - 27/50) / (23/50) = 8/23 = 0.3478
    linear = _kappa(F(3, 5) + F(1, 2) * F(1, 5), A_DIAG + F(1, 2) * A_ONE_STEP)
    # quadratic: p_o = 3/5 + 3/4 * 1/5 = 3/4; p_e = 8/25 + 3/4 * 11/25 = 13/20;
    #            kappa = (15/20 - 13/20) / (7/20) = 2/7 = 0.2857
    quadratic = _kappa(F(3, 5) + F(3, 4) * F(1, 5), A_DIAG + F(3, 4) * A_ONE_STEP)
    assert (identity, linear, quadratic) == (F(7, 17), F(8, 23), F(2, 7))
    cats = [1, 2, 3]
    assert cohen_kappa(*A, cats, weights="identity") == pytest.approx(float(identity), abs=1e-12)
    assert cohen_kappa(*A, cats, weights="linear") == pytest.approx(float(linear), abs=1e-12)
    assert cohen_kappa(*A, cats) == pytest.approx(float(quadratic), abs=1e-12)  # the default
    # The categories' order is the scale's; read backwards every distance is the same.
    assert cohen_kappa(*A, [3, 2, 1]) == pytest.approx(float(quadratic), abs=1e-12)


def test_kappa_weighs_steps_over_every_category_seen_or_not():
    # Case B, categories 1..5, quadratic w = 1 - d^2/16 on indices (a 2 -> 5 is 3 steps: 7/16).
    # Units: (1,2) d=1 15/16; (2,2) 1; (2,5) d=3 7/16; (5,5) 1; (5,1) d=4 0.
    p_o = (F(15, 16) + 1 + F(7, 16) + 1 + 0) / 5  # = 27/40
    # Chance: diagonal .2^2 + .4^2 + .4^2 = 9/25; (1,2) and (2,1) 2 * .2*.4 * 15/16 = 3/20;
    # (2,5) and (5,2) 2 * .4*.4 * 7/16 = 7/50; (1,5) and (5,1) weight 0.
    p_e = F(9, 25) + F(3, 20) + F(7, 50)  # = 13/20
    assert (p_o, p_e, _kappa(p_o, p_e)) == (F(27, 40), F(13, 20), F(1, 14))
    assert cohen_kappa(*B, FIVE) == pytest.approx(1 / 14, abs=1e-12)
    # Only the values seen, [1, 2, 5], would make 2 -> 5 one step (3/4) and 1 -> 5 two (0):
    # p_o = (3/4 + 1 + 3/4 + 1 + 0)/5 = 7/10, p_e = 9/25 + 2*.08*3/4 + 2*.16*3/4 = 18/25,
    # kappa = -1/14: the opposite sign.
    assert _kappa(F(7, 10), F(18, 25)) == F(-1, 14)
    assert cohen_kappa(*B, [1, 2, 5]) == pytest.approx(-1 / 14, abs=1e-12)


def test_kappa_is_undefined_on_one_value_throughout_or_fewer_than_two_units():
    # Both raters gave 3 everywhere: p_o = p_e = 1, 0/0.
    assert cohen_kappa([3, 3, 3, 3], [3, 3, 3, 3], FIVE) is None
    assert cohen_kappa([3, 3, np.nan], [3, 3, 1], FIVE, weights="identity") is None
    assert cohen_kappa([2], [4], FIVE) is None  # one unit
    assert cohen_kappa([], [], FIVE) is None
    # One value each, but not the same one: p_e = w(2, 4) = 12/16 = p_o, so kappa is 0.
    assert cohen_kappa([2, 2, 2], [4, 4, 4], FIVE) == pytest.approx(0.0, abs=1e-12)


# --- Gwet's AC2 ----------------------------------------------------------------------------


def test_ac2_by_hand_differs_from_kappa_with_every_weighting():
    # Case A. pi_k = (a's margin + b's margin)/2 = (.4+.4)/2, (.2+.4)/2, (.4+.2)/2 = .4, .3, .3;
    # sum pi (1 - pi) = .24 + .21 + .21 = 33/50.  q (q - 1) = 6.
    spread = F(33, 50)
    # identity (AC1): T_w = 3; p_e = 3/6 * 33/50 = 33/100; p_a = 3/5;
    #                 AC1 = (60 - 33) / (100 - 33) = 27/67 = 0.4030 (kappa 7/17 = 0.4118)
    ac1 = _kappa(F(3, 5), F(3, 6) * spread)
    # linear: T_w = 3 + 4 * 1/2 = 5; p_e = 5/6 * 33/50 = 11/20; p_a = 7/10;
    #         AC2 = (14/20 - 11/20) / (9/20) = 1/3 (kappa 8/23 = 0.3478)
    ac2_linear = _kappa(F(7, 10), F(5, 6) * spread)
    # quadratic: T_w = 3 + 4 * 3/4 = 6; p_e = 6/6 * 33/50 = 33/50; p_a = 3/4;
    #            AC2 = (75 - 66) / (100 - 66) = 9/34 = 0.2647 (kappa 2/7 = 0.2857)
    ac2_quadratic = _kappa(F(3, 4), F(6, 6) * spread)
    assert (ac1, ac2_linear, ac2_quadratic) == (F(27, 67), F(1, 3), F(9, 34))
    cats = [1, 2, 3]
    assert gwet_ac2(*A, cats, weights="identity") == pytest.approx(27 / 67, abs=1e-12)
    assert gwet_ac2(*A, cats, weights="linear") == pytest.approx(1 / 3, abs=1e-12)
    assert gwet_ac2(*A, cats) == pytest.approx(9 / 34, abs=1e-12)  # quadratic, the default


def test_ac2_counts_the_unseen_categories_in_its_weights_and_chance_agreement():
    # Case B, q = 5, quadratic. T_w = 5 * 1 + 8 * 15/16 + 6 * 12/16 + 4 * 7/16 + 2 * 0 = 75/4;
    # T_w / (q (q - 1)) = (75/4) / 20 = 15/16. pi = (.2, .4, 0, 0, .4):
    # sum pi (1 - pi) = .16 + .24 + .24 = 16/25; p_e = 15/16 * 16/25 = 3/5; p_a = 27/40 (above).
    t_w = 5 + 8 * F(15, 16) + 6 * F(12, 16) + 4 * F(7, 16)
    p_e = t_w / 20 * F(16, 25)
    assert (t_w, p_e, _kappa(F(27, 40), p_e)) == (F(75, 4), F(3, 5), F(3, 16))
    assert gwet_ac2(*B, FIVE) == pytest.approx(3 / 16, abs=1e-12)
    # Over the seen [1, 2, 5] only: T_w = 3 + 4 * 3/4 = 6, factor 1, p_e = 16/25, p_a = 7/10,
    # AC2 = (70 - 64) / (100 - 64) = 1/6.
    assert gwet_ac2(*B, [1, 2, 5]) == pytest.approx(1 / 6, abs=1e-12)


def test_ac2_of_one_value_throughout_is_one_and_defined_on_a_single_unit():
    # All 3s: p_a = 1; pi = (0, 0, 1, 0, 0) so sum pi (1 - pi) = 0 and p_e = 0: AC2 = 1/1 = 1.
    # (Kappa's chance agreement is 1 there, and kappa undefined.)
    assert gwet_ac2([3, 3, 3, 3], [3, 3, 3, 3], FIVE) == 1.0
    assert gwet_ac2([3, 3, 3, 3], [3, 3, 3, 3], FIVE, weights="identity") == 1.0
    assert gwet_ac2([3], [3], FIVE) == 1.0
    # One value each, 2 and 4: p_a = w(2 steps) = 12/16; pi = (0, .5, 0, .5, 0), sum = 1/2,
    # p_e = 15/16 * 1/2 = 15/32; AC2 = (24/32 - 15/32) / (17/32) = 9/17 (kappa: 0).
    assert gwet_ac2([2, 2, 2], [4, 4, 4], FIVE) == pytest.approx(9 / 17, abs=1e-12)
    assert gwet_ac2([], [], FIVE) is None
    assert gwet_ac2([np.nan], [1], FIVE) is None
    assert gwet_ac2([1, 1], [1, 1], [1]) is None  # one category: q (q - 1) = 0


# --- Krippendorff's alpha ------------------------------------------------------------------

# Units (a, b): (1,1) (2,3) (3,3) (3,2) (1,2); each unit adds both ordered pairs to the
# coincidence matrix (1/(m_u - 1) = 1 with two values per unit):
#        1  2  3  | n_c
#   1  [ 2, 1, 0] |  3
#   2  [ 1, 0, 2] |  3
#   3  [ 0, 2, 2] |  4        n = 10;  alpha = 1 - (n - 1) sum o d2 / sum n_c n_k d2
C = ([1, 2, 3, 3, 1], [1, 3, 3, 2, 2])


def test_alpha_ordinal_nominal_and_interval_by_hand_from_the_coincidence_matrix():
    n = 10
    off = {(1, 2): 2, (2, 3): 4, (1, 3): 0}  # o_ck + o_kc off the diagonal
    pairs = {(1, 2): 3 * 3, (2, 3): 3 * 4, (1, 3): 3 * 4}  # n_c n_k (counted twice below)
    # nominal: d2 = 1 off the diagonal. observed 2 + 4 = 6; expected 2 * (9 + 12 + 12) = 66;
    #          alpha = 1 - 9 * 6 / 66 = 2/11 = 0.1818
    # interval: d2 = (c - k)^2. observed 2 * 1 + 4 * 1 = 6; expected 2 * (9 + 12 + 12 * 4) = 138;
    #          alpha = 1 - 9 * 6 / 138 = 14/23 = 0.6087
    # ordinal: d_ck = sum_{g=c..k} n_g - (n_c + n_k)/2:
    #          d12 = 6 - 3 = 3 -> 9; d23 = 7 - 7/2 = 7/2 -> 49/4; d13 = 10 - 7/2 = 13/2 -> 169/4
    #          observed 2 * 9 + 4 * 49/4 = 67; expected 2 * (9 * 9 + 12 * 49/4 + 12 * 169/4) = 1470
    #          alpha = 1 - 9 * 67 / 1470 = 289/490 = 0.5898
    d2 = {"nominal": {(1, 2): 1, (2, 3): 1, (1, 3): 1},
          "interval": {(1, 2): 1, (2, 3): 1, (1, 3): 4},
          "ordinal": {(1, 2): F(9), (2, 3): F(49, 4), (1, 3): F(169, 4)}}
    expected = {}
    for level, d in d2.items():
        observed = sum(off[p] * d[p] for p in off)
        chance = 2 * sum(pairs[p] * d[p] for p in pairs)
        expected[level] = 1 - F(n - 1) * observed / chance
    assert expected == {"nominal": F(2, 11), "interval": F(14, 23), "ordinal": F(289, 490)}
    for level, value in expected.items():
        assert krippendorff_alpha(*C, level=level) == pytest.approx(float(value), abs=1e-12)
    assert krippendorff_alpha(*C) == pytest.approx(289 / 490, abs=1e-12)  # ordinal, the default


def test_alpha_drops_units_one_rater_missed_and_matches_the_package():
    rng = np.random.default_rng(3)
    a = rng.integers(1, 6, 40).astype(float)
    b = np.clip(a + rng.integers(-2, 3, 40), 1, 5)
    a[[3, 7]], b[[5, 11, 12]] = np.nan, np.nan
    both = ~(np.isnan(a) | np.isnan(b))
    for level in ("ordinal", "nominal", "interval"):
        reference = krippendorff.alpha(reliability_data=np.vstack([a[both], b[both]]),
                                       level_of_measurement=level)
        assert krippendorff_alpha(a, b, level=level) == pytest.approx(reference, abs=1e-12)
        # The package itself leaves a unit with one value unpaired: the same number.
        whole = krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement=level)
        assert krippendorff_alpha(a, b, level=level) == pytest.approx(whole, abs=1e-12)
    # Two of C's units again with a rating missing: alpha is C's.
    assert krippendorff_alpha([*C[0], 5, np.nan], [*C[1], np.nan, 1]) == pytest.approx(289 / 490)


def test_alpha_is_undefined_without_variation_or_with_fewer_than_two_units():
    assert krippendorff_alpha([3, 3, 3], [3, 3, 3]) is None
    assert krippendorff_alpha([3, 3, 3], [3, 3, 3], level="interval") is None
    assert krippendorff_alpha([1], [2]) is None
    assert krippendorff_alpha([1, np.nan], [np.nan, 2]) is None
    assert krippendorff_alpha([1, 2, 2], [1, 2, 2]) == 1.0


# --- values off the scale ------------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda a, b: cohen_kappa(a, b, FIVE),
    lambda a, b: gwet_ac2(a, b, FIVE),
    lambda a, b: agreement_figures(a, b, FIVE, resamples=10),
])
def test_a_value_outside_the_categories_raises_and_names_it(call):
    with pytest.raises(ValueError, match=r"\b7\b"):
        call([1, 2, 7], [1, 2, 3])
    with pytest.raises(ValueError, match=r"2\.5"):
        call([1, 2, 3], [1, 2.5, 3])
    # Even in a unit the other rater skipped: a stray value is a broken rating, not a gap.
    with pytest.raises(ValueError, match=r"\b0\b"):
        call([1, 2, 0], [1, 2, np.nan])


# --- the figures and their bootstrap CIs ---------------------------------------------------


def _example(n: int = 60, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, n).astype(float)
    b = np.clip(a + rng.choice([-2, -1, 0, 0, 0, 1], n), 1, 5)
    a[0], b[1] = np.nan, np.nan  # two units out
    return a, b


def test_figures_are_the_statistics_on_the_paired_units_and_their_cis_contain_them():
    a, b = _example()
    figures = agreement_figures(a, b, FIVE)
    assert list(figures) == ["exact", "alpha", "ac2", "kappa"]
    points = {"exact": exact_agreement(a, b), "alpha": krippendorff_alpha(a, b),
              "ac2": gwet_ac2(a, b, FIVE), "kappa": cohen_kappa(a, b, FIVE)}
    for name, figure in figures.items():
        assert figure["n"] == 58
        assert figure["value"] == points[name]
        assert figure["ci_low"] < figure["value"] < figure["ci_high"], name
        assert 0 < figure["ci_high"] - figure["ci_low"] < 0.5, name


def test_the_four_cis_come_from_the_one_documented_draw():
    a, b = _example(n=30)
    pa, pb = paired_units(a, b)
    resamples, seed = 200, 7
    rows = np.random.default_rng(seed).integers(0, len(pa), (resamples, len(pa)))
    statistics = {"exact": exact_agreement,
                  "alpha": lambda x, y: krippendorff_alpha(x, y, level="interval"),
                  "ac2": lambda x, y: gwet_ac2(x, y, FIVE, weights="linear"),
                  "kappa": lambda x, y: cohen_kappa(x, y, FIVE, weights="linear")}
    figures = agreement_figures(a, b, FIVE, level="interval", weights="linear",
                                resamples=resamples, seed=seed)
    for name, statistic in statistics.items():
        values = [statistic(pa[r], pb[r]) for r in rows]
        low, high = _percentiles(np.array([v for v in values if v is not None]), 0.95)
        assert (figures[name]["ci_low"], figures[name]["ci_high"]) == pytest.approx(
            (low, high), abs=1e-12), name


def test_drawing_the_resamples_in_blocks_changes_nothing(monkeypatch):
    a, b = _example(n=25)
    whole = agreement_figures(a, b, FIVE, resamples=150, seed=2)
    monkeypatch.setattr(agreement, "_CHUNK_VALUES", 7 * 23)  # blocks of 7 rows of 23 units
    assert agreement_figures(a, b, FIVE, resamples=150, seed=2) == whole


def test_perfect_agreement_gives_ci_exactly_one_on_every_resample_where_defined():
    # Three units (1,1) (2,2) (2,2): a resample of one unit thrice has no variation, so kappa
    # and alpha skip it; AC2 (p_e = 0 there) and exact agreement are 1 on all of them.
    figures = agreement_figures([1, 2, 2, np.nan], [1, 2, 2, 4], FIVE, resamples=300)
    for name, figure in figures.items():
        assert (figure["value"], figure["ci_low"], figure["ci_high"], figure["n"]) == (
            1, 1, 1, 3), name
    a = np.array([1, 2, 3, 4, 5, 5, 4, 2], dtype=float)
    for name, figure in agreement_figures(a, a, FIVE, resamples=300).items():
        assert (figure["value"], figure["ci_low"], figure["ci_high"]) == (1, 1, 1), name


def test_no_paired_unit_gives_no_figure_and_no_ci():
    for a, b in (([], []), ([1, np.nan], [np.nan, 2])):
        figures = agreement_figures(a, b, FIVE)
        assert figures == {name: {"value": None, "ci_low": None, "ci_high": None, "n": 0}
                           for name in ("exact", "alpha", "ac2", "kappa")}


def test_one_paired_unit_leaves_kappa_and_alpha_undefined_and_their_cis_none():
    figures = agreement_figures([2, 5], [3, np.nan], FIVE, resamples=50)
    # One unit (2, 3): exact 0; AC2 p_a = 15/16, pi = (0, .5, .5, 0, 0) -> p_e = 15/16 * 1/2,
    # AC2 = (15/16 - 15/32) / (17/32) = 15/17 on every resample.
    assert figures["exact"] == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 1}
    assert figures["ac2"]["value"] == pytest.approx(15 / 17, abs=1e-12)
    assert figures["ac2"]["ci_low"] == figures["ac2"]["ci_high"] == figures["ac2"]["value"]
    for name in ("kappa", "alpha"):
        assert figures[name] == {"value": None, "ci_low": None, "ci_high": None, "n": 1}
