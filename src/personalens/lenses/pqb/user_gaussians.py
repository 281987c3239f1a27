"""A user's syntactic habit as a Gaussian over their sentences' style vectors.

Two fits are offered:
  fit_full      the sample covariance plus a small ridge (ridge × identity);
  fit_low_rank  PQB's released choice, covariance = W Wᵀ + diag(ψ): W holds the top `rank`
                principal directions of the sample covariance scaled by √eigenvalue, and ψ is
                the variance those directions leave unexplained on each axis,
                ψ = diag(S − W Wᵀ), floored. This is the principal-factor (one-step factor
                analysis) estimate: the diagonal of the fit equals the sample variances, only
                the off-diagonal structure is reduced to `rank` factors, which a user's 30-odd
                sentences can support better than 120 free covariances in 16 dims.
Densities use the Cholesky factor, never an explicit inverse or determinant.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.linalg import solve_triangular
from scipy.stats import chi2

CHI2_95_16 = 26.30  # chi2.ppf(0.95, 16) = 26.296, PQB's acceptance region in 16 dims


def chi2_region(quantile: float = 0.95, dim: int = 16) -> float:
    """The squared Mahalanobis radius holding `quantile` of a `dim`-dimensional Gaussian."""
    return float(chi2.ppf(quantile, dim))


@dataclass(frozen=True, eq=False)
class Gaussian:
    mean: np.ndarray  # (d,)
    cov: np.ndarray  # (d, d), symmetric positive definite

    def __post_init__(self) -> None:
        mean = np.asarray(self.mean, dtype=np.float64)
        cov = np.asarray(self.cov, dtype=np.float64)
        if mean.ndim != 1 or cov.shape != (len(mean), len(mean)):
            raise ValueError(f"mean {mean.shape} and covariance {cov.shape} do not match")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "cov", (cov + cov.T) / 2)  # exact symmetry for Cholesky

    @cached_property
    def _cholesky(self) -> np.ndarray:
        try:
            return np.linalg.cholesky(self.cov)
        except np.linalg.LinAlgError:
            raise ValueError("the covariance is not positive definite") from None

    @cached_property
    def log_det(self) -> float:
        return float(2.0 * np.log(np.diag(self._cholesky)).sum())

    def mahalanobis_sq(self, X: np.ndarray) -> np.ndarray:
        """(x − μ)ᵀ Σ⁻¹ (x − μ) for each row of X (n, d), or a single vector."""
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        whitened = solve_triangular(self._cholesky, (X - self.mean).T, lower=True)
        return (whitened ** 2).sum(axis=0)

    def log_density(self, X: np.ndarray) -> np.ndarray:
        """Natural-log probability density of each row of X."""
        return -0.5 * (len(self.mean) * np.log(2 * np.pi) + self.log_det + self.mahalanobis_sq(X))

    def to_json(self) -> dict:
        return {"mean": self.mean.tolist(), "cov": self.cov.tolist()}

    @classmethod
    def from_json(cls, data: dict) -> "Gaussian":
        return cls(np.array(data["mean"], dtype=np.float64), np.array(data["cov"], np.float64))


def _sample_moments(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError("a Gaussian needs at least 2 vectors (rows)")
    centred = X - X.mean(axis=0)
    return X.mean(axis=0), centred.T @ centred / (len(X) - 1)


def fit_full(X: np.ndarray, ridge: float = 1e-4) -> Gaussian:
    """Mean and unbiased sample covariance + ridge·I (positive definite even if n ≤ d)."""
    mean, cov = _sample_moments(X)
    return Gaussian(mean, cov + ridge * np.eye(len(mean)))


def fit_low_rank(X: np.ndarray, rank: int = 4, floor: float = 1e-4) -> Gaussian:
    """Covariance W Wᵀ + diag(ψ): top-`rank` principal factors plus per-axis residual variance.

    ψ is floored at `floor` so the fit stays positive definite; with rank = d the factors
    reproduce the sample covariance and the fit is S + floor·I.
    """
    mean, cov = _sample_moments(X)
    if not 1 <= rank <= len(mean):
        raise ValueError(f"rank must be between 1 and {len(mean)}")
    values, vectors = np.linalg.eigh(cov)  # ascending
    top = np.clip(values[-rank:], 0.0, None)
    factors = vectors[:, -rank:] * np.sqrt(top)
    low_rank = factors @ factors.T
    residual = np.clip(np.diag(cov) - np.diag(low_rank), floor, None)
    return Gaussian(mean, low_rank + np.diag(residual))


def bhattacharyya(g1: Gaussian, g2: Gaussian) -> float:
    """(1/8) dᵀ S⁻¹ d + (1/2) ln(det S / √(det S1 det S2)), S = (S1 + S2) / 2, d = μ1 − μ2."""
    mixed = Gaussian(g1.mean, (g1.cov + g2.cov) / 2)
    separation = float(mixed.mahalanobis_sq(g2.mean)[0]) / 8
    shape = 0.5 * (mixed.log_det - 0.5 * (g1.log_det + g2.log_det))
    return separation + shape
