"""One community generated on a remote worker, returned to the driver as plain data.

The worker loads its own generator model, replays the community's recorded steps, writes the
community into a scratch folder and returns the new step records, the files and its usage.
The driver appends the records and writes the files, so the run directory and the data have
one writer, and a community killed half-way resumes from its recorded steps as in-process.
"""

import asyncio
import tempfile
from pathlib import Path

from personalens.models import ModelSettings
from personalens.population.community import GenerationConfig, generate_community
from personalens.runs import RecordedFailure, write_atomic
from personalens.runs.step_store import DetachedSteps
from personalens.runs.usage import UsageLedger


def generate_remotely(index: int, config: GenerationConfig, generator: ModelSettings,
                      done: dict[str, dict]) -> dict:
    """{stats, steps, files, usage, failure}: a Ray task body (plain data in and out)."""
    return asyncio.run(_generate(index, config, generator, done))


async def _generate(index: int, config: GenerationConfig, generator: ModelSettings,
                    done: dict[str, dict]) -> dict:
    ledger = UsageLedger()
    model = generator.load("generator", ledger)
    steps = DetachedSteps(done)
    stats, failure = None, None
    with tempfile.TemporaryDirectory(prefix="personalens-community-") as scratch:
        try:
            stats = await generate_community(index, config, model, steps, Path(scratch))
        except RecordedFailure as exc:
            failure = exc.as_data()
        finally:
            await model.aclose()
        files = {str(p.relative_to(scratch)): p.read_bytes()
                 for p in sorted(Path(scratch).rglob("*")) if p.is_file()}
    return {"stats": stats, "steps": steps.new, "files": files, "usage": ledger.as_dict(),
            "failure": failure}


def write_files(out: Path, files: dict[str, bytes]) -> None:
    for relative, content in files.items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, content)
