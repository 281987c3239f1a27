"""What `personalens personabench` offers: eval (a run) and validate."""

from personalens.lenses.commands import DeclaredCommand, LensCommands, TyperCommand
from personalens.models import SPEC_HELP
from personalens.models.role_set import Role

LENS = LensCommands(
    name="personabench",
    help="PersonaBench: RAG over noisy private documents answers personal questions.",
    commands=[
        DeclaredCommand(
            "eval", "personalens.lenses.personabench.options:EvalOptions",
            "personalens.lenses.personabench.command:run_eval",
            "Evaluate retrieval (recall, nDCG) and answers (precision, recall, F1) on "
            "PersonaBench.\n\nWith --executor ray, each person's index and search is a Ray task "
            "(answers stay here).",
            comparison="personalens.lenses.personabench.comparison:COMPARISON",
            dry_run="personalens.lenses.personabench.call_plan:plan_calls"),
        TyperCommand("validate", "personalens.lenses.personabench.validation:validate_command",
                     roles=(Role("judge", "judge", None, "Judge model for semantic reveal/leak "
                                                         f"checks: {SPEC_HELP}. Default: "
                                                         "lexical checks only."),)),
    ],
    data=("example_data/**/*",),
)
