"""PRISK statistics: how long does `personalens prisk stats` take on 100,000 scored rows?

1. The whole command: a synthetic balanced scores CSV of 100,000 rows (1-5 scores from record
   intercepts, profile and memory effects and noise, rounded and clipped; seeded), once as
   1 risk × 25,000 records × 4 conditions and once as 2 risks × 12,500 records × 4. Each
   repetition runs `python -m personalens prisk stats` in a fresh process into a fresh run
   directory and times the whole process (interpreter and import start-up, reading the CSV,
   the REML fits, bootstrap CIs, sign-flip tests, report). Target: median < 10 s.
2. The fit alone, in-process: `fit_attribution` on 4,000 records (16,000 rows) by the closed
   form and by statsmodels MixedLM (`solver="mixedlm"`, the path unbalanced tables take),
   4 rounds alternating which goes first (imports done before timing), with the largest
   relative difference between the two fits.
Prints numbers from one run, and the load average before and after.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from personalens.stats.mixed_effects import fit_attribution

TARGET_S = 10.0
REPETITIONS = 3
FIT_RECORDS = 4000
FIT_ROUNDS = 4


def scores_table(records: int, risks: tuple[str, ...] = ("score",), seed: int = 0
                 ) -> pd.DataFrame:
    """records × 4 conditions per risk: 3 + u_record (SD 0.7) + 0.4 P + 0.25 M + 0.15 PM +
    noise (SD 0.8), rounded to 1-5. Risk k's profile effect is 0.1 k smaller."""
    rng = np.random.default_rng(seed)
    frames = []
    for k, risk in enumerate(risks):
        intercepts = rng.normal(0.0, 0.7, records)
        p = np.tile([0, 1, 0, 1], records)
        m = np.tile([0, 0, 1, 1], records)
        latent = (3.0 + np.repeat(intercepts, 4) + (0.4 - 0.1 * k) * p + 0.25 * m
                  + 0.15 * p * m + rng.normal(0.0, 0.8, 4 * records))
        frames.append(pd.DataFrame({
            "record": np.repeat([f"rec{i:06d}" for i in range(records)], 4), "profile": p,
            "memory": m, "risk": risk, "score": np.clip(np.rint(latent), 1, 5).astype(int)}))
    return pd.concat(frames, ignore_index=True)


def time_command(scores: Path, work: Path, label: str) -> list[float]:
    times = []
    for rep in range(REPETITIONS):
        out = work / f"run-{label}-{rep}"
        start = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "personalens", "prisk", "stats",
                                 "--scores", str(scores), "--out", str(out)],
                                capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f"prisk stats failed:\n{result.stderr}")
    return times


def bench_command() -> None:
    layouts = {"1 risk × 25,000 records": scores_table(25_000),
               "2 risks × 12,500 records": scores_table(12_500, ("irp", "sycophancy"))}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for i, (label, table) in enumerate(layouts.items()):
            path = work / f"scores-{i}.csv"
            table.to_csv(path, index=False)
            times = time_command(path, work, str(i))
            median = statistics.median(times)
            print(f"prisk stats, {len(table):,} rows, {label}: median {median:.2f} s "
                  f"(runs {', '.join(f'{t:.2f}' for t in times)} s); target < {TARGET_S:.0f} s "
                  f"{'met' if median < TARGET_S else 'MISSED'}")


def bench_fit() -> None:
    import statsmodels.formula.api  # noqa: F401  (imports are not what is timed)

    table = scores_table(FIT_RECORDS, seed=1)
    fit_attribution(scores_table(10), solver="closed_form")  # scipy.special's import
    seconds: dict[str, list[float]] = {"closed_form": [], "mixedlm": []}
    fits = {}
    for round_ in range(FIT_ROUNDS):
        order = ["closed_form", "mixedlm"] if round_ % 2 == 0 else ["mixedlm", "closed_form"]
        for solver in order:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                fits[solver] = fit_attribution(table, solver=solver)
                seconds[solver].append(time.perf_counter() - start)
    closed, mixed = (statistics.median(seconds[s]) for s in ("closed_form", "mixedlm"))
    worst = max(abs(fits["closed_form"][e][k] - fits["mixedlm"][e][k])
                / abs(fits["mixedlm"][e][k])
                for e in ("profile", "memory", "interaction") for k in ("beta", "se"))
    worst_var = max(abs(fits["closed_form"]["variance"][k] - fits["mixedlm"]["variance"][k])
                    / fits["mixedlm"]["variance"][k] for k in ("record", "residual"))
    print(f"fit_attribution, {FIT_RECORDS:,} records ({len(table):,} rows), median of "
          f"{FIT_ROUNDS} alternated rounds: closed form {closed * 1000:.1f} ms, MixedLM "
          f"{mixed:.2f} s; MixedLM / closed form {mixed / closed:,.0f} ×")
    print(f"  rounds: closed form {', '.join(f'{t * 1000:.1f}' for t in seconds['closed_form'])}"
          f" ms; MixedLM {', '.join(f'{t:.2f}' for t in seconds['mixedlm'])} s")
    print(f"  largest relative difference: β and SE {worst:.1e}, variances {worst_var:.1e}")


def main() -> None:
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    bench_command()
    bench_fit()
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
