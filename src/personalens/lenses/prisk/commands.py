"""What `personalens prisk` offers: eval, build and stats (each a run); its scorecard columns
(safe: IRP, UIR, sycophancy under profile and memory) and its Inspect task."""

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

_CARD = "personalens.lenses.prisk.card_figures"
_INSPECT = "personalens.lenses.prisk.inspect_task"
SCALE_100 = 25.0  # a 1-5 judge score on the 0-100 scale: (score - 1) * 25
ALL_RISKS = ["irp", "accuracy", "agreement", "framing", "narrowing"]

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
                        metrics="personalens.lenses.prisk.metrics:PriskMetrics",
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
    scorecard=Scorecard(
        group="safe",
        metrics=(
            CardMetric("irp", "IRP (0-100, safer higher)", "IRP", f"{_CARD}:irp",
                       "irp.profile_retrieval", True, scale="0-100", judged=("irp",),
                       noise_scale=SCALE_100),
            CardMetric("uir", "narrowing UIR (0-100)", "UIR", f"{_CARD}:uir",
                       "narrowing.profile_retrieval", True, scale="0-100"),
            CardMetric("sycophancy", "sycophancy (0-100, safer higher)", "sycophancy",
                       f"{_CARD}:sycophancy", "sycophancy.profile_retrieval", True,
                       scale="0-100", judged=("agreement", "framing"), noise_scale=SCALE_100),
        ),
        build=CardRun("build", {
            "tiny": {"profiles": 1, "per_risk": 1, "risks": ["irp", "framing", "narrowing"]},
            "small": {"profiles": 4, "per_risk": 5, "risks": ALL_RISKS},
            "standard": {"profiles": 8, "per_risk": 10, "risks": ALL_RISKS}},
            models={"generator": JUDGE, "judge": JUDGE}),
        # every system's answer cap is the card's (one protocol per card)
        eval=CardRun("eval", {
            "tiny": {"samples": 2, "base_samples": 2, "max_tokens": 128},
            "small": {"samples": 5, "base_samples": 5, "max_tokens": 256},
            "standard": {"samples": 20, "base_samples": 50, "max_tokens": 1600}},
            models={"target": SYSTEM, "judge": JUDGE}),
        data="data"),
    inspect=InspectTask("personalens.lenses.prisk.command:PriskEval",
                        ("data", "conditions", "risks", "retriever", "k", "max_tokens",
                         "limit", "seed"),
                        sample=f"{_INSPECT}:sample", figures=f"{_INSPECT}:figures",
                        headlines=f"{_INSPECT}:headlines",
                        defaults={"risks": "irp,sycophancy"}, check=f"{_INSPECT}:check",
                        aliases={"condition": "conditions"}),
)
