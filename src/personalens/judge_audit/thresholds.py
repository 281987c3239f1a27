"""When a figure makes a judge reliable, doubtful or unreliable (docs/judges.md says why).

Defaults, from the literature where there is one:
- Krippendorff's alpha: reliable >= 0.800, doubtful (tentative conclusions only) >= 0.667
  (Krippendorff, Content Analysis, 2004, §11.4.3).
- Gwet's AC2 and Cohen's kappa: >= 0.80 reliable ("almost perfect"), >= 0.60 doubtful
  ("substantial"): the Landis & Koch (1977) benchmarks, which Gwet's handbook also uses.
- Exact agreement: >= 0.90 reliable, >= 0.80 doubtful: PRISK's six annotators agreed 84-90 %
  of the time, so a judge agreeing with itself less than people agree with each other is not
  fit to replace them.
- Known-answer probes: >= 0.90 reliable, >= 0.75 doubtful. Their right outcome is known by
  construction, so a sound judge passes nearly all; ours, not from a paper.
A figure on fewer than MIN_N units is at best doubtful (too few to call a judge reliable), and
below the doubtful threshold it is unreliable only when its whole 95 % CI is (too few to call
it unreliable on the point value alone).
"""

from typing import Literal

from personalens.errors import InputError

Verdict = Literal["reliable", "doubtful", "unreliable", "undefined"]
DEFAULTS: dict[str, tuple[float, float]] = {
    "alpha": (0.800, 0.667), "ac2": (0.80, 0.60), "kappa": (0.80, 0.60), "exact": (0.90, 0.80),
    "probe": (0.90, 0.75)}
MIN_N = 10
SOURCES = {
    "alpha": "Krippendorff (2004), Content Analysis, §11.4.3",
    "ac2": "Landis & Koch (1977) benchmarks, as in Gwet's Handbook of Inter-Rater Reliability",
    "kappa": "Landis & Koch (1977)",
    "exact": "PRISK's annotators' raw agreement, 84-90 %",
    "probe": "personalens: a known answer should be met nearly always",
}
_ORDER = {"reliable": 0, "doubtful": 1, "unreliable": 2}


def thresholds(overrides: list[str]) -> dict[str, tuple[float, float]]:
    """DEFAULTS with "name=reliable:doubtful" overrides (InputError naming a bad one)."""
    out = dict(DEFAULTS)
    for text in overrides:
        name, _, values = text.partition("=")
        high, _, low = values.partition(":")
        try:
            pair = (float(high), float(low))
        except ValueError:
            raise InputError(f"--thresholds takes name=reliable:doubtful, e.g. alpha=0.8:0.667 "
                             f"(got {text!r})") from None
        if name not in DEFAULTS or not pair[1] <= pair[0]:
            raise InputError(f"--thresholds: {text!r}: the name is one of "
                             f"{', '.join(DEFAULTS)}, and reliable >= doubtful")
        out[name] = pair
    return out


def verdict(kind: str, value: float | None, n: int, limits: dict[str, tuple[float, float]],
            ci_high: float | None = None) -> Verdict:
    """The figure's verdict against its kind's thresholds. Below MIN_N units it is at best
    doubtful, and unreliable only when its CI's upper end (`ci_high`) is below the doubtful
    threshold too."""
    if value is None:
        return "undefined"
    reliable, doubtful = limits[kind]
    found = "reliable" if value >= reliable else "doubtful" if value >= doubtful else "unreliable"
    if n >= MIN_N:
        return found
    if found == "unreliable" and ci_high is not None and ci_high < doubtful:
        return found
    return "doubtful"


def worst(verdicts: list[str]) -> Verdict:
    """The worst defined verdict (undefined figures say nothing); undefined when none is."""
    defined = [v for v in verdicts if v in _ORDER]
    return max(defined, key=_ORDER.__getitem__) if defined else "undefined"
