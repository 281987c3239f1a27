"""The typed metrics of a PQB eval run: what metrics.json holds, the report and CLI read."""

from personalens.lenses.pqb.analysis import KS
from personalens.runs import ItemFailure, Metrics
from personalens.stats.estimate import Estimate


class PqbMetrics(Metrics):
    retriever: str
    n_queries: int
    n_pairs: int
    n_typo: int
    n_random_typo: int
    # "paper" | "all_pairs" -> K -> estimate (no n: a flip rate is over the pairs either hits)
    flip_rate: dict[str, dict[str, Estimate]]
    hit: dict[str, dict[str, Estimate]]  # query kind -> K -> estimate
    mrr: dict[str, Estimate]
    typo_edit_kinds: dict[str, dict[str, int]]
    failures: list[ItemFailure]

    def headlines(self) -> list[str]:
        lines = []
        for k in map(str, KS):
            hit = self.hit
            line = (f"K={k}: flip rate (paper) {fmt(self.flip_rate['paper'][k].value)}, "
                    f"all pairs {fmt(self.flip_rate['all_pairs'][k].value)}; hit clean "
                    f"{fmt(hit['clean'][k].value)} (n={self.n_queries}); typo subset "
                    f"(n={self.n_typo}): clean {fmt(hit['clean_on_typo'][k].value)} -> "
                    f"typo {fmt(hit['typo'][k].value)}")
            if self.n_random_typo:
                line += f"; random typo {fmt(hit['random_typo'][k].value)}"
            lines.append(line)
        return lines


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"
