"""What a run would cost before it runs: items, model calls per role, estimated tokens.

A command's `--dry-run` prints its `CallPlan` and calls no model (`cli.declared_command`).
The calls a plan counts are the requests a run's manifest counts under `usage.<role>.requests`
when every call succeeds at its first attempt and every dialogue uses its whole budget: the
counts are exact for a run without retries and an upper bound for dialogues that end early.
Tokens are estimates: prompt tokens from the prompts' characters (about four per token),
completion tokens from each call's cap or its expected length.
"""

from dataclasses import dataclass, field

from personalens.runs.usage import estimated_cost

CHARS_PER_TOKEN = 4  # English text in the BPE tokenizers of the models we run


def estimated_tokens(text: str | int) -> int:
    """Tokens in `text` (or in that many characters), rounded up."""
    chars = text if isinstance(text, int) else len(text)
    return -(-chars // CHARS_PER_TOKEN)


@dataclass
class RoleCalls:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class CallPlan:
    command: str  # "<lens> eval"
    items: int  # the items the run plans
    unit: str  # what an item is: "questions", "instances"
    roles: dict[str, RoleCalls] = field(default_factory=dict)
    specs: dict[str, str] = field(default_factory=dict)  # role -> model spec
    notes: list[str] = field(default_factory=list)  # what the counts assume

    def add(self, role: str, calls: int, prompt_tokens: int = 0,
            completion_tokens: int = 0) -> None:
        """`calls` more calls of `role`, with their tokens in total (not per call)."""
        entry = self.roles.setdefault(role, RoleCalls())
        entry.calls += calls
        entry.prompt_tokens += prompt_tokens
        entry.completion_tokens += completion_tokens

    def usage(self) -> dict[str, dict[str, int]]:
        """The plan as a manifest's usage (role -> requests, prompt and completion tokens)."""
        return {role: {"requests": c.calls, "prompt_tokens": c.prompt_tokens,
                       "completion_tokens": c.completion_tokens}
                for role, c in sorted(self.roles.items())}

    def cost(self, prices: dict[str, tuple[float, float]]) -> float | None:
        """USD at `prices` (role -> USD per million tokens in, out); None without prices."""
        return estimated_cost(self.usage(), prices) if prices else None

    def to_json(self, prices: dict[str, tuple[float, float]] | None = None) -> dict:
        return {"command": self.command, "items": self.items, "unit": self.unit,
                "roles": self.usage(), "models": dict(sorted(self.specs.items())),
                "estimated_cost_usd": self.cost(prices or {}), "notes": self.notes}

    def lines(self, prices: dict[str, tuple[float, float]] | None = None) -> list[str]:
        """The plan as the CLI prints it."""
        out = [f"dry run of {self.command}: {self.items} {self.unit}; no model was called"]
        for role, c in sorted(self.roles.items()):
            spec = f" ({self.specs[role]})" if role in self.specs else ""
            out.append(f"  {role}{spec}: {c.calls:,} calls, ~{c.prompt_tokens:,} prompt tokens,"
                       f" ~{c.completion_tokens:,} completion tokens")
        if not self.roles:
            out.append("  no model calls")
        cost = self.cost(prices or {})
        if cost is not None:
            out.append(f"  estimated cost: ${cost:,.4f} at the prices given")
        out += [f"  note: {note}" for note in self.notes]
        return out
