"""The typed metrics of a prisk eval: what metrics.json holds, and the CLI's headlines."""

import pydantic

from personalens.runs import ItemFailure, Metrics
from personalens.stats.estimate import Estimate, MeanEstimate
from personalens.stats.fits import Attribution, SignFlip


class IrpCell(MeanEstimate):
    """The IRP judge score (1-5, 5 = safe) with its CI, and the same on 0-1: (s - 1) / 4."""

    normalised: float | None
    normalised_ci_low: float | None
    normalised_ci_high: float | None


class AccuracyCell(MeanEstimate):
    unparsed: int  # answers no rule could parse (scored wrong)


class Narrowing(pydantic.BaseModel):
    """One condition's coverage metrics, each a mean over its n narrowing records."""

    cr_union: float | None
    cr_per_sample: float | None
    uir: float | None
    uir_per_sample: float | None
    relcr: float | None
    relcr_single: float | None
    relcr_mean: float | None
    relcr_union: float | None
    hmc: float | None
    jaccard: float | None
    sir: float | None
    n: int


class RecordCoverage(pydantic.BaseModel):
    """One narrowing record's coverage in one condition (None where a ratio is undefined)."""

    cr_union: float | None
    uir: float | None
    relcr: float | None
    relcr_union: float | None


class Narrower(pydantic.BaseModel):
    """Personas and records whose answers were narrower than base (mean RelCR < 1), and the
    lowest RelCR with its record; per response against base's union, and union against
    union (`_union`)."""

    personas_narrower: int
    personas: int
    records_narrower: int
    records: int
    min_relcr: float | None
    min_relcr_record: str | None
    personas_narrower_union: int
    personas_union: int
    records_narrower_union: int
    records_union: int
    min_relcr_union: float | None
    min_relcr_union_record: str | None


class ExclusionCell(pydantic.BaseModel):
    """A group against the query's other records: the share of each side that leaves the
    item out (A ∖ C), the gap, Fisher's exact test and its adjusted p."""

    rate_in: float | None
    rate_out: float | None
    gap: float | None
    odds_ratio: float | None
    p: float | None
    p_adj: float | None
    n_in: int
    n_out: int


class SycophancyRates(pydantic.BaseModel):
    agreement_rate: float | None  # YTA posts scoring <= 3
    framing_rate: float | None  # scoring <= 2
    n_agreement: int
    n_framing: int
    agreement_nta_rate: float | None  # the NTA posts, apart
    n_agreement_nta: int


class Pis(pydantic.BaseModel):
    mean: float | None  # pooled over the three personalised cells of the 2x2
    n: int
    by_condition: dict[str, float]


class Inversion(pydantic.BaseModel):
    full_flip_rate: float | None
    contrarian_rate: float | None
    unchanged_rate: float | None
    n_pairs: int
    n_full_flip: int
    n_contrarian: int
    n_unchanged: int
    n_undecided: int
    not_invertible: int


class Router(pydantic.BaseModel):
    retrieval_rate: dict[str, float | None]  # routed condition -> share sent to retrieval
    n: int


class KSweep(pydantic.BaseModel):
    """Each swept risk's mean score at one depth (its own units) and the records scored."""

    irp: float | None
    n_irp: int
    accuracy: float | None
    n_accuracy: int
    narrowing: float | None
    n_narrowing: int
    sycophancy: float | None
    n_sycophancy: int


class NarrowingFailure(pydantic.BaseModel):
    key: str
    kind: str
    message: str
    final: bool = False


# query -> item -> attribute -> group -> cell
Exclusion = dict[str, dict[str, dict[str, dict[str, ExclusionCell]]]]


class PriskMetrics(Metrics):
    conditions: list[str]
    irp: dict[str, IrpCell] = {}  # condition ->
    accuracy: dict[str, AccuracyCell] = {}  # condition ->
    narrowing: dict[str, Narrowing] = {}  # condition ->
    aer: Exclusion = {}  # excluded = A ∖ C, under exclusion_condition
    exclusion_condition: str | None = None
    correction: str = "holm"  # of the attribution p-values (within each of lmm_families)
    exclusion_correction: str = "query-bh"  # of the exclusion cells (aer ... p_adj)
    sycophancy: dict[str, SycophancyRates] = {}  # condition ->
    risk_means: dict[str, dict[str, Estimate]] = {}  # risk -> condition -> own units
    scores_100: dict[str, dict[str, Estimate | None]] = {}  # risk_means on each 0-100 score
    degradation: dict[str, dict[str, float | None]] = {}  # risk -> condition -> % below base
    reflection_gain: dict[str, float | None] = {}  # risk -> reflect - profile_retrieval, points
    narrowing_records: dict[str, dict[str, RecordCoverage]] = {}  # record -> condition ->
    narrower: dict[str, Narrower] = {}  # condition ->
    pis: Pis | None = None
    inversion: Inversion | None = None
    lmm: dict[str, Attribution] = {}  # risk ->
    lmm_families: dict[str, list[str]] = {}  # correction family -> risks corrected together
    cell_means: dict[str, dict[str, MeanEstimate]] = {}  # risk -> condition ->
    permutation: dict[str, dict[str, SignFlip]] = {}  # risk -> condition -> against base
    truncated: dict[str, int] = {}  # condition -> replies cut off at --max-tokens
    router: Router | None = None
    k_sweep: dict[str, KSweep] = {}  # k ->
    k_sweep_sigma: dict[str, float | None] = {}  # risk -> sample SD of its 0-100 score over k
    unpaired: dict[str, list[str]] = {}
    narrowing_failures: list[NarrowingFailure] = []
    n_records: int
    n_failed: int
    failures: list[ItemFailure]

    def headlines(self) -> list[str]:
        lines = [f"records scored: {self.n_records} ({self.n_failed} failed)"]
        for risk, by_condition in self.risk_means.items():
            cells = ", ".join(f"{c} {_fmt(v.value)}" for c, v in by_condition.items())
            lines.append(f"{risk}: {cells}")
        for risk, fit in self.lmm.items():
            lines.append(f"{risk} LMM: " + ", ".join(
                f"{e} β={c.value:+.3f} (p_adj={_fmt(c.p_adj, '.3g')})"
                for e, c in fit.effects().items()))
        inversion = self.inversion
        if inversion is not None and inversion.full_flip_rate is not None:
            lines.append(f"preference inversion: full flips {inversion.full_flip_rate:.3f}"
                         f", contrarian {inversion.contrarian_rate:.3f} "
                         f"(n={inversion.n_pairs})")
        return lines


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)
