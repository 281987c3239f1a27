"""What `personalens pqb` offers: eval and build (runs), export-beir and compare (an alias
of `personalens compare`); its scorecard columns (robust: flip rate, typo drop) and its
Inspect task."""

from personalens.lenses.commands import (
    ENDPOINT,
    JUDGE,
    SYSTEM,
    CardMetric,
    CardRun,
    DeclaredCommand,
    InspectTask,
    LensCommands,
    Scorecard,
    TyperCommand,
)

_CARD = "personalens.lenses.pqb.card_figures"
_INSPECT = "personalens.lenses.pqb.inspect_task"

LENS = LensCommands(
    name="pqb",
    help="PersonalQuery-Benchmark: does retrieval still find the right item when each user "
         "phrases the same need in their own words, with their own typos?",
    commands=[
        DeclaredCommand(
            "eval", "personalens.lenses.pqb.options:EvalOptions",
            "personalens.lenses.pqb.command:run_eval",
            "Search a product corpus with every user's queries: how often two users with the "
            "same need get different results (flip rate), and how much typos cost (Hit@K, MRR, "
            "clean vs typo).\n\nWith --executor ray, a dense retriever encodes the corpus on "
            "Ray Data actors.",
            comparison="personalens.lenses.pqb.comparison:COMPARISON",
            dry_run="personalens.lenses.pqb.call_plan:plan_calls",
            metrics="personalens.lenses.pqb.metrics:PqbMetrics",
            example="personalens pqb eval --data runs/pqb-data --retriever minilm "
                    "--out runs/pqb-minilm"),
        TyperCommand("export-beir", "personalens.lenses.pqb.release_format:export_beir_command",
                     example="personalens pqb export-beir --data runs/pqb-data "
                             "--out runs/pqb-beir"),
        DeclaredCommand(
            "build", "personalens.lenses.pqb.options:BuildOptions",
            "personalens.lenses.pqb.build:run_build",
            "Make a PQB dataset: learn each user's writing style, write candidate queries for "
            "their items, keep those that sound like one user and not the other, and add the "
            "user's own typos.\n\nWith --executor ray, the style stage's spaCy parsing runs "
            "as Ray tasks.",
            example="personalens pqb build --population runs/demo/population --candidates "
                    "templates --out runs/pqb-data"),
        # An alias of `personalens compare` that takes pqb eval runs only (the command of
        # the layer above the lenses, named by its path so no lens imports it).
        TyperCommand("compare", "personalens.compare.command:compare_command_for",
                     arguments=("pqb eval",),
                     example="personalens pqb compare runs/pqb-bm25 runs/pqb-minilm "
                             "--out runs/pqb-compare"),
    ],
    scorecard=Scorecard(
        group="robust",
        metrics=(
            CardMetric("flip_rate", "flip rate @1 (paper)", "flip@1", f"{_CARD}:flip_rate",
                       "flip_rate.paper.1", False, scale="0-1"),
            CardMetric("typo_drop", "Hit@1 drop (clean - typo)", "typo drop",
                       f"{_CARD}:typo_drop", "hit.drop.1", False, scale="-1 to 1"),
        ),
        # tiny: template candidates (no model) and any two users, for a few purchases each
        build=CardRun("build", {
            "tiny": {"candidates": "templates", "max_items": None, "min_sentences": 3,
                     "pair_users": "all"},
            "small": {"candidates": "model", "max_items": 40, "min_sentences": 10,
                      "pair_users": "all"},
            "standard": {"candidates": "model", "max_items": None, "min_sentences": 30,
                         "pair_users": "owners"}}, models={"generator": JUDGE}),
        # the system's endpoint serves an LLM reranker its retriever names
        eval=CardRun("eval", models={ENDPOINT: SYSTEM})),
    inspect=InspectTask("personalens.lenses.pqb.command:PqbEval",
                        ("data", "queries", "meta", "retriever", "seed"),
                        sample=f"{_INSPECT}:sample", figures=f"{_INSPECT}:figures",
                        headlines=f"{_INSPECT}:headlines"),
)
