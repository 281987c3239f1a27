"""The lenses; each asks `models`, `retrieval` and `runs` for what it needs.

`LENSES` is the registry: a lens is its package plus one line here, its name and its
declaration (`lenses.commands.LensCommands`, "module:object"). The CLI, the scorecard,
compare, judge-audit and Inspect read every lens from it; tests check that the import-linter
independence contract and the package data follow it.
"""

LENSES = {
    "personabench": "personalens.lenses.personabench.commands:LENS",
    "pqb": "personalens.lenses.pqb.commands:LENS",
    "prefdisco": "personalens.lenses.prefdisco.commands:LENS",
    "prisk": "personalens.lenses.prisk.commands:LENS",
}
