"""Fisher's exact test on a group-gap 2x2 table (excluded or not, in the group or not)."""

from typing import Literal

from scipy import stats

Alternative = Literal["two-sided", "greater", "less"]


def group_gap(excluded_in: int, total_in: int, excluded_out: int, total_out: int,
              alternative: Alternative = "two-sided") -> dict:
    """{rate_in, rate_out, gap, odds_ratio, p} for the table [[ex_in, kept_in], [ex_out,
    kept_out]]; rates are None (and p None) when a side is empty."""
    if total_in == 0 or total_out == 0:
        return {"rate_in": None, "rate_out": None, "gap": None, "odds_ratio": None, "p": None}
    table = [[excluded_in, total_in - excluded_in], [excluded_out, total_out - excluded_out]]
    result = stats.fisher_exact(table, alternative=alternative)
    rate_in, rate_out = excluded_in / total_in, excluded_out / total_out
    return {"rate_in": rate_in, "rate_out": rate_out, "gap": rate_in - rate_out,
            "odds_ratio": float(result.statistic), "p": float(result.pvalue)}
