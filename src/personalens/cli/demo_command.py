"""`personalens demo`: generate a small community with the bundled model, then evaluate it
with the first registered lens that declares a demo (`lenses.commands.Demo`).

Sized to finish within 3 minutes on 2 cores from an empty cache (`bench/demo_timing.py`):
3 people, the 4-attribute `demo_schema.yaml` (no multi-hop social questions), one own
question per person plus a relationship question per tie, lists of one entry, as many noise
sessions as noise level 0.3 asks; then the lens's own small evaluation (BM25 and MiniLM
retrieval with k = 2 and SmolLM2 answers). It ends by saying where the reports are and what
the headline numbers mean.
"""

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from personalens.runs.options import user_path

if TYPE_CHECKING:  # the commands import their lenses lazily: `personalens --help` stays fast
    from personalens.lenses.commands import Demo
    from personalens.population.generate_options import GenerateOptions

DEMO_SCHEMA = (Path(__file__).resolve().parent.parent / "population" / "data"
               / "demo_schema.yaml")
NOISE = "0.3"  # about a third of each person's sessions are distractors


def generation_options(out: Path) -> "GenerateOptions":
    from personalens.population.generate_options import GenerateOptions

    # Noise sessions are written once, for the highest level; level 0.0 is the personal
    # sessions alone, so it costs no request and lets the data be evaluated without noise too.
    return GenerateOptions(people=3, communities=1, out=out / "population",
                           noise=["0.0", NOISE], attributes_per_person=1, max_list_entries=1,
                           profile_schema=DEMO_SCHEMA)


def demo_lens() -> tuple[str, "Demo"]:
    """The first registered lens that declares a demo, and its declaration."""
    from personalens.lenses import LENSES
    from personalens.lenses.commands import lens_commands

    return next((lens, lens_commands(lens).demo) for lens in LENSES
                if lens_commands(lens).demo is not None)


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
    from personalens.lenses.commands import lens_commands, resolve
    from personalens.population.generate import run_generate

    start = time.perf_counter()
    generated = run_generate(generation_options(out))
    if not generated.complete:
        typer.echo(f"generation incomplete; see {out / 'population' / 'report.html'} and rerun "
                   "the same command", err=True)
        raise typer.Exit(INCOMPLETE)
    for line in generated.metrics.headlines():
        typer.echo(f"generated {line}")
    lens, declared = demo_lens()
    options = resolve(declared.options)(out / "population", out / "eval")
    evaluated = resolve(lens_commands(lens).command(declared.command).run)(options)
    minutes = (time.perf_counter() - start) / 60
    for line in [f"demo finished in {minutes:.1f} min. Open the evaluation report: "
                 f"{out / 'eval' / 'report.html'}",
                 f"  what was generated: {out / 'population' / 'report.html'}; every figure: "
                 f"{out / 'eval' / 'metrics.json'}",
                 *resolve(declared.summary)(out / "eval", evaluated.metrics, options)]:
        typer.echo(line)
    exit_if_incomplete(evaluated)
