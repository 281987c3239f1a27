"""`personalens demo`: generate a small community with the bundled model, then evaluate it.

Sized to finish within 3 minutes on 2 cores from an empty cache (`bench/demo_timing.py`):
3 people, the 4-attribute `demo_schema.yaml` (no multi-hop social questions), one own
question per person plus a relationship question per tie, lists of one entry, as many noise
sessions as noise level 0.3 asks; then BM25 and MiniLM retrieval with k = 2 and SmolLM2
answers. It ends by saying where the reports are and what the headline numbers mean.
"""

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from personalens.runs.options import user_path

if TYPE_CHECKING:  # the commands import their lenses lazily: `personalens --help` stays fast
    from personalens.lenses.personabench.metrics import PersonabenchMetrics
    from personalens.lenses.personabench.options import EvalOptions
    from personalens.population.generate_options import GenerateOptions

DEMO_SCHEMA = (Path(__file__).resolve().parent.parent / "population" / "data"
               / "demo_schema.yaml")
NOISE = "0.3"  # about a third of each person's sessions are distractors
RETRIEVERS = ["bm25", "minilm"]
K = 2


def generation_options(out: Path) -> "GenerateOptions":
    from personalens.population.generate_options import GenerateOptions

    # Noise sessions are written once, for the highest level; level 0.0 is the personal
    # sessions alone, so it costs no request and lets the data be evaluated without noise too.
    return GenerateOptions(people=3, communities=1, out=out / "population",
                           noise=["0.0", NOISE], attributes_per_person=1, max_list_entries=1,
                           profile_schema=DEMO_SCHEMA)


def eval_options(out: Path) -> "EvalOptions":
    from personalens.lenses.personabench.options import EvalOptions
    from personalens.models import DEFAULT_MODEL

    return EvalOptions(data=out / "population" / "synthetic_data", out=out / "eval",
                       noise=[NOISE], retriever=RETRIEVERS, k=K,
                       models={"target": DEFAULT_MODEL})


def summary(out: Path, metrics: "PersonabenchMetrics", k: int, model: str,
            minutes: float) -> list[str]:
    """The demo's last lines: where to look, the headline numbers and what they mean."""
    lines = [f"demo finished in {minutes:.1f} min. Open the evaluation report: "
             f"{out / 'eval' / 'report.html'}",
             f"  what was generated: {out / 'population' / 'report.html'}; every figure: "
             f"{out / 'eval' / 'metrics.json'}"]
    lines += [f"  {line}" for line in metrics.headlines()]
    asked = sorted({c.retrieval["overall"].n for c in metrics.conditions})
    lines += [
        f"  Each number is a mean over the {' or '.join(map(str, asked))} questions a retriever "
        "was asked, from 0 to 1, higher is better.",
        f"  retrieval recall: share of a question's gold sessions among the {k} the retriever "
        "returned; nDCG: the same, also crediting gold sessions ranked first.",
        f"  answer F1: word overlap between {model}'s answer (from those {k} sessions) and the "
        "gold answer.",
    ]
    return lines


def demo(
    out: Annotated[Path, typer.Option(parser=user_path, help="Directory for the demo's two runs.")
                   ] = Path("runs/demo"),
) -> None:
    """Generate a 3-person community with the bundled model, then evaluate it offline.

    Generation uses a small 4-attribute template and one own question per person (noise levels
    0.0 and 0.3); evaluation uses BM25 and MiniLM at noise 0.3 with k = 2, with answers by the
    bundled SmolLM2. Both steps resume. Under 3 minutes on 2 cores.
    """
    from personalens.cli.run_output import INCOMPLETE, exit_if_incomplete
    from personalens.lenses.personabench.command import run_eval
    from personalens.population.generate import run_generate

    start = time.perf_counter()
    generated = run_generate(generation_options(out))
    if not generated.complete:
        typer.echo(f"generation incomplete; see {out / 'population' / 'report.html'} and rerun "
                   "the same command", err=True)
        raise typer.Exit(INCOMPLETE)
    for line in generated.metrics.headlines():
        typer.echo(f"generated {line}")
    options = eval_options(out)
    evaluated = run_eval(options)
    for line in summary(out, evaluated.metrics, options.k, options.target.spec,
                        (time.perf_counter() - start) / 60):
        typer.echo(line)
    exit_if_incomplete(evaluated)
