"""What `personalens prisk` offers: eval, build and stats (each a run)."""

from personalens.lenses.commands import DeclaredCommand, LensCommands

LENS = LensCommands(
    name="prisk",
    help="PRISK: what personalisation costs: irrelevant personal details in answers, answers "
         "narrowed to the profile, and sycophancy; and the statistics that attribute them to "
         "the profile and to memory.",
    commands=[
        DeclaredCommand("eval", "personalens.lenses.prisk.options:EvalOptions",
                        "personalens.lenses.prisk.command:run_eval",
                        "Ask a model each query without personal context, with the profile, "
                        "with retrieved memories and with both: irrelevant personalisation "
                        "(IRP), accuracy, narrowing and sycophancy per condition, and their "
                        "attribution to profile and memory (mixed model).",
                        comparison="personalens.lenses.prisk.comparison:COMPARISON",
                        judged="personalens.lenses.prisk.judged_run:PriskJudgedRun",
                        dry_run="personalens.lenses.prisk.call_plan:plan_calls",
                        example="personalens prisk eval --data runs/prisk-data/data "
                                "--out runs/prisk-eval"),
        DeclaredCommand("build", "personalens.lenses.prisk.options:BuildOptions",
                        "personalens.lenses.prisk.build:run_build",
                        "Make PRISK records: user profiles, conversations that hold their "
                        "attributes (the memory), decoys checked not to answer the query, and "
                        "the queries of each risk.",
                        example="personalens prisk build --population runs/demo/population "
                                "--profiles 1 --per-risk 1 --out runs/prisk-data"),
        DeclaredCommand("stats", "personalens.lenses.prisk.options:StatsOptions",
                        "personalens.lenses.prisk.attribution:run_stats",
                        "Attribute scores you bring (a CSV) to profile and memory: "
                        "mixed-effects model (REML), partial η², cell-mean CIs and sign-flip "
                        "tests.",
                        example="personalens prisk stats --scores scores.csv "
                                "--out runs/prisk-stats"),
    ],
    data=("data/*",),
)
