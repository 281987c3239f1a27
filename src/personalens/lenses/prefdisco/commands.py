"""What `personalens prefdisco` offers: eval and build (runs)."""

from personalens.lenses.commands import DeclaredCommand, LensCommands

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
)
