"""How long `personalens demo` takes from an empty cache, in total and per stage.

    python bench/demo_timing.py [--out DIR] [--busy N]

Runs `personalens demo --out DIR` as a user would, in a subprocess with PERSONALENS_CACHE_DIR
pointing at a new empty directory, so every model request and every embedding is computed.
Prints the wall-clock minutes of the whole command, of each stage (from the started_at and
finished_at its manifest records, to the second) and of what lies outside both stages (start-up:
imports, and loading the models happens inside the stages), with each stage's requests and tokens
from its manifest. Request and token counts do not depend on the machine's load; minutes do,
so the load average is printed at the start and the end, with the command's CPU time. The
demo's own closing lines follow.
With --busy N, N other processes spin on the CPU for the whole command (a user's build or
browser beside the demo), so the time shows what the local model's thread choice does under
load; the demo's own line about threads, if it printed one, is shown.
The runs stay in --out (default: a new temporary directory), so
`bench/population_quality.py DIR/population` can be run on the population afterwards.
"""

import argparse
import datetime as dt
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MINUTES = 3.0


def stage_minutes(run: Path) -> float:
    manifest = json.loads((run / "manifest.json").read_text())
    start, end = (dt.datetime.fromisoformat(manifest[k].replace("Z", "+00:00"))
                  for k in ("started_at", "finished_at"))
    return (end - start).total_seconds() / 60


def usage(run: Path) -> str:
    roles = json.loads((run / "manifest.json").read_text())["usage"]
    return "; ".join(f"{role}: {u['requests']} requests ({u['cached_requests']} cached), "
                     f"{u['prompt_tokens']:,} prompt and {u['completion_tokens']:,} completion "
                     "tokens" for role, u in roles.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="new directory for the demo's two runs")
    parser.add_argument("--busy", type=int, default=0,
                        help="processes that spin on the CPU beside the demo (default 0)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="pl-demo-timing-")) / "demo"
    if out.exists() and any(out.iterdir()):
        sys.exit(f"{out} is not empty; the timing needs a fresh --out")
    env = dict(os.environ, PERSONALENS_CACHE_DIR=tempfile.mkdtemp(prefix="pl-demo-cache-"))
    command = [str(Path(sys.executable).with_name("personalens")), "demo", "--out", str(out)]
    print(f"load average at start {os.getloadavg()[0]:.2f}; runs in {out}; "
          f"{args.busy} busy process(es) beside it", flush=True)
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(args.busy)]
    try:
        start = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = subprocess.run(command, env=env, capture_output=True,
                                text=True)
        total = (time.perf_counter() - start) / 60
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    for line in result.stderr.splitlines():
        if line.startswith("personalens: other processes keep"):
            print(line)
    cpu_minutes = (cpu.ru_utime + cpu.ru_stime - before.ru_utime - before.ru_stime) / 60
    if result.returncode != 0:
        sys.exit(f"`{' '.join(command)}` exited with {result.returncode}:\n{result.stdout}"
                 f"\n{result.stderr[-2000:]}")
    generate, evaluate = stage_minutes(out / "population"), stage_minutes(out / "eval")
    metrics = json.loads((out / "eval" / "metrics.json").read_text())
    generated = json.loads((out / "population" / "metrics.json").read_text())["communities"]
    sessions = sum(c["levels"][max(c["levels"])]["sessions"] for c in generated.values())
    questions = sum(c["questions"] for c in generated.values())
    print(f"generate  {generate:5.2f} min  {questions} questions, {sessions} sessions at the "
          f"highest noise; {usage(out / 'population')}")
    print(f"evaluate  {evaluate:5.2f} min  {metrics['n_planned']} items; "
          f"{usage(out / 'eval')}")
    print(f"other     {total - generate - evaluate:5.2f} min  start-up, and between the stages")
    print(f"total     {total:5.2f} min (target <= {TARGET_MINUTES:g} min); CPU time "
          f"{cpu_minutes:.2f} min (2 threads at most in use); load average at end "
          f"{os.getloadavg()[0]:.2f}")
    print("the demo's closing lines:")
    tail = result.stdout.splitlines()
    print("\n".join(tail[next((i for i, line in enumerate(tail)
                               if line.startswith("demo finished")), 0):]))


if __name__ == "__main__":
    main()
