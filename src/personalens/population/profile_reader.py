"""The profiles of a `personalens generate` output, as other lenses read them.

`ground_truth/<community>/profiles.json` holds `{name: {persona, attributes}}` per community;
lenses that need personas draw them from it, so one population serves every lens.
"""

from dataclasses import dataclass
from pathlib import Path

from personalens.errors import InputError
from personalens.input_files import read_json


@dataclass(frozen=True)
class GeneratedProfile:
    key: str  # "<community>/<name>": unique across the population
    name: str
    persona: str  # the one-line persona description
    attributes: dict


def profile_files(root: Path) -> list[Path]:
    """Every community's profiles.json, sorted (also what a run fingerprints)."""
    return sorted(root.glob("ground_truth/*/profiles.json"))


def read_profiles(root: Path) -> list[GeneratedProfile]:
    """Every profile, in file then name order; bad input names the file and the profile."""
    files = profile_files(root)
    if not files:
        raise InputError("no ground_truth/*/profiles.json: not a `personalens generate` output",
                         where=str(root))
    out = []
    for file in files:
        profiles = read_json(file)
        if not isinstance(profiles, dict):
            raise InputError("expected an object keyed by name", where=str(file))
        for name, body in profiles.items():
            if not isinstance(body, dict) or not isinstance(body.get("attributes"), dict):
                raise InputError(f"profile of {name!r} has no attributes object",
                                 where=str(file))
            out.append(GeneratedProfile(f"{file.parent.name}/{name}", name,
                                        str(body.get("persona", "")), body["attributes"]))
    return out
