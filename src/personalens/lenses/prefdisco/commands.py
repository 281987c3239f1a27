"""What `personalens prefdisco` offers: eval and build (runs); its scorecard columns (ask:
NormAlign, PrefAlign in discovery, the accuracy drop) and its Inspect task."""

from personalens.lenses.commands import (
    JUDGE,
    SYSTEM,
    CardMetric,
    CardRun,
    DeclaredCommand,
    InspectTask,
    LensCommands,
    Scorecard,
)

_CARD = "personalens.lenses.prefdisco.card_figures"
_INSPECT = "personalens.lenses.prefdisco.inspect_task"

LENS = LensCommands(
    name="prefdisco",
    help="PrefDisco: does a model ask a new user the right questions to discover their "
         "preferences, then reason the way they need?",
    commands=[
        DeclaredCommand("eval", "personalens.lenses.prefdisco.options:EvalOptions",
                        "personalens.lenses.prefdisco.command:run_eval",
                        "Put a model in front of simulated users: answer with no preferences "
                        "(baseline), after asking questions (discovery), and with the "
                        "preferences given (oracle); a judge scores each answer against the "
                        "user's preferences (PrefAlign, NormAlign) and for correctness.",
                        comparison="personalens.lenses.prefdisco.comparison:COMPARISON",
                        judged="personalens.lenses.prefdisco.judged_run:PrefdiscoJudgedRun",
                        dry_run="personalens.lenses.prefdisco.call_plan:plan_calls",
                        metrics="personalens.lenses.prefdisco.metrics:PrefdiscoMetrics",
                        example="personalens prefdisco eval --data runs/pd-data/data "
                                "--model openai/gpt-4o-mini --user-model openai/gpt-4.1 "
                                "--judge openai/gpt-4.1 --out runs/pd-eval"),
        DeclaredCommand("build", "personalens.lenses.prefdisco.options:BuildOptions",
                        "personalens.lenses.prefdisco.build:run_build",
                        "Make a PrefDisco dataset: pair problems with personas, give each a few "
                        "preferences and a rubric to judge them, in the release format.",
                        example="personalens prefdisco build --population "
                                "runs/demo/population --limit 1 --out runs/pd-data"),
    ],
    data=("data/*",),
    scorecard=Scorecard(
        group="ask",
        metrics=(
            CardMetric("normalign", "NormAlign", "NormAlign", f"{_CARD}:normalign",
                       "normalign", True, scale="ratio", judged=("prefalign",)),
            CardMetric("prefalign_discovery", "PrefAlign discovery (1-5)", "PrefAlign",
                       f"{_CARD}:prefalign_discovery", "prefalign.discovery", True,
                       scale="1-5", judged=("prefalign",), noise_scale=1.0),
            CardMetric("accuracy_drop", "accuracy drop (baseline - discovery)",
                       "accuracy drop", f"{_CARD}:accuracy_drop", "accuracy_drop", False,
                       scale="-1 to 1", judged=("correctness",), noise_scale=1.0),
        ),
        # tiny: two of the five tasks' shipped problems, one persona each
        build=CardRun("build", {
            "tiny": {"tasks": ["math", "social"], "limit": 1, "per_problem": 1,
                     "preferences": 2},
            "small": {"tasks": [], "limit": 2, "per_problem": 2, "preferences": 3},
            "standard": {"tasks": [], "limit": 5, "per_problem": 2, "preferences": 3}},
            models={"generator": JUDGE}),
        eval=CardRun("eval", {"tiny": {"turns": 2}, "small": {"turns": 5},
                              "standard": {"turns": 5}},
                     models={"target": SYSTEM, "user": JUDGE, "judge": JUDGE}),
        data="data"),
    inspect=InspectTask("personalens.lenses.prefdisco.command:PrefdiscoEval",
                        ("data", "conditions", "turns", "user", "scoring", "protocol",
                         "correctness", "max_tokens"),
                        sample=f"{_INSPECT}:sample", figures=f"{_INSPECT}:figures",
                        headlines=f"{_INSPECT}:headlines", answer=f"{_INSPECT}:answer",
                        aliases={"condition": "conditions"}),
)
