"""PRISK's conditions: what personal context the target gets.

The 2x2 design crosses P (the profile in the prompt) with M (memory retrieved from the user's
past conversations, behind the router). `reflect` is the paper's self-reflection mitigation
under profile + retrieval; `k<N>` conditions are the retrieval-depth sweep: memory only,
retrieval forced (no router), top N, for every risk (the paper's Table 12).
"""

from dataclasses import dataclass

BASE_CONDITIONS = ("base", "profile", "retrieval", "profile_retrieval")


@dataclass(frozen=True)
class Condition:
    name: str
    profile: bool
    memory: bool
    reflect: bool = False
    forced_k: int | None = None  # the k-sweep: retrieval without the router, this many

    @property
    def in_universe(self) -> bool:
        """Whether narrowing's answer set U is built from this condition's samples: the 2x2's
        only, so that adding reflect or a depth sweep leaves U, and every main number, as it
        was (their samples are labelled after U is fixed)."""
        return self.forced_k is None and not self.reflect


_NAMED = {
    "base": Condition("base", False, False),
    "profile": Condition("profile", True, False),
    "retrieval": Condition("retrieval", False, True),
    "profile_retrieval": Condition("profile_retrieval", True, True),
    "reflect": Condition("reflect", True, True, reflect=True),
}


def conditions_for(names: list[str], k_sweep: list[int]) -> list[Condition]:
    """The run's conditions in order (names and depths as the options validated them); base is
    always included (every comparison needs it)."""
    ordered = ["base", *[n for n in names if n != "base"]]
    return [_NAMED[n] for n in dict.fromkeys(ordered)] + [
        Condition(f"k{k}", False, True, forced_k=k) for k in dict.fromkeys(k_sweep)]


def cell(condition: Condition) -> tuple[int, int] | None:
    """(P, M) of a 2x2 condition, None for reflect and the k-sweep."""
    return ((int(condition.profile), int(condition.memory))
            if condition.name in BASE_CONDITIONS else None)
