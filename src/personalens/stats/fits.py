"""What the attribution fits of `stats.mixed_effects` and the sign-flip test of
`stats.permutation` return, as models: light to import (no numpy, pandas or statsmodels), so a
lens's records, metrics and options can hold them."""

from typing import ClassVar

import pydantic

from personalens.stats.estimate import NORMAL, Estimate

EFFECTS = {"profile": "P", "memory": "M", "interaction": "P:M"}  # effect -> its model term


class Coefficient(Estimate):
    """A fixed effect: β with its standard error, Wald z p and 95 % CI (β -+ 1.96 se), written
    {beta, se, p, ci_low, ci_high} (and eta_p2, p_adj where the attribution sets them)."""

    value_key: ClassVar[str] = "beta"

    value: float
    se: float
    p: float | None
    eta_p2: float | None = None  # partial eta squared of the repeated-measures ANOVA
    p_adj: float | None = None  # p adjusted across a family of fits
    method: str = pydantic.Field(NORMAL, exclude=True)

    @classmethod
    def wald(cls, beta: float, se: float, p: float, low: float, high: float) -> "Coefficient":
        return cls(value=float(beta), se=float(se), p=float(p), ci_low=float(low),
                   ci_high=float(high))


class Variance(pydantic.BaseModel):
    """The random intercept's variance (record) and the residual variance."""

    record: float
    residual: float


class Attribution(pydantic.BaseModel):
    """score ~ P * M + (1 | record): the three effects and the variance components."""

    profile: Coefficient
    memory: Coefficient
    interaction: Coefficient
    variance: Variance

    def effects(self) -> dict[str, Coefficient]:
        return {name: getattr(self, name) for name in EFFECTS}


class BalancedFit(pydantic.BaseModel):
    """`balanced_reml`'s fit: every term's coefficient (Intercept, P, M, P:M), the variance
    components, whether the record variance sits on its boundary 0, and the mean squares."""

    effects: dict[str, Coefficient]
    record: float
    residual: float
    boundary: bool
    ms_record: float
    ms_residual: float


class ModelFactorFit(pydantic.BaseModel):
    """`fit_model_factor`'s fit: the reference model, every term's coefficient, the variance
    components, and the rows and model x record groups fitted."""

    reference: str
    models: list[str]
    effects: dict[str, Coefficient]
    variance: Variance
    n_rows: int
    n_groups: int


class SignFlip(pydantic.BaseModel):
    """What `sign_flip_test` returns, as a model: the mean difference, its two-sided p, whether
    p is exact, and n."""

    mean: float | None
    p: float | None
    exact: bool
    n: int
