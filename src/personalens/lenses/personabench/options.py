"""`personalens personabench eval`'s options, declared once (CLI, validation, identity)."""

from typing import ClassVar

from personalens.models import DEFAULT_MODEL, SPEC_HELP, ModelSettings
from personalens.models.role_set import Role, RoleModels
from personalens.population.noise_levels import NoiseLevels
from personalens.retrieval.retriever_names import RETRIEVER_HELP
from personalens.runs.options import (
    CommaList,
    DistributedOptions,
    UserPath,
    not_identity,
    option,
)


class EvalOptions(DistributedOptions):
    command = "personabench eval"
    roles: ClassVar = (Role("target", "model", DEFAULT_MODEL, f"Answering model: {SPEC_HELP}."),)

    data: UserPath = option(help="A community in the release layout, or a folder of several.")
    out: UserPath = not_identity(help="Run directory; rerunning the same command resumes it.")
    noise: NoiseLevels = option(["0.5"], "Noise level(s), comma-separated for a sweep, e.g. "
                                         "0.0,0.3,0.5,0.7.", min_length=1)
    retriever: CommaList = option(["minilm"], f"Retriever(s), comma-separated: {RETRIEVER_HELP}"
                                              ", or gt-context (ground-truth sessions).",
                                  min_length=1)
    k: int = option(5, "Chunks retrieved per question.", ge=1)
    no_answer: bool = option(False, "Evaluate retrieval only.")
    models: RoleModels = option(RoleModels(), cli=False)

    @property
    def target(self) -> ModelSettings | None:
        """The answering model; None for retrieval only."""
        return None if self.no_answer else self.models["target"]
