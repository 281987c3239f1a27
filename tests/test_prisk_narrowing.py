"""PRISK narrowing: hand-computed coverage metrics and the Fisher/BH exclusion table."""

import math

import pytest
from scipy import stats

from personalens.lenses.prisk.narrowing import (
    ExclusionRow,
    age_group,
    attribute_groups,
    coverage_metrics,
    exclusion_table,
)

U = set("abcdefghij")  # |U| = 10
A = set("abcd")  # useful for this persona


def test_coverage_metrics_by_hand():
    # C_1 = {a, b, e} (x is outside U and dropped), C_2 = {c}; union {a, b, c, e}.
    # Base: B_1 = {a, f}, B_2 = {a, f, g, h}; base union {a, f, g, h}.
    m = coverage_metrics([{"a", "b", "e", "x"}, {"c"}], [{"a", "f"}, {"a", "f", "g", "h"}], U, A)
    assert set(m) == {"cr", "uir", "relcr_single", "relcr_mean", "relcr_union", "hmc", "jaccard",
                      "sir"}
    assert m["cr"] == pytest.approx(0.2)  # (3/10 + 1/10) / 2; union would give 0.4, x 0.25
    assert m["uir"] == pytest.approx(0.75)  # {a,b,c} of 4; a mean over samples would be 0.375
    assert m["relcr_single"] == pytest.approx(1.5)  # 3 / 2
    assert m["relcr_mean"] == pytest.approx(2 / 3)  # mean(3, 1) / mean(2, 4)
    assert m["relcr_union"] == pytest.approx(1.0)  # 4 / 4
    assert m["hmc"] == 1 and isinstance(m["hmc"], int)  # d is never mentioned
    assert m["jaccard"] == pytest.approx(0.6)  # {a,b,c} / {a,b,c,d,e}
    assert m["sir"] == pytest.approx(0.25)  # e of the 4 covered; with x kept it would be 1/5


def test_zero_denominators_are_none_not_zero_or_one():
    empty_base = coverage_metrics([{"a"}], [set()], U, A)
    assert empty_base["relcr_single"] is None and empty_base["relcr_mean"] is None
    assert empty_base["relcr_union"] is None and empty_base["uir"] == pytest.approx(0.25)
    nothing = coverage_metrics([set(), {"x"}], [{"a"}], U, set())
    assert nothing["uir"] is None and nothing["jaccard"] is None and nothing["sir"] is None
    assert nothing["cr"] == 0.0 and nothing["relcr_single"] == 0.0 and nothing["hmc"] == 0
    no_samples = coverage_metrics([], [], U, A)
    assert no_samples["cr"] is None and no_samples["relcr_mean"] is None
    assert no_samples["relcr_single"] is None and no_samples["hmc"] == 4
    assert coverage_metrics([{"a"}], [{"a"}], set(), set())["cr"] is None


@pytest.mark.parametrize(("text", "group"), [
    ("55-64 years", "40-59"),  # midpoint 59.5 is below 60
    ("38-45", "40-59"),  # midpoint 41.5; the lower end would say 25-39
    ("18-24 years", "<25"), ("25-34 years", "25-39"), ("35-44", "25-39"), ("45–54", "40-59"),
    ("60-69", "60+"), ("34", "25-39"), ("24", "<25"), ("25", "25-39"), ("40", "40-59"),
    ("65+ years", "60+"), ("Over 70", "60+"), ("under 18", "<25"), ("40s", "40-59"),
    ("late 30s", "25-39"),
    ("over 30", None),  # spans three groups
    ("under 40", None), ("Prefer not to say", None), ("", None), (None, None),
])
def test_age_groups(text, group):
    assert age_group(text) == group


def test_attribute_groups_normalise_text():
    persona = {"gender": " Male ", "age": "55-64 years", "economic_status": "Stable  income",
               "profession": "Professor"}
    assert attribute_groups(persona) == {"gender": "male", "age": "40-59",
                                         "economic_status": "stable income"}
    assert attribute_groups({}) == {"gender": None, "age": None, "economic_status": None}


def _rows():
    # Item x is in every U; r1-r3 leave it out. Item y is only in r1's and r4's U; r4 leaves it out.
    # r6's age is unknown, so it does not count for age; economic status has one group only.
    ages = ["<25", "<25", "60+", "60+", "60+", None]
    covered = [set(), set(), set(), {"x"}, {"x"}, {"x"}]
    rows = []
    for i in range(6):
        universe = {"x", "y"} if i in (0, 3) else {"x"}
        rows.append(ExclusionRow(f"r{i + 1}", {"gender": "female" if i < 3 else "male",
                                               "age": ages[i], "economic_status": "stable"},
                                 universe, covered[i] | ({"y"} if i == 0 else set())))
    return rows


def test_fisher_p_by_hand():
    # [[2 excluded, 0 kept] in <25, [1, 2] out]: N=5, 2 in, 3 excluded. P(X=k) = C(3,k)C(2,2-k)/10
    # = 0.1, 0.6, 0.3 for k = 0, 1, 2; two-sided p sums P <= P(2) = 0.3: 0.1 + 0.3 = 0.4.
    cell = exclusion_table(_rows())["x"]["age"]["<25"]
    assert cell["p"] == pytest.approx(0.4)
    assert stats.fisher_exact([[2, 0], [1, 2]]).pvalue == pytest.approx(0.4)  # cross-check
    assert (cell["n_in"], cell["n_out"]) == (2, 3)  # r6 (age unknown) is left out
    assert cell["rate_in"] == 1.0 and cell["rate_out"] == pytest.approx(1 / 3)
    assert cell["gap"] == pytest.approx(2 / 3) and math.isinf(cell["odds_ratio"])
    # One-sided: P(X >= 2) = 0.3.
    greater = exclusion_table(_rows(), alternative="greater")["x"]["age"]["<25"]
    assert greater["p"] == pytest.approx(0.3)


def test_exclusion_table_cells_and_bh_over_every_cell():
    table = exclusion_table(_rows())
    assert set(table) == {"x", "y"}
    assert set(table["x"]) == {"gender", "age", "economic_status"}
    female = table["x"]["gender"]["female"]
    # [[3, 0], [0, 3]]: P(X=3) = P(X=0) = 1/20, so p = 0.1.
    assert female["p"] == pytest.approx(0.1) and female["rate_in"] == 1.0
    assert female["rate_out"] == 0.0 and (female["n_in"], female["n_out"]) == (3, 3)
    assert table["x"]["gender"]["male"]["rate_in"] == 0.0
    assert table["x"]["age"]["60+"]["p"] == pytest.approx(0.4)
    # y: only r1 (female, kept) and r4 (male, excluded) can mention it: [[0,1],[1,0]], p = 1.
    y = table["y"]["gender"]["female"]
    assert (y["n_in"], y["n_out"], y["rate_in"], y["rate_out"]) == (1, 1, 0.0, 1.0)
    assert y["p"] == pytest.approx(1.0)
    stable = table["x"]["economic_status"]["stable"]
    assert stable["p"] is None and stable["p_adj"] is None and stable["n_out"] == 0
    # BH over the 8 testable cells p = 0.1, 0.1, 0.4, 0.4, 1, 1, 1, 1 (m = 8):
    # 0.1 -> min(8/2 * 0.1, 8/4 * 0.4, ...) = 0.4; 0.4 -> min(8/4 * 0.4, 8/8 * 1) = 0.8.
    # (Correcting per item instead, x's four cells, would give 0.2 and 0.4.)
    assert female["p_adj"] == pytest.approx(0.4)
    assert table["x"]["gender"]["male"]["p_adj"] == pytest.approx(0.4)
    assert table["x"]["age"]["<25"]["p_adj"] == pytest.approx(0.8)
    assert y["p_adj"] == pytest.approx(1.0)
    # Holm: 0.1 * 8 = 0.8; 0.4 * 6 = 2.4 -> 1.
    holm = exclusion_table(_rows(), correction="holm")
    assert holm["x"]["gender"]["female"]["p_adj"] == pytest.approx(0.8)
    assert holm["x"]["age"]["<25"]["p_adj"] == pytest.approx(1.0)
    assert set(female) == {"rate_in", "rate_out", "gap", "odds_ratio", "p", "p_adj", "n_in",
                           "n_out"}


def test_exclusion_table_of_nothing_is_empty():
    assert exclusion_table([]) == {}
