"""A command's model role, declared: light to import, so a lens's declaration and the CLI's
--help load no model code (`models.role_set` holds the settings and loaded models)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Role:
    role: str  # the usage ledger's name for it: target, generator, judge, user, reranker
    flag: str | None  # the spec option's name ("model" -> --model); None: endpoint only
    default: str | None = None
    help: str = ""
    fallback: str | None = None  # a role without a spec of its own uses this role's settings
