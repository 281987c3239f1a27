"""What `personalens personabench` offers: eval (a run) and validate; its scorecard columns
(find: recall and answer F1) and its Inspect task."""

from personalens.lenses.commands import (
    SYSTEM,
    CardMetric,
    CardRun,
    DeclaredCommand,
    Demo,
    InspectTask,
    LensCommands,
    Scorecard,
    TyperCommand,
)
from personalens.models.role import Role
from personalens.models.spec import SPEC_HELP

_PACKAGE = "personalens.lenses.personabench"
_CARD = f"{_PACKAGE}.card_figures"
_INSPECT = f"{_PACKAGE}.inspect_task"

LENS = LensCommands(
    name="personabench",
    help="PersonaBench: can an assistant find a person's facts in their noisy private "
         "documents (conversations, AI chats, purchases) and answer questions about them?",
    commands=[
        DeclaredCommand(
            "eval", f"{_PACKAGE}.options:EvalOptions", f"{_PACKAGE}.command:run_eval",
            "Ask personal questions of a community's documents: how many of the right "
            "documents each retriever finds (recall, nDCG), and how well the model answers "
            "from them (precision, recall, F1).\n\nWith --executor ray, each person's index "
            "and search is a Ray task (answers stay here).",
            comparison=f"{_PACKAGE}.comparison:COMPARISON",
            dry_run=f"{_PACKAGE}.call_plan:plan_calls",
            metrics=f"{_PACKAGE}.metrics:PersonabenchMetrics",
            example="personalens personabench eval --data runs/demo/population/synthetic_data "
                    "--retriever bm25,minilm --noise 0.3 --out runs/pb-eval"),
        TyperCommand("validate", f"{_PACKAGE}.validation:validate_command",
                     roles=(Role("judge", "judge", None, "Judge model for semantic reveal/leak "
                                                         f"checks: {SPEC_HELP}. Default: "
                                                         "lexical checks only."),),
                     example="personalens personabench validate "
                             "runs/demo/population/synthetic_data/community_0"),
    ],
    data=("example_data/**/*",),
    scorecard=Scorecard(
        group="find",
        metrics=(
            CardMetric("recall", "retrieval recall", "recall", f"{_CARD}:recall",
                       "recall@{noise[0]}", True, scale="0-1"),
            CardMetric("f1", "answer F1", "F1", f"{_CARD}:f1", "f1@{noise[0]}", True,
                       scale="0-1"),
        ),
        # at the noise level the card's population is generated with (besides 0.0)
        eval=CardRun("eval", {"tiny": {"noise": ["0.3"], "k": 2},
                              "small": {"noise": ["0.5"], "k": 5},
                              "standard": {"noise": ["0.5"], "k": 5}},
                     models={"target": SYSTEM}),
        data="synthetic_data"),
    inspect=InspectTask(f"{_PACKAGE}.command:PersonabenchEval",
                        ("data", "noise", "retriever", "k", "no_answer"),
                        sample=f"{_INSPECT}:sample", figures=f"{_INSPECT}:figures",
                        headlines=f"{_INSPECT}:headlines", answer=f"{_INSPECT}:answer"),
    demo=Demo("eval", f"{_PACKAGE}.demo:eval_options", f"{_PACKAGE}.demo:summary"),
)
