"""The 2x2 within-record attribution model: score ~ P * M + (1 | record).

P (profile in the prompt) and M (memory retrieved) are coded 0/1 ("treatment") or -0.5/+0.5
("effect"). The model is fitted by REML. When the table is balanced and complete (every record
has exactly one score in each of the four profile x memory cells) the REML fit has a closed
form in the ANOVA mean squares, which `balanced_reml` computes in milliseconds; any other table
(a record missing a cell, a cell scored twice) is fitted with statsmodels MixedLM, as before.
On balanced tables the two agree to 1e-6 when MixedLM is searched to convergence; MixedLM's
default L-BFGS stops within about 5e-5 of the optimum (2e-4 on the record variance), and its
REML log-likelihood at the closed-form estimates is at least its own optimum's. L-BFGS can also
fail outright ("Singular matrix") when it steps to a near-zero record variance (statsmodels
issue #10239: that limit is treated as an infinite variance, which leaves the intercept, a
constant within each record, unidentified); MixedLM is then refitted with Powell's
derivative-free search. Variance components are the random-intercept variance and the
residual variance (for MixedLM read from `cov_re` and the residual scale, not from the "Group
Var" row that statsmodels prints scaled). Partial eta squared comes from the repeated-measures
ANOVA (each effect tested against its own effect x record error term).

`fit_model_factor` fits the same design over several models' scores with the model as a fixed
factor (score ~ P * M * model + (1 | model:record)), so profile x model and memory x model say
whether a model's profile or memory effect differs from the reference model's.

The closed form. With n records and y_rc the score of record r in cell c (c = 1..4), the
model is y_rc = x_c'b + u_r + e_rc, u ~ N(0, s2_u), e ~ N(0, s2_e). The fixed effects
(intercept, P, M, P:M) saturate the four cells, so the REML likelihood splits into two strata:

- between records: the n record means, variance (s2_e + 4 s2_u) / 4 each, minus the
  intercept: SS_record = 4 sum_r (mean_r - grand)^2 on n - 1 df, E = (n - 1)(s2_e + 4 s2_u);
- within records: the residuals y_rc - mean_r - mean_c + grand, minus P, M and P:M:
  SS_res on 3(n - 1) df, E = 3(n - 1) s2_e.

-2 log L_REML = (n-1) log(s2_e + 4 s2_u) + SS_record / (s2_e + 4 s2_u)
              + 3(n-1) log s2_e + SS_res / s2_e + const, so
s2_e = MS_res = SS_res / (3(n - 1)) and s2_u = (MS_record - MS_res) / 4, MS_record =
SS_record / (n - 1). When MS_record < MS_res that s2_u is negative; with s2_u >= 0 imposed the
maximum is on the boundary s2_e + 4 s2_u = s2_e, where both strata share one variance:
s2_u = 0 and s2_e = (SS_record + SS_res) / (4(n - 1)) (the pooled OLS residual variance).

b is OLS on the four cell means (GLS = OLS: the design is the same in every record), so
b = A ybar with A the inverse of the 4x4 cell design, and Cov(b) = (X'V^-1X)^-1 =
A (s2_e I + s2_u 11') A' / n. A1 is the intercept's unit vector (a constant shift of every
cell moves only the intercept), so s2_u enters the intercept's variance alone:

  treatment (0/1):   Var(b0) = (s2_e + s2_u) / n      (b0 = ybar_00)
                     Var(bP) = Var(bM) = 2 s2_e / n  (difference of two cell means)
                     Var(bPM) = 4 s2_e / n           (a +-1 contrast of all four)
  effect (+-0.5):    Var(b0) = (s2_e / 4 + s2_u) / n (b0 = the mean of the four cells)
                     Var(bP) = Var(bM) = s2_e / n    (a +-1/2 contrast of all four)
                     Var(bPM) = 4 s2_e / n           (the same contrast in both codings)

p-values and 95 % CIs are Wald z, as MixedLM reports them: p = 2 Phi(-|b / se|),
b -+ Phi^-1(0.975) se.
"""

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from personalens.stats.fits import (
    EFFECTS,
    Attribution,
    BalancedFit,
    Coefficient,
    ModelFactorFit,
    Variance,
)

Coding = Literal["treatment", "effect"]
Solver = Literal["auto", "closed_form", "mixedlm"]
CELLS = ((0, 0), (1, 0), (0, 1), (1, 1))  # (profile, memory): the column order of CellTable


@dataclass(frozen=True)
class CellTable:
    """A scored table per record and cell: what `pivot_table` gives, without pivoting.

    `records` are the record ids, sorted (pivot_table's order); `counts` and `means` are
    (records x 4) in CELLS order, means NaN where a record has no score in a cell. `valid` is
    False when some row had no record id or no finite score (such rows are left out, as
    pivot_table leaves them out).
    """

    records: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    valid: bool

    @property
    def balanced(self) -> bool:
        """Every record scored exactly once in each cell, no row left out, >= 2 records."""
        return self.valid and len(self.records) >= 2 and bool((self.counts == 1).all())

    def complete(self) -> np.ndarray:
        """The means of the records that have every cell (the repeated-measures ANOVA's)."""
        return self.means[~np.isnan(self.means).any(axis=1)]


def cell_table(table: pd.DataFrame) -> CellTable:
    """Counts and means per (record, cell) of a table with record, profile, memory, score."""
    codes, records = pd.factorize(table["record"], sort=True)
    profile = table["profile"].to_numpy()
    memory = table["memory"].to_numpy()
    if not (np.isin(profile, (0, 1)).all() and np.isin(memory, (0, 1)).all()):
        raise ValueError("profile and memory must be 0 or 1")
    score = table["score"].to_numpy(dtype=float)
    keep = (codes >= 0) & np.isfinite(score)
    slot = codes * 4 + profile.astype(np.intp) + 2 * memory.astype(np.intp)
    size = 4 * len(records)
    if keep.all():
        counts = np.bincount(slot, minlength=size)
        sums = np.bincount(slot, weights=score, minlength=size)
    else:
        counts = np.bincount(slot[keep], minlength=size)
        sums = np.bincount(slot[keep], weights=score[keep], minlength=size)
    counts = counts.reshape(-1, 4)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums.reshape(-1, 4) / counts, np.nan)
    return CellTable(np.asarray(records), counts, means, bool(keep.all()))


def fit_attribution(table: pd.DataFrame, *, coding: Coding = "treatment",
                    solver: Solver = "auto") -> Attribution:
    """The three effects (each with its partial eta squared) and the variance components.

    `table` has columns record, profile, memory (0/1) and score; one row per record and cell.
    `solver`: "auto" (the closed form when the table is balanced and complete, else MixedLM),
    "closed_form" (ValueError when it does not apply) or "mixedlm" (always statsmodels).
    """
    if solver not in ("auto", "closed_form", "mixedlm"):
        raise ValueError(f"solver is auto, closed_form or mixedlm (got {solver!r})")
    if coding not in ("treatment", "effect"):
        raise ValueError(f"coding is treatment or effect (got {coding!r})")
    cells = cell_table(table)
    eta = _eta_from_means(cells.complete())
    fit = None
    if solver != "mixedlm":
        fit = balanced_reml(cells.means, coding) if cells.balanced else None
        if fit is None and solver == "closed_form":
            raise ValueError("the closed form needs every record scored once in each of the "
                             "four cells (and a non-zero residual)")
    if fit is not None:
        return Attribution(**{name: fit.effects[term].model_copy(update={"eta_p2": eta.get(name)})
                              for name, term in EFFECTS.items()},
                           variance=Variance(record=fit.record, residual=fit.residual))
    return _fit_mixedlm(table, coding, eta)


def balanced_reml(means: np.ndarray, coding: Coding = "treatment") -> BalancedFit | None:
    """The closed-form REML fit of a balanced complete table (see the module docstring).

    `means` is (records x 4), one score per record and cell in CELLS order. None when the fit
    is degenerate (fewer than 2 records, or no residual variation within records).
    """
    from scipy.special import ndtr, ndtri

    y = np.asarray(means, dtype=float)
    n = len(y)
    if n < 2 or y.shape[1] != 4 or np.isnan(y).any():
        return None
    record_means = y.mean(axis=1)
    cell_means = y.mean(axis=0)
    grand = cell_means.mean()
    ss_record = 4.0 * float(((record_means - grand) ** 2).sum())
    residuals = y - record_means[:, None] - cell_means[None, :] + grand
    ss_residual = float((residuals ** 2).sum())
    if not ss_residual > 0:
        return None
    ms_record = ss_record / (n - 1)
    ms_residual = ss_residual / (3 * (n - 1))
    boundary = ms_record < ms_residual
    if boundary:
        s2_u, s2_e = 0.0, (ss_record + ss_residual) / (4 * (n - 1))
    else:
        s2_u, s2_e = (ms_record - ms_residual) / 4.0, ms_residual
    y00, y10, y01, y11 = cell_means
    interaction = y11 - y10 - y01 + y00
    if coding == "effect":
        beta = {"Intercept": cell_means.mean(), "P": (y10 + y11 - y00 - y01) / 2,
                "M": (y01 + y11 - y00 - y10) / 2, "P:M": interaction}
        variance = {"Intercept": (s2_e / 4 + s2_u) / n, "P": s2_e / n, "M": s2_e / n,
                    "P:M": 4 * s2_e / n}
    elif coding == "treatment":
        beta = {"Intercept": y00, "P": y10 - y00, "M": y01 - y00, "P:M": interaction}
        variance = {"Intercept": (s2_e + s2_u) / n, "P": 2 * s2_e / n, "M": 2 * s2_e / n,
                    "P:M": 4 * s2_e / n}
    else:
        raise ValueError(f"coding is treatment or effect (got {coding!r})")
    q = float(ndtri(0.975))
    effects = {}
    for term, b in beta.items():
        se = float(np.sqrt(variance[term]))
        effects[term] = Coefficient.wald(b, se, ndtr(-abs(b / se)) * 2, b - q * se, b + q * se)
    return BalancedFit(effects=effects, record=float(s2_u), residual=float(s2_e),
                       boundary=bool(boundary), ms_record=ms_record, ms_residual=ms_residual)


def _fit_mixedlm(table: pd.DataFrame, coding: Coding, eta: dict) -> Attribution:
    """statsmodels MixedLM by REML (any table: unbalanced, missing cells, duplicates)."""
    data = _coded(table[["record", "profile", "memory", "score"]], coding)
    result = _reml(data, "score ~ P * M", data["record"])
    return Attribution(**{name: _term(result, term).model_copy(update={"eta_p2": eta.get(name)})
                          for name, term in EFFECTS.items()}, variance=_variance(result))


def fit_model_factor(table: pd.DataFrame, *, coding: Coding = "treatment") -> ModelFactorFit:
    """The attribution model over several models' scores, the model a fixed factor:
    score ~ P * M * model + (1 | model:record), by REML (statsmodels MixedLM).

    `table` has columns model, record, profile, memory (0/1) and score. The first model (in
    order of appearance) is the reference: `profile`, `memory` and `interaction` are its
    effects, and for each other model m, `model[m]` is its shift of the intercept and
    `profile x model[m]`, `memory x model[m]`, `interaction x model[m]` how much its effect
    differs from the reference's. A record's scores under one model share a random intercept;
    the same record under another model is another group (each model's run is its own
    repeated-measures design, and every effect of interest is a within-group contrast).
    p and CIs are Wald z, unadjusted.
    """
    models = list(dict.fromkeys(table["model"]))
    if len(models) < 2:
        raise ValueError("the model-factor fit needs scores of at least two models")
    data = _coded(table[["record", "profile", "memory", "score"]], coding)
    # Formula-safe names for the models (a spec such as "openai/gpt-4o" is not one).
    code = {model: f"m{i}" for i, model in enumerate(models)}
    data["model"] = pd.Categorical(table["model"].map(code), categories=list(code.values()))
    groups = data["model"].astype(str) + "|" + data["record"].astype(str)
    result = _reml(data, "score ~ P * M * model", groups, quiet=True)
    effects = {name: _term(result, term) for name, term in EFFECTS.items()}
    for model in models[1:]:
        level = f"model[T.{code[model]}]"
        effects[f"model[{model}]"] = _term(result, level)
        for name, term in EFFECTS.items():
            effects[f"{name} x model[{model}]"] = _term(result, f"{term}:{level}")
    return ModelFactorFit(reference=models[0], models=models, effects=effects,
                          variance=_variance(result), n_rows=int(len(data)),
                          n_groups=int(groups.nunique()))


def _coded(data: pd.DataFrame, coding: Coding) -> pd.DataFrame:
    """`data` with P and M coded 0/1 (treatment) or -0.5/+0.5 (effect)."""
    data = data.copy()
    shift = 0.5 if coding == "effect" else 0.0
    data["P"] = data["profile"].astype(float) - shift
    data["M"] = data["memory"].astype(float) - shift
    return data


def _reml(data: pd.DataFrame, formula: str, groups: pd.Series, *, quiet: bool = False):
    """MixedLM's REML fit with a random intercept per group; `quiet`: without statsmodels'
    warnings (a record variance on its boundary, 0, is a valid REML optimum, and statsmodels
    warns on stderr at every such step)."""
    import statsmodels.formula.api as smf  # imported first: its import sets warning filters

    model = smf.mixedlm(formula, data, groups=groups)
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        try:
            return model.fit(reml=True, method=["lbfgs", "powell"])
        except np.linalg.LinAlgError:
            # L-BFGS can step onto a singular point when the record variance is near zero;
            # the derivative-free Powell search does not (and reaches the same optimum).
            return model.fit(reml=True, method="powell")


def _term(result, term: str) -> Coefficient:
    ci = result.conf_int(alpha=0.05)
    return Coefficient.wald(result.params[term], result.bse[term], result.pvalues[term],
                            ci.loc[term, 0], ci.loc[term, 1])


def _variance(result) -> Variance:
    # The random intercept's variance from cov_re, not the "Group Var" row statsmodels prints
    # scaled.
    return Variance(record=float(np.asarray(result.cov_re)[0, 0]),
                    residual=float(result.scale))


def partial_eta_squared(table: pd.DataFrame) -> dict[str, float | None]:
    """Partial eta squared per effect from the 2x2 repeated-measures ANOVA.

    Each effect is a per-record contrast of the four cell means; its sum of squares is
    n * mean(contrast)^2 and its own error term (effect x record) is the contrasts' sum of
    squared deviations, so eta_p2 = SS_effect / (SS_effect + SS_error). Records missing a cell
    are left out, as the ANOVA requires. (statsmodels' AnovaRM gives the same numbers but
    builds a dense design with one column per record: minutes and gigabytes at 25k records.)
    """
    return _eta_from_means(cell_table(table).complete())


def _eta_from_means(means: np.ndarray) -> dict[str, float | None]:
    if len(means) < 2:
        return {name: None for name in EFFECTS}
    y = {cell: means[:, i] for i, cell in enumerate(CELLS)}
    contrasts = {
        "profile": (y[(1, 0)] + y[(1, 1)] - y[(0, 0)] - y[(0, 1)]) / 2,
        "memory": (y[(0, 1)] + y[(1, 1)] - y[(0, 0)] - y[(1, 0)]) / 2,
        "interaction": (y[(1, 1)] - y[(1, 0)] - y[(0, 1)] + y[(0, 0)]) / 2,
    }
    out: dict[str, float | None] = {}
    for name, contrast in contrasts.items():
        effect = len(contrast) * contrast.mean() ** 2
        error = float(((contrast - contrast.mean()) ** 2).sum())
        out[name] = effect / (effect + error) if effect + error > 0 else None
    return out
