"""What `personalens pqb` offers: eval and build (runs), export-beir and compare (an alias
of `personalens compare`)."""

from personalens.lenses.commands import DeclaredCommand, LensCommands, TyperCommand

LENS = LensCommands(
    name="pqb",
    help="PersonalQuery-Benchmark: retrieval robustness to how each user phrases a need.",
    commands=[
        DeclaredCommand(
            "eval", "personalens.lenses.pqb.options:EvalOptions",
            "personalens.lenses.pqb.command:run_eval",
            "Flip rate (paper and all-pairs definitions), Hit@K and MRR for clean vs typo "
            "queries.\n\nWith --executor ray, a dense retriever encodes the corpus on Ray Data "
            "actors.",
            comparison="personalens.lenses.pqb.comparison:COMPARISON",
            dry_run="personalens.lenses.pqb.call_plan:plan_calls"),
        TyperCommand("export-beir", "personalens.lenses.pqb.release_format:export_beir_command"),
        DeclaredCommand(
            "build", "personalens.lenses.pqb.options:BuildOptions",
            "personalens.lenses.pqb.build:run_build",
            "Build a PQB dataset: syntactic profiles, candidate queries, pair selection, "
            "typos.\n\nWith --executor ray, the style stage's spaCy parsing runs as Ray tasks."),
        # An alias of `personalens compare` that takes pqb eval runs only (the command of
        # the layer above the lenses, named by its path so no lens imports it).
        TyperCommand("compare", "personalens.compare.command:pqb_compare_command"),
    ],
)
