"""What `personalens personabench` offers: eval (a run) and validate."""

from personalens.lenses.commands import DeclaredCommand, LensCommands, TyperCommand
from personalens.models.spec import SPEC_HELP
from personalens.models.role import Role

LENS = LensCommands(
    name="personabench",
    help="PersonaBench: can an assistant find a person's facts in their noisy private "
         "documents (conversations, AI chats, purchases) and answer questions about them?",
    commands=[
        DeclaredCommand(
            "eval", "personalens.lenses.personabench.options:EvalOptions",
            "personalens.lenses.personabench.command:run_eval",
            "Ask personal questions of a community's documents: how many of the right "
            "documents each retriever finds (recall, nDCG), and how well the model answers "
            "from them (precision, recall, F1).\n\nWith --executor ray, each person's index "
            "and search is a Ray task (answers stay here).",
            comparison="personalens.lenses.personabench.comparison:COMPARISON",
            dry_run="personalens.lenses.personabench.call_plan:plan_calls",
            example="personalens personabench eval --data runs/demo/population/synthetic_data "
                    "--retriever bm25,minilm --noise 0.3 --out runs/pb-eval"),
        TyperCommand("validate", "personalens.lenses.personabench.validation:validate_command",
                     roles=(Role("judge", "judge", None, "Judge model for semantic reveal/leak "
                                                         f"checks: {SPEC_HELP}. Default: "
                                                         "lexical checks only."),),
                     example="personalens personabench validate "
                             "runs/demo/population/synthetic_data/community_0"),
    ],
    data=("example_data/**/*",),
)
