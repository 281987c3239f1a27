"""How long the demo's two stages take from an empty cache: generate, then evaluate.

    python bench/demo_timing.py [--out DIR]

Runs what `personalens demo` runs, as two CLI subprocesses with PERSONALENS_CACHE_DIR pointing
at a new empty directory: `personalens generate` (3 people, the demo's 8-attribute template,
2 queried attributes per person, lists of at most 2 entries, noise 0.0 and 0.5, bundled
SmolLM2) and `personalens personabench eval` (noise 0.5, BM25 and MiniLM, k 5, SmolLM2 answers).
Prints minutes per stage and in total, with each stage's requests and tokens from its
manifest. The runs stay in --out (default: a new temporary directory), so
`bench/population_quality.py DIR/population` can be run on the population afterwards.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODEL = "local/smollm2-135m"


def demo_schema() -> Path:
    package = Path(importlib.util.find_spec("personalens").submodule_search_locations[0])
    return package / "population" / "data" / "demo_schema.yaml"


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def usage(run: Path) -> str:
    roles = json.loads((run / "manifest.json").read_text())["usage"]
    return "; ".join(f"{role}: {u['requests']} requests ({u['cached_requests']} cached), "
                     f"{u['prompt_tokens']:,} prompt and {u['completion_tokens']:,} completion "
                     "tokens" for role, u in roles.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="new directory for the two runs")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="pl-demo-timing-")) / "demo"
    if out.exists() and any(out.iterdir()):
        sys.exit(f"{out} is not empty; the timing needs a fresh --out")
    env = dict(os.environ, PERSONALENS_CACHE_DIR=tempfile.mkdtemp(prefix="pl-demo-cache-"))
    exe = str(Path(sys.executable).with_name("personalens"))
    generate = [exe, "generate", "--people", "3", "--communities", "1", "--model", MODEL,
                "--noise", "0.0,0.5", "--attributes-per-person", "2", "--max-list-entries",
                "2", "--schema", str(demo_schema()), "--out", str(out / "population")]
    evaluate = [exe, "personabench", "eval", "--data", str(out / "population/synthetic_data"),
                "--noise", "0.5", "--retriever", "bm25,minilm", "--k", "5", "--model", MODEL,
                "--out", str(out / "eval")]
    print(f"load average at start {os.getloadavg()[0]:.2f}; runs in {out}", flush=True)
    t_gen = timed(generate, env)
    print(f"generate  {t_gen / 60:5.2f} min  {usage(out / 'population')}", flush=True)
    t_eval = timed(evaluate, env)
    items = json.loads((out / "eval/metrics.json").read_text())["n_planned"]
    print(f"evaluate  {t_eval / 60:5.2f} min  {items} items; {usage(out / 'eval')}")
    print(f"total     {(t_gen + t_eval) / 60:5.2f} min (target < 10 min); "
          f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
