"""What `personalens demo` evaluates its generated community with: this lens's eval, BM25 and
MiniLM retrieval with k = 2 at noise 0.3 and the bundled model's answers, and the closing lines
that say what the headline numbers mean."""

from pathlib import Path

from personalens.lenses.personabench.metrics import PersonabenchMetrics
from personalens.lenses.personabench.options import EvalOptions
from personalens.models.spec import DEFAULT_MODEL

NOISE = "0.3"  # about a third of each person's sessions are distractors
RETRIEVERS = ["bm25", "minilm"]
K = 2


def eval_options(population: Path, out: Path) -> EvalOptions:
    """The eval of `population` (a `personalens generate` folder) into `out`."""
    return EvalOptions(data=population / "synthetic_data", out=out, noise=[NOISE],
                       retriever=RETRIEVERS, k=K, models={"target": DEFAULT_MODEL})


def summary(out: Path, metrics: PersonabenchMetrics, options: EvalOptions) -> list[str]:
    """The headline numbers (`out`: the eval's run folder) and what they mean."""
    lines = [f"  {line}" for line in metrics.headlines()]
    asked = sorted({c.retrieval["overall"].n for c in metrics.conditions})
    k, model = options.k, options.target.spec
    lines += [
        f"  Each number is a mean over the {' or '.join(map(str, asked))} questions a retriever "
        "was asked, from 0 to 1, higher is better.",
        f"  retrieval recall: share of a question's gold sessions among the {k} the retriever "
        "returned; nDCG: the same, also crediting gold sessions ranked first.",
        f"  answer F1: word overlap between {model}'s answer (from those {k} sessions) and the "
        "gold answer.",
    ]
    return lines
