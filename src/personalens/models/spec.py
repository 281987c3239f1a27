"""The model providers, one registry: a spec's prefix -> how it is checked, built and described.

A spec names a provider and a model: `openai/<name>`, `local/<name-or-path.gguf>`, `scripted`
or `scripted:<rules.json>`. Each `ProviderKind` holds its syntax (the help text every
`--model`-like flag shows is built from them), whether its models run in this process, and
"module:function" strings for its checks and its provider, imported only when a model is
checked or built — so the CLI's help and the options models import no provider SDK.
Adding a provider is its module (a `Provider`, `validate(name)`, `build(name, settings)`) plus
one line in `PROVIDERS`.
"""

from dataclasses import dataclass

from personalens.errors import InputError
from personalens.import_target import resolve

DEFAULT_MODEL = "local/smollm2-135m"


@dataclass(frozen=True)
class ProviderKind:
    prefix: str  # "openai": specs "openai/<name>"
    syntax: str  # how its specs are written, for help texts
    build: str  # "module:function" (name, ModelSettings) -> a `completion.Provider`
    validate: str | None = None  # "module:function" (name) raising InputError; None: any name
    in_process: bool = False  # its models run inside this process (they share its CPU)
    separator: str = "/"
    name_required: bool = True  # "scripted" alone is a spec; "openai" alone is not

    def name_of(self, spec: str) -> str | None:
        """The model name in `spec` when it is one of this provider's specs, else None."""
        if spec == self.prefix and not self.name_required:
            return ""
        head = self.prefix + self.separator
        return spec.removeprefix(head) if spec.startswith(head) else None


_PROVIDERS = "personalens.models.providers"
PROVIDERS = (
    ProviderKind("openai", "openai/<name> (with --base-url for any OpenAI-compatible server)",
                 f"{_PROVIDERS}.openai_compatible:build"),
    ProviderKind("local", "local/smollm2-135m, local/<path.gguf>",
                 f"{_PROVIDERS}.local_gguf:build", f"{_PROVIDERS}.local_gguf:resolve_gguf",
                 in_process=True),
    ProviderKind("scripted", "scripted (a free test double: 'I don't know.' to text, a valid "
                             "made-up object to a structured request) or scripted:<rules.json>",
                 f"{_PROVIDERS}.scripted:build", f"{_PROVIDERS}.scripted:validate",
                 in_process=True, separator=":", name_required=False),
)
SPEC_HELP = ", ".join(kind.syntax for kind in PROVIDERS)


def provider_kind(spec: str) -> tuple[ProviderKind, str]:
    """The provider of `spec` and the model name in it; InputError for an unknown spec."""
    for kind in PROVIDERS:
        name = kind.name_of(spec)
        if name or (name is not None and spec == kind.prefix):
            return kind, name
    raise InputError(f"unknown model spec {spec!r}; expected {SPEC_HELP}")


def validate_spec(spec: str) -> None:
    """Fail fast (before any run directory exists) on a spec that cannot load."""
    kind, name = provider_kind(spec)
    if kind.validate:
        resolve(kind.validate)(name)

