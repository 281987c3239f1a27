"""What `personalens prefdisco` offers: eval and build (runs)."""

from personalens.lenses.commands import DeclaredCommand, LensCommands

LENS = LensCommands(
    name="prefdisco",
    help="PrefDisco: does a model ask the right questions to discover a new user's "
         "preferences, then reason for them?",
    commands=[
        DeclaredCommand("eval", "personalens.lenses.prefdisco.options:EvalOptions",
                        "personalens.lenses.prefdisco.command:run_eval",
                        "PrefAlign, accuracy and NormAlign under baseline, discovery and oracle "
                        "conditions.",
                        comparison="personalens.lenses.prefdisco.comparison:COMPARISON",
                        dry_run="personalens.lenses.prefdisco.call_plan:plan_calls"),
        DeclaredCommand("build", "personalens.lenses.prefdisco.options:BuildOptions",
                        "personalens.lenses.prefdisco.build:run_build",
                        "Build a prefq-bench dataset: personas, sparse preferences, rubrics, in "
                        "the release format."),
    ],
    data=("data/*",),
)
