"""`--executor local|ray` and `--ray-address`, shared by the commands with parallel stages."""

from typing import Annotated

import typer

from personalens.runs.executor import EXECUTORS

ExecutorOption = Annotated[str, typer.Option(
    "--executor", help=f"Where the parallel stages run: {' or '.join(EXECUTORS)} (Ray: pip "
                       "install 'personalens\\[ray]'). The records are the same either way.")]
RayAddressOption = Annotated[str | None, typer.Option(
    "--ray-address", help="A running Ray cluster (ray://HOST:10001 or auto); default with "
                          "--executor ray: start Ray on this machine.")]

