"""`personalens prisk stats`: the attribution statistics on any scored table, on the harness.

Items are (model, risk) groups. Each fits score ~ P * M + (1 | record) (REML: the closed form
of `balanced_reml` on balanced tables, statsmodels MixedLM on any other), partial eta
squared from the repeated-measures ANOVA, bootstrap CIs on the four cell means, and a paired
sign-flip test of each condition against base. p-values are then corrected across every
model x risk x effect with Holm (default) or Benjamini-Hochberg, the sycophancy family counted
once: where a model's pooled `sycophancy` is fitted, its parts (agreement, framing) are
corrected in a family of their own (`correction_families`).

`analyse_group` (one group's fit, cell means and tests) and `corrected_lmm` (the correction
across groups) are the lens's steps as functions, for other lenses to run on their own groups.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from personalens.errors import InputError
from personalens.lenses.prisk.options import StatsOptions
from personalens.lenses.prisk.records import StatsRecord
from personalens.lenses.prisk.score_table import CONDITIONS, groups, read_scores
from personalens.report import HtmlReport, interaction_plot
from personalens.runs import (
    ItemFailure,
    ItemRecords,
    Lens,
    Metrics,
    Outcome,
    RunIdentity,
    Tally,
    fingerprint,
    run_lens,
)
from personalens.runs.blocking import run_blocking
from personalens.stats.bootstrap import mean_cis
from personalens.stats.estimate import MeanEstimate
from personalens.stats.fits import SignFlip
from personalens.stats.mixed_effects import (
    CELLS,
    EFFECTS,
    Attribution,
    cell_table,
    fit_attribution,
)
from personalens.stats.multiple_testing import adjust
from personalens.stats.permutation import sign_flip_tests


@dataclass(frozen=True)
class Group:
    name: str
    rows: pd.DataFrame

    @property
    def key(self) -> str:
        return f"lmm/{self.name}"


class AttributionMetrics(Metrics):
    lmm: dict[str, Attribution]  # group ->
    cell_means: dict[str, dict[str, MeanEstimate]]  # group -> condition ->
    permutation: dict[str, dict[str, SignFlip]]  # group -> condition -> against base
    correction: str
    families: dict[str, list[str]] = {}  # correction family -> the groups it corrects over
    coding: str
    n_records: int
    n_rows: int
    n_failed: int
    failures: list[ItemFailure]

    def headlines(self) -> list[str]:
        return [f"{name}: " + ", ".join(f"{e} β={c.value:+.3f} (p_adj={c.p_adj:.3g})"
                                        for e, c in fit.effects().items())
                for name, fit in self.lmm.items()]


class PriskStats(Lens[StatsOptions, StatsRecord, AttributionMetrics]):
    name = "prisk stats"
    title = "personalens · PRISK attribution statistics"
    concurrency = 1  # each fit is CPU-bound work on the one worker thread
    record_model = StatsRecord

    def __init__(self, options: StatsOptions):
        super().__init__(options)
        self.table = read_scores(options.scores)
        self.groups = [Group(name, rows) for name, rows in groups(self.table)]
        for group in self.groups:
            if group.rows["record"].nunique() < 2 or group.rows.groupby(
                    ["profile", "memory"]).ngroups < 4:
                raise InputError(f"group {group.name!r} needs at least 2 records and all four "
                                 "profile x memory cells", where=str(options.scores))

    def identity(self) -> RunIdentity:
        path = self.options.scores.resolve()
        return RunIdentity(options=self.options, dataset_hash=fingerprint([path], path.parent),
                           seeds={"bootstrap": self.options.seed})

    def plan(self) -> list[Group]:
        return self.groups

    async def run_item(self, group: Group) -> StatsRecord:
        return StatsRecord(group=group.name, **await run_blocking(
            lambda: analyse_group(group.rows, coding=self.options.coding,
                                  seed=self.options.seed)))

    def summarise(self, records: ItemRecords[StatsRecord], tally: Tally) -> AttributionMetrics:
        ok = list(records.ok())
        families = correction_families([r.group for r in ok])
        return AttributionMetrics(
            lmm=corrected_lmm({r.group: r.lmm for r in ok}, self.options.correction, families),
            families=family_lists(families),
            cell_means={r.group: r.cell_means for r in ok},
            permutation={r.group: r.permutation for r in ok},
            correction=self.options.correction, coding=self.options.coding,
            n_records=int(self.table["record"].nunique()), n_rows=int(len(self.table)),
            n_failed=tally.n_failed, failures=tally.failures)

    def summary_line(self, metrics: AttributionMetrics) -> str:
        return (f"Scores: {self.options.scores} · {metrics.n_rows} rows, {metrics.n_records} "
                "records")

    def report_sections(self, report: HtmlReport, metrics: AttributionMetrics,
                        records: ItemRecords[StatsRecord]) -> None:
        report.heading("Mixed-effects attribution: score ~ P × M + (1 | record)")
        report.paragraph("REML fits (closed form when every record has all four cells, "
                         f"statsmodels MixedLM otherwise), {metrics.coding} coding; "
                         f"p adjusted across every group and effect ({metrics.correction}"
                         + (", agreement and framing apart from the pooled sycophancy they"
                            " pool" if PARTS_FAMILY in metrics.families else "") + ");"
                         " partial η² from the repeated-measures ANOVA.")
        fit_tables(report, metrics.lmm, "group", "95% CI")
        report.heading("Cell means and tests against base")
        report.table(["group", "condition", "mean", "CI low", "CI high", "n",
                      "vs base: mean diff", "sign-flip p"],
                     [[name, c, v.value, *v.bounds, v.n, *_test(metrics.permutation[name].get(c))]
                      for name, cells in metrics.cell_means.items() for c, v in cells.items()])
        cell_plots(report, metrics.cell_means)


def run_stats(options: StatsOptions, *, progress: bool = True) -> Outcome:
    return run_lens(PriskStats(options), options.out, progress=progress)


def _test(test: SignFlip | None) -> list:
    return [None, None] if test is None else [test.mean, test.p]


def fit_tables(report: HtmlReport, lmm: dict[str, Attribution], group: str, ci: str) -> None:
    """The fits per group: each effect's β, SE, CI, p (raw and adjusted), partial η²; then the
    variance components."""
    report.table([group, "effect", "β", "SE", f"{ci} low", f"{ci} high", "p", "p adj",
                  "partial η²"],
                 [[name, e, c.value, c.se, *c.bounds, c.p, c.p_adj, c.eta_p2]
                  for name, f in lmm.items() for e, c in f.effects().items()])
    report.table([group, "record variance", "residual variance"],
                 [[name, f.variance.record, f.variance.residual] for name, f in lmm.items()])


def cell_plots(report: HtmlReport, cell_means: dict[str, dict[str, MeanEstimate]]) -> None:
    """An interaction plot of each group's 2x2 cell means (or that nothing was scored: empty
    axes say less)."""
    for name, cells in cell_means.items():
        means = {pm: cells[c].value if c in cells else None for pm, c in CONDITIONS.items()}
        if any(v is not None for v in means.values()):
            report.figure(interaction_plot(means, "mean score", name),
                          f"{name}: the 2×2 cell means")
        else:
            report.paragraph(f"{name}: the 2×2 cell means: nothing scored.")


def analyse_group(rows: pd.DataFrame, *, coding: str, seed: int) -> dict:
    """One group's statistics: {lmm, cell_means, permutation, n_records, n_rows} (a
    `StatsRecord`'s fields).

    `rows` has columns record, profile, memory (0/1) and score. lmm is `fit_attribution`'s
    (uncorrected p; see `corrected_lmm`), cell_means the four conditions' means with
    bootstrap CIs, permutation the sign-flip test of each condition against base.
    """
    fit = fit_attribution(rows, coding=coding)
    profile = rows["profile"].to_numpy()
    memory = rows["memory"].to_numpy()
    score = rows["score"].to_numpy()
    columns = {condition: score[(profile == p) & (memory == m)]
               for (p, m), condition in CONDITIONS.items()}
    bounds = mean_cis(list(columns.values()), seed=seed)
    cells = {condition: MeanEstimate.with_bounds(float(scores.mean()), ci, len(scores))
             for (condition, scores), ci in zip(columns.items(), bounds, strict=True)}
    return {"lmm": fit, "cell_means": cells, "permutation": _against_base(rows, seed),
            "n_records": int(rows["record"].nunique()), "n_rows": int(len(rows))}


SYCOPHANCY_PARTS = ("agreement", "framing")  # the risks the pooled score pools
POOLED = "sycophancy"
MAIN_FAMILY, PARTS_FAMILY = "risks", "sycophancy parts"


def correction_families(groups: list[str]) -> dict[str, str]:
    """{group: its correction family}. A group is a risk or `<model>:<risk>`. Agreement and
    framing are the pooled sycophancy score's own records again: where the same model's pooled
    `sycophancy` is among the groups they form a family of their own (PARTS_FAMILY), so the
    sycophancy data is counted once in the main family (MAIN_FAMILY), as the paper's one
    sycophancy risk; without the pooled score they stay in the main family."""
    def split(group: str) -> tuple[str, str]:
        model, _, risk = group.rpartition(":")
        return model, risk

    pooled = {split(g)[0] for g in groups if split(g)[1] == POOLED}
    return {g: PARTS_FAMILY if split(g)[1] in SYCOPHANCY_PARTS and split(g)[0] in pooled
            else MAIN_FAMILY for g in groups}


def family_lists(families: dict[str, str]) -> dict[str, list[str]]:
    """{family: [groups]} of `correction_families`, in the groups' order."""
    out: dict[str, list[str]] = {}
    for group, family in families.items():
        out.setdefault(family, []).append(group)
    return out


def corrected_lmm(results: dict[str, Attribution], correction: str,
                  families: dict[str, str] | None = None) -> dict[str, Attribution]:
    """The groups' fits (`analyse_group`'s lmm) with each effect's p_adj.

    p is adjusted (holm or bh) across every group x effect of one family (`families`: group ->
    family; default one family of every group), in the order of `results` and then profile,
    memory, interaction.
    """
    families = families or {name: MAIN_FAMILY for name in results}
    adjusted: dict[tuple[str, str], float | None] = {}
    for family in dict.fromkeys(families[name] for name in results):
        keys = [(name, effect) for name in results if families[name] == family
                for effect in EFFECTS]
        p_values = [getattr(results[name], effect).p for name, effect in keys]
        adjusted.update(zip(keys, adjust(p_values, correction), strict=True))
    return {name: fit.model_copy(update={
        effect: c.model_copy(update={"p_adj": adjusted[(name, effect)]})
        for effect, c in fit.effects().items()}) for name, fit in results.items()}


def _against_base(rows: pd.DataFrame, seed: int) -> dict[str, SignFlip]:
    """Paired sign-flip test of each condition's per-record mean against base's.

    Records (sorted, as a pivot table sorts them) missing either cell are left out.
    """
    table = cell_table(rows)
    column = {cell: table.means[:, i] for i, cell in enumerate(CELLS)
              if table.counts[:, i].any()}
    tested = {}
    for (p, m), condition in CONDITIONS.items():
        if (p, m) == (0, 0) or (p, m) not in column or (0, 0) not in column:
            continue
        differences = column[(p, m)] - column[(0, 0)]
        tested[condition] = differences[~np.isnan(differences)]
    results = sign_flip_tests(list(tested.values()), seed=seed)
    return {condition: SignFlip(**result) for condition, result in zip(tested, results,
                                                                       strict=True)}
