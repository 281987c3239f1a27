"""`personalens/pqb` in Inspect (retrieval only: no model calls; `--model` is required by
Inspect but never asked). The typo profiles are built per user from their reviews (`personalens
pqb build`), which an Inspect sample cannot do: the task evaluates a built (or released)
dataset. The task itself is generated from the lens's declaration by `inspect_tasks`."""

from personalens.lenses.pqb.analysis import KS
from personalens.lenses.pqb.command import QueryItem
from personalens.lenses.pqb.metrics import PqbMetrics

KINDS = ("clean", "typo", "random_typo")
QUERY_FIELDS = {"clean": "syntax_query", "typo": "typo_query",  # the record's field per kind
                "random_typo": "random_typo_query"}


def sample(item: QueryItem) -> dict:
    return {"input": item.record.syntax_query, "target": item.record.asin,
            "metadata": {"persona": item.record.uid, "parent_asin": item.group.parent_asin,
                         **{f"{kind}_query": text for kind, text in item.texts().items()}}}


def figures(line: dict) -> dict[str, float]:
    """The reciprocal rank of the target item for each query kind the record has (0 outside
    the top 20); a kind without a query (no typo version) has none."""
    return {f"rr_{kind}": 1 / line[f"rank_{kind}"] if line[f"rank_{kind}"] else 0.0
            for kind in KINDS if f"rank_{kind}" in line and line.get(QUERY_FIELDS[kind])}


def headlines(metrics: PqbMetrics) -> dict[str, float]:
    """Flip rate (the paper's and over all pairs), Hit@K per query kind, MRR per kind."""
    out: dict[str, float] = {}
    for k in map(str, KS):
        for definition in ("paper", "all_pairs"):
            out[f"flip_rate_{definition}@{k}"] = metrics.flip_rate[definition][k].value
        for kind, by_k in metrics.hit.items():
            out[f"hit_{kind}@{k}"] = by_k[k].value
    out |= {f"mrr_{kind}": estimate.value for kind, estimate in metrics.mrr.items()}
    return out
