"""Token usage, retries and failures per model role, and what they cost, for the manifest."""

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol


class Usage(Protocol):
    """What a model call reports: the models layer's `Usage` has these fields."""

    prompt_tokens: int
    completion_tokens: int


@dataclass
class RoleUsage:
    requests: int = 0
    cached_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {
            "requests": self.requests,
            "cached_requests": self.cached_requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "retries": dict(sorted(self.retries.items())),
            "failures": dict(sorted(self.failures.items())),
        }


def merge_usage(earlier: dict, now: dict) -> dict:
    """Usage of earlier sessions of a run plus this session's (counts add up by role and kind)."""
    merged = {role: dict(values) for role, values in earlier.items()}
    for role, values in now.items():
        into = merged.setdefault(role, {})
        for name, value in values.items():
            if isinstance(value, dict):
                counts = Counter(into.get(name, {}))
                counts.update(value)
                into[name] = dict(sorted(counts.items()))
            else:
                into[name] = into.get(name, 0) + value
    return dict(sorted(merged.items()))


class UsageLedger:
    """Counts what every model call cost, keyed by role (target, generator, user, judge)."""

    def __init__(self) -> None:
        self.roles: dict[str, RoleUsage] = {}

    def _role(self, role: str) -> RoleUsage:
        return self.roles.setdefault(role, RoleUsage())

    def record(self, role: str, usage: Usage, *, cached: bool) -> None:
        entry = self._role(role)
        entry.requests += 1
        entry.cached_requests += int(cached)
        entry.prompt_tokens += usage.prompt_tokens
        entry.completion_tokens += usage.completion_tokens

    def retry(self, role: str, kind: str) -> None:
        self._role(role).retries[kind] += 1

    def failure(self, role: str, kind: str) -> None:
        self._role(role).failures[kind] += 1

    def as_dict(self) -> dict:
        return {role: entry.as_dict() for role, entry in sorted(self.roles.items())}

    def add(self, usage: dict) -> None:
        """Count usage recorded elsewhere (a remote worker's ledger, as `as_dict` gave it)."""
        for role, values in usage.items():
            entry = self._role(role)
            entry.requests += values["requests"]
            entry.cached_requests += values["cached_requests"]
            entry.prompt_tokens += values["prompt_tokens"]
            entry.completion_tokens += values["completion_tokens"]
            entry.retries.update(values["retries"])
            entry.failures.update(values["failures"])


def estimated_cost(usage: dict, prices: dict[str, tuple[float, float]]) -> float:
    """USD for `usage` (by role) at `prices` (role -> USD per million tokens in, out)."""
    total = 0.0
    for role, counts in usage.items():
        per_in, per_out = prices.get(role, (0.0, 0.0))
        total += counts["prompt_tokens"] * per_in + counts["completion_tokens"] * per_out
    return total / 1e6
