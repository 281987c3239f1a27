"""CPU time of `personalens --version`, `--help` and every command's `--help`, as processes.

    python bench/cli_startup.py [--repeats 7] [--inspect]

Each command runs as its own process (`python -m personalens ...`), in turn with the others
(round-robin, so start-up caches and the machine's load do not favour one command), `--repeats`
times; the figure is the median CPU time (user + system) of the whole process, read from
`os.wait4`. Targets (issue 34): --version and --help at most 0.3 s, any command's --help at
most 0.6 s. With --inspect, `inspect --help` (inspect_ai's CLI) is timed beside them.
"""

import argparse
import os
import statistics
import subprocess
import sys

ROOT = [["--version"], ["--help"]]
TARGET = {"--version": 0.3, "--help": 0.3}


def commands() -> list[list[str]]:
    """The root's options, then every command's and every lens command's --help."""
    from personalens.cli.subcommands import build_subcommand, subcommand_summaries

    found = list(ROOT)
    for name in subcommand_summaries():
        found.append([name, "--help"])
        group = build_subcommand(name)
        if hasattr(group, "list_commands"):  # a group (typer vendors click: no isinstance)
            context = group.context_class(group)
            found += [[name, sub, "--help"] for sub in group.list_commands(context)]
    return found


def cpu_seconds(argv: list[str]) -> float:
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--inspect", action="store_true", help="time `inspect --help` too")
    args = parser.parse_args()
    runs = {" ".join(c): [sys.executable, "-m", "personalens", *c] for c in commands()}
    if args.inspect:
        runs["(inspect_ai) inspect --help"] = [sys.executable, "-m", "inspect_ai", "--help"]
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, argv in runs.items():
            times[name].append(cpu_seconds(argv))
    print(f"median CPU seconds of {args.repeats} runs (user + system, whole process)")
    worst_help = 0.0
    for name, values in times.items():
        median = statistics.median(values)
        limit = TARGET.get(name, 0.6 if name.startswith("(") is False else None)
        mark = "" if limit is None or median <= limit else f"  over {limit} s"
        if name.endswith("--help") and name not in TARGET and not name.startswith("("):
            worst_help = max(worst_help, median)
        print(f"  {median:6.3f}  {name}{mark}")
    print(f"slowest command --help: {worst_help:.3f} s (target 0.6 s); --version "
          f"{statistics.median(times['--version']):.3f} s and --help "
          f"{statistics.median(times['--help']):.3f} s (target 0.3 s)")


if __name__ == "__main__":
    main()
