"""How long `personalens scorecard --size tiny` takes for one system with the bundled model,
from an empty cache, builds included; in total and per run (target: 10 minutes on 2 cores).

    python bench/scorecard_tiny.py [--out DIR] [--threads N]

Runs `personalens scorecard --system small=local/smollm2-135m --size tiny --out DIR` in a
subprocess with PERSONALENS_CACHE_DIR pointing at a new empty directory, so every model request
and every embedding is computed. Prints the wall-clock minutes of the whole command and of each
run (from the started_at and finished_at of its manifest), each run's requests per role, and the
load average before and after (minutes depend on the machine's load; requests do not).
--threads sets PERSONALENS_LOCAL_THREADS (default: personalens's own choice).
"""

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MINUTES = 10.0


def minutes(run: Path) -> float | None:
    manifest = json.loads((run / "manifest.json").read_text())
    if not manifest.get("finished_at"):
        return None
    start, end = (dt.datetime.fromisoformat(manifest[k].replace("Z", "+00:00"))
                  for k in ("started_at", "finished_at"))
    return (end - start).total_seconds() / 60


def requests(run: Path) -> str:
    usage = json.loads((run / "manifest.json").read_text()).get("usage", {})
    return ", ".join(f"{role} {u['requests']}" for role, u in usage.items()) or "no model calls"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="new directory for the scorecard")
    parser.add_argument("--threads", type=int, help="PERSONALENS_LOCAL_THREADS")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="pl-scorecard-tiny-")) / "card"
    if out.exists() and any(out.iterdir()):
        sys.exit(f"{out} is not empty; the timing needs a fresh --out")
    env = dict(os.environ, PERSONALENS_CACHE_DIR=tempfile.mkdtemp(prefix="pl-scorecard-cache-"))
    if args.threads:
        env["PERSONALENS_LOCAL_THREADS"] = str(args.threads)
    command = [str(Path(sys.executable).with_name("personalens")), "scorecard", "--system",
               "small=local/smollm2-135m", "--size", "tiny", "--out", str(out)]
    print(f"load average at start {os.getloadavg()[0]:.2f}; runs in {out}", flush=True)
    start = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    total = (time.perf_counter() - start) / 60
    if result.returncode not in (0, 3):
        sys.exit(f"`{' '.join(command)}` exited with {result.returncode}:\n{result.stderr[-3000:]}")
    runs = sorted(p.parent for p in out.rglob("manifest.json"))
    for run in runs:
        taken = minutes(run)
        shown = "unfinished" if taken is None else f"{taken:.2f} min"
        print(f"  {run.relative_to(out)}: {shown}; requests: {requests(run)}")
    print(f"load average at end {os.getloadavg()[0]:.2f}; exit status {result.returncode}")
    print(f"scorecard --size tiny, one system, bundled model, empty cache: {total:.2f} min "
          f"(target {TARGET_MINUTES:.0f}); {'within' if total <= TARGET_MINUTES else 'OVER'} "
          "the target")


if __name__ == "__main__":
    main()
