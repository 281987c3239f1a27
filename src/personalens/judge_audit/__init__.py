"""The judge audit (`personalens judge-audit`): how far the LLM judges that scored a run can be
trusted. Known-answer probes built from the run's own items, stability, wording and order
checks, agreement between judges and with people; a run directory like any other.

Light to import: the CLI loads `command` for `--help`; the engine loads when a command runs.
"""
