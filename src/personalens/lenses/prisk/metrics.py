"""The typed metrics of a prisk eval: what metrics.json holds, and the CLI's headlines."""

from personalens.runs import ItemFailure, Metrics


class PriskMetrics(Metrics):
    conditions: list[str]
    irp: dict[str, dict] = {}  # condition -> {mean, normalised, ci_low, ci_high, n, ...}
    accuracy: dict[str, dict] = {}  # condition -> {mean, ci_low, ci_high, n, unparsed}
    narrowing: dict[str, dict] = {}  # condition -> {cr, uir, relcr_*, hmc, jaccard, sir, n}
    # query -> item -> attribute -> group -> {rate_in, ..., p_adj}: excluded = A ∖ C
    aer: dict[str, dict] = {}
    exclusion_condition: str | None = None
    correction: str = "holm"  # of the attribution p-values (within each of lmm_families)
    exclusion_correction: str = "query-bh"  # of the exclusion cells (aer ... p_adj)
    # condition -> {agreement_rate (YTA posts), framing_rate, agreement_nta_rate, n_...}
    sycophancy: dict[str, dict] = {}
    risk_means: dict[str, dict] = {}  # risk -> condition -> {value, ci_low, ci_high, n}
    scores_100: dict[str, dict] = {}  # risk_means on each risk's 0-100 score
    degradation: dict[str, dict] = {}  # risk -> condition -> % below base on the 0-100 score
    reflection_gain: dict[str, float | None] = {}  # risk -> reflect - profile_retrieval, points
    narrowing_records: dict[str, dict] = {}  # record -> condition -> {cr_union, uir, relcr_union}
    narrower: dict[str, dict] = {}  # condition -> {personas_narrower, personas, ..., min_relcr}
    pis: dict = {}
    inversion: dict = {}
    lmm: dict[str, dict] = {}
    lmm_families: dict[str, list[str]] = {}  # correction family -> risks corrected together
    cell_means: dict[str, dict] = {}  # risk -> condition -> {mean, ci_low, ci_high, n}
    permutation: dict[str, dict] = {}  # risk -> condition -> sign-flip test against base
    truncated: dict[str, int] = {}  # condition -> replies cut off at --max-tokens
    router: dict = {}
    k_sweep: dict[str, dict] = {}  # k -> {irp, accuracy, narrowing, sycophancy, n_<risk>}
    k_sweep_sigma: dict[str, float | None] = {}  # risk -> sample SD of its 0-100 score over k
    unpaired: dict[str, list[str]] = {}
    narrowing_failures: list[dict] = []
    n_records: int
    n_failed: int
    failures: list[ItemFailure]

    def headlines(self) -> list[str]:
        lines = [f"records scored: {self.n_records} ({self.n_failed} failed)"]
        for risk, by_condition in self.risk_means.items():
            cells = ", ".join(f"{c} {_fmt(v['value'])}" for c, v in by_condition.items())
            lines.append(f"{risk}: {cells}")
        for risk, fit in self.lmm.items():
            lines.append(f"{risk} LMM: " + ", ".join(
                f"{e} β={fit[e]['beta']:+.3f} (p_adj={_fmt(fit[e]['p_adj'], '.3g')})"
                for e in ("profile", "memory", "interaction")))
        if self.inversion.get("full_flip_rate") is not None:
            lines.append(f"preference inversion: full flips {self.inversion['full_flip_rate']:.3f}"
                         f", contrarian {self.inversion['contrarian_rate']:.3f} "
                         f"(n={self.inversion['n_pairs']})")
        return lines


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)
