"""What `personalens prisk` offers: eval, build and stats (each a run)."""

from personalens.lenses.commands import DeclaredCommand, LensCommands

LENS = LensCommands(
    name="prisk",
    help="PRISK: the hidden costs of personalisation, and the statistics that attribute them to "
         "the profile and to memory.",
    commands=[
        DeclaredCommand("eval", "personalens.lenses.prisk.options:EvalOptions",
                        "personalens.lenses.prisk.command:run_eval",
                        "IRP and accuracy, narrowing, sycophancy per condition, and their "
                        "attribution (LMM).",
                        comparison="personalens.lenses.prisk.comparison:COMPARISON",
                        dry_run="personalens.lenses.prisk.call_plan:plan_calls"),
        DeclaredCommand("build", "personalens.lenses.prisk.options:BuildOptions",
                        "personalens.lenses.prisk.build:run_build",
                        "Build PRISK records: profiles, attribute conversations, checked decoys "
                        "and queries."),
        DeclaredCommand("stats", "personalens.lenses.prisk.options:StatsOptions",
                        "personalens.lenses.prisk.attribution:run_stats",
                        "Mixed-effects attribution (REML), partial η², cell-mean CIs and "
                        "sign-flip tests."),
    ],
    data=("data/*",),
)
