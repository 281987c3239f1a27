"""The systems a scorecard compares: `NAME=MODEL[,retriever=R][,base_url=URL]`."""

import re
from dataclasses import dataclass

from personalens.errors import InputError
from personalens.models.settings import ModelSettings

DEFAULT_RETRIEVER = "minilm"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # it names a folder: DIR/<lens>/<name>
KEYS = ("retriever", "base_url")


@dataclass(frozen=True)
class System:
    name: str
    model: str  # plays each lens's system role (the assistant: `lenses.commands.SYSTEM`)
    retriever: str = DEFAULT_RETRIEVER  # given to each eval that takes a --retriever
    base_url: str | None = None  # an OpenAI-compatible server for the model

    @property
    def settings(self) -> ModelSettings:
        return ModelSettings(spec=self.model, base_url=self.base_url)


def parse_system(text: str) -> System:
    """"small=local/smollm2-135m,retriever=bm25" -> System; one line naming what is wrong."""
    name, equals, rest = text.partition("=")
    shape = f"--system {text!r}: expected NAME=MODEL[,retriever=R][,base_url=URL]"
    if not equals or not rest:
        raise InputError(shape)
    if not NAME.fullmatch(name):
        raise InputError(f"--system {text!r}: the name {name!r} must be letters, digits, '.', "
                         "'_' or '-' (it names the system's run folders)")
    model, *options = rest.split(",")
    values: dict[str, str] = {}
    for option in options:
        key, equals, value = option.partition("=")
        if key not in KEYS or not equals or not value:
            raise InputError(f"{shape} (got {option!r}; keys: {', '.join(KEYS)})")
        values[key] = value
    if not model:
        raise InputError(shape)
    system = System(name, model, **values)
    system.settings.validate_spec()
    return system


def check_retriever(name: str) -> None:
    """InputError (one line) now for a retriever that cannot work, before any run is made; a
    reranking model is checked by its spec, not loaded."""
    from personalens.models.spec import validate_spec
    from personalens.retrieval.registry import get_retriever, reranks_with_a_model

    if reranks_with_a_model(name):
        if spec := name.partition(":")[2]:
            validate_spec(spec)
        return
    get_retriever(name)


def parse_systems(texts: list[str]) -> list[System]:
    """Every --system, checked: at least one, no two of one name, each retriever known."""
    if not texts:
        raise InputError("give at least one --system NAME=MODEL")
    systems = [parse_system(text) for text in texts]
    seen: set[str] = set()
    for system in systems:
        if system.name in seen:
            raise InputError(f"two systems are named {system.name!r}; give each --system its "
                             "own name")
        seen.add(system.name)
    for retriever in dict.fromkeys(s.retriever for s in systems):
        check_retriever(retriever)
    return systems
