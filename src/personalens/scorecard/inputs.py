"""A scorecard's inputs, checked before anything is written: the systems, the lenses, the
judge, a given population and the output folder."""

from pathlib import Path

from personalens.errors import InputError
from personalens.models.settings import ModelSettings
from personalens.models.spec import DEFAULT_MODEL
from personalens.scorecard.sizes import SIZES
from personalens.scorecard.stages import Plan, card_lenses, known_lenses
from personalens.scorecard.systems import parse_systems

# What a scorecard folder holds besides a folder per lens; --out may be new, empty, or a
# scorecard folder already.
OWN = {"population", "data", "compare", "judge-audit", "scorecard.json", "scorecard.html"}


def make_plan(systems: list[str], *, out: Path, judge: str = "", judge_base_url: str | None = None,
              size: str = "small", population: Path | None = None,
              lenses: str | None = None) -> Plan:
    """`lenses`: comma-separated; None: every lens on the scorecard."""
    judge_settings = ModelSettings(spec=judge or DEFAULT_MODEL, base_url=judge_base_url)
    judge_settings.validate_spec()
    names = card_lenses() if lenses is None else [n.strip() for n in lenses.split(",")
                                                  if n.strip()]
    plan = Plan(out=out, size=SIZES[size], systems=parse_systems(systems),
                lenses=known_lenses(names),
                judge=judge_settings, population=population)
    if not plan.lenses:
        raise InputError("--lenses names no lens")
    _check_out(out)
    if population is not None:
        _check_population(population)
    return plan


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError("--out exists and is not a folder", where=str(out))
    if out.is_dir():
        own = OWN | set(card_lenses())
        other = sorted(p.name for p in out.iterdir() if p.name not in own)
        if other:
            raise InputError(f"--out holds {other[0]!r}, so it is not a scorecard folder; give "
                             "a new or empty folder", where=str(out))


def _check_population(path: Path) -> None:
    if not (path / "synthetic_data").is_dir() or not any((path / "ground_truth").glob(
            "*/profiles.json")):
        raise InputError("--population is not a `personalens generate` output (expected "
                         "synthetic_data/ and ground_truth/<community>/profiles.json)",
                         where=str(path))


def parse_prices(texts: list[str]) -> dict[str, tuple[float, float]]:
    """"openai/gpt-4o-mini=0.15,0.6" -> {spec: (in, out)} in USD per million tokens."""
    prices = {}
    for text in texts:
        spec, _, values = text.rpartition("=")
        try:
            price_in, price_out = (float(v) for v in values.split(","))
        except ValueError:
            raise InputError(f"--price {text!r}: expected MODEL=IN,OUT (USD per million "
                             "tokens)") from None
        if not spec:
            raise InputError(f"--price {text!r}: expected MODEL=IN,OUT")
        prices[spec] = (price_in, price_out)
    return prices
