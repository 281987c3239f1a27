"""The 2x2 within-record attribution model: score ~ P * M + (1 | record).

P (profile in the prompt) and M (memory retrieved) are coded 0/1 ("treatment") or -0.5/+0.5
("effect"). The fit is statsmodels MixedLM by REML. Variance components are read from the
random-effects covariance (`cov_re`) and the residual scale, not from the "Group Var" row that
statsmodels prints scaled. Partial eta squared comes from the repeated-measures ANOVA (each
effect tested against its own effect x record error term).
"""

from typing import Literal

import numpy as np
import pandas as pd

Coding = Literal["treatment", "effect"]
EFFECTS = {"profile": "P", "memory": "M", "interaction": "P:M"}


def fit_attribution(table: pd.DataFrame, *, coding: Coding = "treatment") -> dict:
    """{profile, memory, interaction: {beta, se, p, ci_low, ci_high, eta_p2}, variance}.

    `table` has columns record, profile, memory (0/1) and score; one row per record and cell.
    """
    import statsmodels.formula.api as smf

    data = table[["record", "profile", "memory", "score"]].copy()
    shift = 0.5 if coding == "effect" else 0.0
    data["P"] = data["profile"].astype(float) - shift
    data["M"] = data["memory"].astype(float) - shift
    model = smf.mixedlm("score ~ P * M", data, groups=data["record"])
    result = model.fit(reml=True, method=["lbfgs", "powell"])
    ci = result.conf_int(alpha=0.05)
    eta = partial_eta_squared(data)
    effects = {}
    for name, term in EFFECTS.items():
        effects[name] = {"beta": float(result.params[term]), "se": float(result.bse[term]),
                         "p": float(result.pvalues[term]), "ci_low": float(ci.loc[term, 0]),
                         "ci_high": float(ci.loc[term, 1]), "eta_p2": eta.get(name)}
    effects["variance"] = {"record": float(np.asarray(result.cov_re)[0, 0]),
                           "residual": float(result.scale)}
    return effects


def partial_eta_squared(table: pd.DataFrame) -> dict[str, float | None]:
    """Partial eta squared per effect from the 2x2 repeated-measures ANOVA.

    Each effect is a per-record contrast of the four cell means; its sum of squares is
    n * mean(contrast)^2 and its own error term (effect x record) is the contrasts' sum of
    squared deviations, so eta_p2 = SS_effect / (SS_effect + SS_error). Records missing a cell
    are left out, as the ANOVA requires. (statsmodels' AnovaRM gives the same numbers but
    builds a dense design with one column per record: minutes and gigabytes at 25k records.)
    """
    wide = table.pivot_table(index="record", columns=["profile", "memory"], values="score")
    wide = wide.dropna()
    if len(wide) < 2 or wide.shape[1] < 4:
        return {name: None for name in EFFECTS}
    y = {cell: wide[cell].to_numpy() for cell in ((0, 0), (1, 0), (0, 1), (1, 1))}
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
