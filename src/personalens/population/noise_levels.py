"""Noise levels as the release names its folders: '0.5', '.5' and '0.50' are one level."""

from typing import Annotated

import pydantic

from personalens.runs.options import comma_list


def normalise_noise(value: str | float) -> str:
    """The release's name of a noise level (folder noise_<name>); ValueError outside [0, 1)."""
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a number") from None
    if not 0.0 <= number < 1.0:
        raise ValueError(f"{value} must be in [0, 1)")
    return f"{number:.1f}" if round(number, 1) == number else f"{number:g}"


def _levels(value: object) -> object:
    values = comma_list(value)
    if not isinstance(values, list):
        return values
    return list(dict.fromkeys(normalise_noise(v) for v in values))


# A comma-separated list of noise levels, each once, as the release names them.
NoiseLevels = Annotated[list[str], pydantic.BeforeValidator(_levels)]
