"""One estimate: a value, its 95 % confidence interval, the units it is over, and its method.

Every lens writes a figure with a CI as an `Estimate` (or a subclass that adds the lens's own
fields, e.g. a NormAlign's `undefined`). metrics.json holds it as {value, ci_low, ci_high, n}:
the only place in the package that spells those keys is this class's fields. `n` is written
only when it was given (some rates are not over a countable unit), and `method` never is
(metrics.json keeps the keys it always had); read back, an estimate has the default method.

A subclass may write its value under another key (`value_key`): `MeanEstimate` under "mean",
the key prefdisco's and prisk's metrics have always used for a mean; a paired difference under
"diff", a model coefficient under "beta". `SideBySide` writes several estimates over the same
units in PersonaBench's layout, {recall: value, ..., ci_low: {recall: low}, ci_high: {...}}.
"""

from collections.abc import Sequence
from typing import ClassVar

import pydantic

BOOTSTRAP = "bootstrap-percentile"  # 95 % percentile bootstrap over the units (1,000 resamples)
NORMAL = "normal"  # estimate ± 1.96 standard errors (a model's coefficient)
CLOPPER_PEARSON = "clopper-pearson"  # the exact binomial interval of a share
BOUNDS = ("ci_low", "ci_high")  # the keys of an interval's ends


class Estimate(pydantic.BaseModel):
    """A value with its 95 % CI, the number of units `n` it is over, and how the CI was got.

    `value`, `ci_low` and `ci_high` are None where undefined (no unit, or every bootstrap
    resample undefined).
    """

    model_config = pydantic.ConfigDict(extra="forbid")

    value_key: ClassVar[str] = "value"  # the key `value` is written under

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    method: str = pydantic.Field(BOOTSTRAP, exclude=True)

    @pydantic.model_validator(mode="before")
    @classmethod
    def _read_value_key(cls, data):
        if cls.value_key != "value" and isinstance(data, dict) and cls.value_key in data:
            data = {("value" if k == cls.value_key else k): v for k, v in data.items()}
        return data

    @pydantic.model_serializer(mode="wrap")
    def _write_value_key(self, handler):
        out = handler(self)
        if self.value_key != "value" and isinstance(out, dict):
            out = {(self.value_key if k == "value" else k): v for k, v in out.items()}
        return out

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        return self.ci_low, self.ci_high

    def plain(self) -> "Estimate":
        """This estimate alone, written {value, ci_low, ci_high[, n]}: a subclass's own fields
        and value key left out."""
        return Estimate.with_bounds(self.value, self.bounds,
                                    self.n if "n" in self.model_fields_set else None,
                                    method=self.method)

    @classmethod
    def of_mean(cls, values: Sequence[float], *, seed: int = 0, **fields):
        """The mean of `values` with its 95 % percentile bootstrap CI over them (None when
        empty); `fields` are a subclass's own."""
        import numpy as np

        from personalens.stats.bootstrap import mean_ci

        values = np.asarray(values, dtype=float)
        low, high = mean_ci(values, seed=seed)
        return cls(value=float(np.mean(values)) if len(values) else None, ci_low=low,
                   ci_high=high, n=len(values), method=BOOTSTRAP, **fields)

    @classmethod
    def with_bounds(cls, value: float | None, bounds: tuple[float | None, float | None],
                    n: int | None = None, *, method: str = BOOTSTRAP, **fields):
        """An estimate from a value and a (low, high) pair, as `bootstrap_ci` returns it; n
        left out is not written."""
        low, high = bounds
        given = {} if n is None else {"n": n}
        return cls(value=value, ci_low=low, ci_high=high, method=method, **given, **fields)


class MeanEstimate(Estimate):
    """An `Estimate` written as {mean, ci_low, ci_high, n}."""

    value_key: ClassVar[str] = "mean"


class SideBySide(pydantic.BaseModel):
    """Estimates over the same `n` units, as fields of a subclass, written side by side: each
    estimate's value under its field's name, their ends gathered, {recall: value, ndcg: value,
    n, ci_low: {recall: low, ndcg: low}, ci_high: {...}} (a field left None is not written)."""

    n: int

    @pydantic.model_validator(mode="before")
    @classmethod
    def _gather(cls, data):
        if not isinstance(data, dict) or BOUNDS[0] not in data:
            return data
        low, high = (data[bound] for bound in BOUNDS)
        out = {k: v for k, v in data.items() if k not in BOUNDS}
        for name in low:
            out[name] = {"value": data.get(name), BOUNDS[0]: low[name],
                         BOUNDS[1]: high.get(name), "n": data.get("n")}
        return out

    @pydantic.model_serializer(mode="wrap")
    def _spread(self, handler):
        out = handler(self)
        estimates = {name: getattr(self, name) for name in type(self).model_fields
                     if name in out and isinstance(getattr(self, name), Estimate)}
        for name in type(self).model_fields:
            if name in out and out[name] is None:
                del out[name]
        out |= {name: estimate.value for name, estimate in estimates.items()}
        if estimates:
            out |= {bound: {name: getattr(estimate, bound) for name, estimate in estimates.items()}
                    for bound in BOUNDS}
        return out
