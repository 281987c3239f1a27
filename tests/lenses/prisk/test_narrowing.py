"""PRISK narrowing: hand-computed coverage metrics and the per-query A ∖ C exclusion table."""

import pytest

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
    assert set(m) == {"cr_union", "cr_per_sample", "uir", "uir_per_sample", "relcr",
                      "relcr_single", "relcr_mean", "relcr_union", "hmc", "jaccard", "sir"}
    # The paper's CR is on the same union C as UIR: |{a,b,c,e}| / 10 (x is outside U).
    assert m["cr_union"] == pytest.approx(0.4)  # the per-sample mean is 0.2, with x 0.25
    assert m["cr_per_sample"] == pytest.approx(0.2)  # (3/10 + 1/10) / 2
    assert m["uir"] == pytest.approx(0.75)  # {a,b,c} of 4; a mean over samples would be 0.375
    assert m["uir_per_sample"] == pytest.approx(0.375)  # (|{a,b}|/4 + |{c}|/4) / 2
    # The release's RelCR, per response against the base's union: (3/4 + 1/4) / 2.
    assert m["relcr"] == pytest.approx(0.5)
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
    assert nothing["cr_union"] == 0.0 and nothing["cr_per_sample"] == 0.0
    assert nothing["uir_per_sample"] is None
    assert nothing["relcr_single"] == 0.0 and nothing["hmc"] == 0
    no_samples = coverage_metrics([], [], U, A)
    assert no_samples["cr_union"] is None and no_samples["cr_per_sample"] is None
    assert no_samples["uir_per_sample"] is None and no_samples["relcr_mean"] is None
    assert no_samples["relcr_single"] is None and no_samples["hmc"] == 4
    empty_universe = coverage_metrics([{"a"}], [{"a"}], set(), set())
    assert empty_universe["cr_union"] is None and empty_universe["cr_per_sample"] is None


@pytest.mark.parametrize(("text", "group"), [
    ("55-64 years", "40-59"),  # midpoint 59.5 is below 60
    ("38-45", "40-59"),  # midpoint 41.5; the lower end would say 23-39
    ("18-24 years", "<=22"),  # midpoint 21: the paper's youngest band
    ("20-25", "<=22"), ("21-26", "23-39"),  # midpoints 22.5 and 23.5
    ("25-34 years", "23-39"), ("35-44", "23-39"), ("45–54", "40-59"),
    ("60-69", "60+"), ("34", "23-39"), ("22", "<=22"), ("23", "23-39"), ("24", "23-39"),
    ("40", "40-59"),
    ("65+ years", "60+"), ("Over 70", "60+"), ("under 18", "<=22"), ("40s", "40-59"),
    ("late 30s", "23-39"),
    ("over 30", None),  # spans three groups
    ("under 40", None), ("Prefer not to say", None), ("", None), (None, None),
])
def test_age_groups(text, group):
    assert age_group(text) == group


def test_attribute_groups_are_the_papers_four_normalised():
    persona = {"gender": " Male ", "age": "55-64 years", "economic_status": "Stable  income",
               "health_status": "Chronic  back pain", "profession": "Professor"}
    assert attribute_groups(persona) == {"gender": "male", "age": "40-59",
                                         "economic_status": "middle", "health_status": "unwell"}
    assert attribute_groups({}) == {"gender": None, "age": None, "economic_status": None,
                                    "health_status": None}


def _row(rid, query, gender, age, universe, useful, covered):
    return ExclusionRow(rid, query, {"gender": gender, "age": age, "health_status": "good"},
                        set(universe), set(useful), set(covered))


def _rows():
    # q1 (U = {x, y}): r1, r2 (female, <=22) find x useful and leave it out; r3 (male) does not
    # find x useful (left out, but not excluded: A ∖ C, not U ∖ C); r4 (male) covers x.
    # q2 (U = {x}), another query whose item happens to carry the same label: r5 (female)
    # covers x, r6 (male) leaves it out although useful.
    return [_row("r1", "q1", "female", "<=22", "xy", "x", ""),
            _row("r2", "q1", "female", "<=22", "xy", "xy", "y"),
            _row("r3", "q1", "male", "60+", "xy", "y", ""),
            _row("r4", "q1", "male", "60+", "xy", "x", "x"),
            _row("r5", "q2", "female", None, "x", "x", "x"),
            _row("r6", "q2", "male", None, "x", "x", "")]


def test_excluded_means_useful_and_not_covered_per_query():
    from scipy import stats

    table = exclusion_table(_rows())
    assert set(table) == {"q1", "q2"}
    female = table["q1"]["x"]["gender"]["female"]
    # A ∖ C: r1, r2 excluded, r3 (x not useful) and r4 (covered) not: [[2, 0], [0, 2]].
    # U ∖ C would count r3 too (rate out 0.5); pooling q1 and q2 by the label x would give
    # 2/3 against 1/3.
    assert (female["rate_in"], female["rate_out"], female["gap"]) == (1.0, 0.0, 1.0)
    assert (female["n_in"], female["n_out"]) == (2, 2)
    # Fisher, N = 4, 2 in, 2 excluded: P(X=2) = P(X=0) = 1/6, P(X=1) = 4/6; p = 1/3.
    assert female["p"] == pytest.approx(1 / 3)
    assert stats.fisher_exact([[2, 0], [0, 2]]).pvalue == pytest.approx(1 / 3)  # cross-check
    assert table["q1"]["x"]["age"]["<=22"]["gap"] == 1.0
    # y in q1: only r3 finds it useful and leaves it out; r1 leaves it out but does not need it.
    y = table["q1"]["y"]["gender"]["female"]
    assert (y["rate_in"], y["rate_out"]) == (0.0, 0.5)
    q2 = table["q2"]["x"]["gender"]["female"]
    assert (q2["rate_in"], q2["rate_out"], q2["n_in"], q2["n_out"]) == (0.0, 1.0, 1, 1)
    assert "age" not in table["q2"]["x"]  # nobody's age is known there
    health = table["q1"]["x"]["health_status"]["good"]
    assert health["p"] is None and health["p_adj"] is None and health["n_out"] == 0


def test_exclusion_correction_is_bh_within_each_query_by_default_and_follows_the_option():
    # Testable cells: q1 x: gender female, male, age <=22, 60+ (p = 1/3 each); q1 y: the same
    # four (p = 1); q2 x: female, male (p = 1). q1 has m = 8, the report m = 10.
    default = exclusion_table(_rows())["q1"]["x"]["gender"]["female"]
    # BH within q1: the 4th smallest of 8, 1/3 x 8/4 (the p = 1 above it stay 1).
    assert default["p_adj"] == pytest.approx(2 / 3)
    bh = exclusion_table(_rows(), correction="report-bh")["q1"]["x"]["gender"]["female"]
    assert bh["p_adj"] == pytest.approx(10 / 4 * (1 / 3))  # BH over the report: 5/6
    holm = exclusion_table(_rows(), correction="report-holm")["q1"]["x"]["gender"]["female"]
    assert holm["p_adj"] == pytest.approx(1.0)  # 10 x 1/3, capped
    # q2's cells are their own family under query-bh: m = 2, p = 1 stays 1.
    assert exclusion_table(_rows())["q2"]["x"]["gender"]["male"]["p_adj"] == pytest.approx(1.0)
    greater = exclusion_table(_rows(), alternative="greater")["q1"]["x"]["gender"]["female"]
    assert greater["p"] == pytest.approx(1 / 6)  # P(X >= 2)


def test_exclusion_table_of_nothing_is_empty():
    assert exclusion_table([]) == {}
