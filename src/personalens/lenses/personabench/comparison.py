"""How `personalens compare` reads `personabench eval` runs: a system is a (run, retriever),
named by its answering model and retriever; its units are the questions, paired across systems
on (community, noise, question).

The headlines are per noise level, as the paper's table reads: retrieval recall and nDCG,
answer F1 and the info-updating score (1 - outdated recall, over questions whose value
changed). Each is a mean of the per-question values the lens's metrics.json averages (a
failed answer keeps its retrieval, as there).
"""

from collections.abc import Iterable, Mapping
from typing import Any

from personalens.lenses.commands import Comparison, Headline, Table
from personalens.lenses.personabench.analysis import CATEGORIES
from personalens.lenses.personabench.records import PersonabenchRecord
from personalens.report import line_plot
from personalens.runs import ItemFailure, ItemRecords
from personalens.stats import Estimate

NO_MODEL = "retrieval only"


def _unit(record: PersonabenchRecord) -> str:
    return f"{record.community}/{record.noise}/{record.q_id}"


def _values(record: PersonabenchRecord) -> dict[str, float]:
    """The record's per-question values by metric (those it has)."""
    values = {"recall": record.retrieval.recall, "ndcg": record.retrieval.ndcg}
    if record.end_to_end is not None:
        values["f1"] = record.end_to_end.f1
        if record.outdated_recall is not None:
            values["info_updating"] = 1.0 - record.outdated_recall
    return values


LABELS = {"recall": "recall", "ndcg": "nDCG", "f1": "answer F1",
          "info_updating": "info-updating"}


CATEGORY_METRICS = ("recall", "ndcg", "f1")


def _estimates(records: list[PersonabenchRecord], metrics: Iterable[str],
               seed: int) -> list[Estimate]:
    """Each metric's mean over the records that have it, with its 95 % bootstrap CI and n."""
    values = [_values(r) for r in records]
    return [Estimate.of_mean([v[m] for v in values if m in v], seed=seed)
            for m in metrics]


class PersonabenchComparison(Comparison):
    record_model = PersonabenchRecord

    def systems(self, records: ItemRecords[PersonabenchRecord],
                manifest: Mapping[str, Any]) -> dict[str, list[PersonabenchRecord]]:
        model = manifest.get("models", {}).get("target", NO_MODEL)
        out: dict[str, list[PersonabenchRecord]] = {}
        for record in records:
            if isinstance(record, ItemFailure):  # its retrieval counts, as in metrics.json
                record = records.produced(record)
                if record is None:
                    continue
            out.setdefault(f"{model} · {record.retriever}", []).append(record)
        return {name: sorted(rs, key=lambda r: r.key) for name, rs in out.items()}

    def item(self, record: PersonabenchRecord) -> str:
        return _unit(record)

    def headlines(self, records: list[PersonabenchRecord]) -> dict[str, Headline]:
        units: dict[str, dict[str, float]] = {}
        for record in records:
            for metric, value in _values(record).items():
                units.setdefault(f"{metric}@{record.noise}", {})[_unit(record)] = value
        order = list(LABELS)  # recall, nDCG, F1, info-updating; each by noise
        return {key: Headline(f"{LABELS[key.split('@')[0]]} @ noise {key.split('@')[1]}",
                              units[key])
                for key in sorted(units, key=lambda k: (order.index(k.split("@")[0]),
                                                        float(k.split("@")[1])))}

    def tables(self, systems: Mapping[str, list[PersonabenchRecord]],
               seed: int) -> list[Table]:
        overall, by_category = [], []
        for name, records in systems.items():
            for noise in sorted({r.noise for r in records}, key=float):
                at_noise = [r for r in records if r.noise == noise]
                overall.append([name, float(noise), *_estimates(at_noise, LABELS, seed)])
                by_category += [[name, float(noise), category, *_estimates(
                    [r for r in at_noise if r.category == category], CATEGORY_METRICS, seed)]
                    for category in CATEGORIES]
        return [Table("PersonaBench: system x noise (means over questions, 95 % CI)",
                      ["system", "noise", *LABELS.values()], overall),
                Table("PersonaBench by question category (the paper's Tables 3 and 4)",
                      ["system", "noise", "category",
                       *(LABELS[m] for m in CATEGORY_METRICS)], by_category)]

    def figures(self, tables: list[Table]) -> list[tuple[bytes, str]]:
        """Recall and answer F1 against noise, a line per system (the paper's noise sweep)."""
        table = tables[0]
        out = []
        for column in ("recall", "answer F1"):
            at = table.headers.index(column)
            series: dict[str, list[tuple[float, float | None]]] = {}
            for row in table.rows:
                series.setdefault(row[0], []).append((row[1], row[at].value))
            if any(v is not None for points in series.values() for _, v in points):
                out.append((line_plot(series, "noise", column, f"{column} vs noise"),
                            f"{column} against the noise level per system"))
        return out

    def unit_text(self, records: list[PersonabenchRecord]) -> dict[str, tuple[str, str]]:
        return {_unit(r): (f"{r.person}: {r.question} (noise {r.noise})",
                           f"answer: {r.prediction if r.answered else '(not answered)'}\n"
                           f"gold: {r.answer}\nretrieved: {', '.join(r.retrieved_ids)}")
                for r in records}


COMPARISON = PersonabenchComparison()
