"""The lenses; each asks `models`, `retrieval` and `runs` for what it needs.

`LENSES` is the registry: a lens is its package plus one line here. The CLI builds each
lens's commands from its `commands.LENS`; tests check that the import-linter independence
contract and the package data follow this list.
"""

LENSES = ("personabench", "pqb", "prefdisco", "prisk")
