"""The command line: one typer app, one sub-command group per lens."""
