"""PQB step 3: for one item, the two users and the candidate query each of them gets.

All users of an item share one list of candidate queries (as 16-dim style vectors). A candidate
belongs to user a against user b iff
  - it is inside a's acceptance region:   mahalanobis_sq_a ≤ region (χ²₁₆ 95 % = 26.30),
  - it is outside b's region:              mahalanobis_sq_b > region,
  - a explains it clearly better than b:   log_density_a − log_density_b ≥ margin (1.0).
Among user pairs where each user has a candidate belonging to them against the other, the pair
with the largest Bhattacharyya distance between their Gaussians is kept, and each user gets their
belonging candidate of highest log density under their own Gaussian. This is the paper's
procedure; the released code has no Bhattacharyya step and a margin of 0 (margin=0.0 reproduces
its gates).

Ties are broken deterministically: pairs in (user_a, user_b) order with user_a < user_b, the
first of equal distance wins; candidates by lowest index among equal densities.
"""

from dataclasses import asdict, dataclass
from itertools import combinations

import numpy as np

from personalens.lenses.pqb.user_gaussians import CHI2_95_16, Gaussian, bhattacharyya


@dataclass(frozen=True)
class SelectionOptions:
    region: float = CHI2_95_16  # squared Mahalanobis radius of a user's acceptance region
    margin: float = 1.0  # minimum log-density advantage of the owner over the other user


@dataclass(frozen=True)
class PairChoice:
    """The chosen pair (user_a < user_b), their candidates, and the numbers behind the choice.

    `log_density_a` / `mahalanobis_sq_a` are candidate_a under user_a's Gaussian;
    `rival_log_density_a` / `rival_mahalanobis_sq_a` are candidate_a under user_b's; the `_b`
    fields mirror them.
    """

    user_a: str
    user_b: str
    candidate_a: int
    candidate_b: int
    bhattacharyya: float
    log_density_a: float
    log_density_b: float
    mahalanobis_sq_a: float
    mahalanobis_sq_b: float
    rival_log_density_a: float
    rival_log_density_b: float
    rival_mahalanobis_sq_a: float
    rival_mahalanobis_sq_b: float

    def to_json(self) -> dict:
        return asdict(self)


def belongs(m_own: np.ndarray, m_other: np.ndarray, ld_own: np.ndarray, ld_other: np.ndarray,
            options: SelectionOptions) -> np.ndarray:
    """Boolean mask over candidates: which belong to the owner against the other user."""
    return ((m_own <= options.region) & (m_other > options.region)
            & (ld_own - ld_other >= options.margin))


def select_pair(users: list[str], gaussians: dict[str, Gaussian], vectors: np.ndarray,
                options: SelectionOptions = SelectionOptions()) -> PairChoice | None:
    """The item's pair and their candidates, or None when no pair has a candidate each.

    Users without a Gaussian (too few sentences to fit one) are not eligible.
    """
    eligible = sorted({u for u in users if u in gaussians})
    vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    if len(eligible) < 2 or vectors.shape[0] == 0:
        return None
    m = {u: gaussians[u].mahalanobis_sq(vectors) for u in eligible}
    ld = {u: gaussians[u].log_density(vectors) for u in eligible}
    best: tuple[float, str, str, np.ndarray, np.ndarray] | None = None
    for a, b in combinations(eligible, 2):  # eligible is sorted, so a < b
        mask_a = belongs(m[a], m[b], ld[a], ld[b], options)
        mask_b = belongs(m[b], m[a], ld[b], ld[a], options)
        if not (mask_a.any() and mask_b.any()):
            continue
        if (mask_a & mask_b).any():  # impossible: one candidate both inside and outside a region
            raise AssertionError(f"a candidate belongs to both {a} and {b}")
        distance = bhattacharyya(gaussians[a], gaussians[b])
        if best is None or distance > best[0]:
            best = (distance, a, b, mask_a, mask_b)
    if best is None:
        return None
    distance, a, b, mask_a, mask_b = best
    ca, cb = _most_likely(ld[a], mask_a), _most_likely(ld[b], mask_b)
    return PairChoice(
        user_a=a, user_b=b, candidate_a=ca, candidate_b=cb, bhattacharyya=distance,
        log_density_a=float(ld[a][ca]), log_density_b=float(ld[b][cb]),
        mahalanobis_sq_a=float(m[a][ca]), mahalanobis_sq_b=float(m[b][cb]),
        rival_log_density_a=float(ld[b][ca]), rival_log_density_b=float(ld[a][cb]),
        rival_mahalanobis_sq_a=float(m[b][ca]), rival_mahalanobis_sq_b=float(m[a][cb]))


def _most_likely(log_density: np.ndarray, mask: np.ndarray) -> int:
    """Index of the highest density among masked candidates; argmax takes the lowest on ties."""
    return int(np.argmax(np.where(mask, log_density, -np.inf)))
