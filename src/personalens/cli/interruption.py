"""Ctrl-C during a run: say how to resume instead of click's bare 'Aborted!'."""

import typer


def interruptible(run):
    """Run `run()`; on Ctrl-C say how to resume and exit 130 (click would print 'Aborted!')."""
    try:
        return run()
    except KeyboardInterrupt:
        # Every finished item is already on disk; the same command picks up from there.
        typer.echo("personalens: interrupted; rerun the same command to resume", err=True)
        raise typer.Exit(130) from None
