"""Do llama.cpp's thread polling or thread count cost the bundled model speed when shared?

    python bench/local_model_poll.py [--rounds 3] [--requests 4] [--tokens 96]

llama.cpp's worker threads spin (`cpuparams.poll`, 0-100, default 50) between jobs instead of
sleeping, and meet at a barrier after each step. With two threads on two cores that is free on
a quiet machine; beside another busy process, one thread waits for a core while the other
spins. For each setting (local_gguf.POLL, and the provider's threads) this runs the bundled
SmolLM2 in a fresh process: `--requests` chat completions one after another, greedy,
`--tokens` new tokens each, and prints completion tokens per wall second and the process's
CPU seconds. It does so alone, then beside one busy process (a Python loop spinning on one
core, as another job on the machine would). Rounds alternate the order of the settings; the
medians are printed with the ratio to the default (poll 50, 2 threads).
"""

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys

# (poll, threads): the default first
SETTINGS = ((50, 2), (0, 2), (50, 1))

ONE_RUN = """
import json, resource, sys, time
import personalens.models.providers.local_gguf as local_gguf
local_gguf.POLL = int(sys.argv[1])
threads, requests, tokens = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
provider = local_gguf.LocalGGUFProvider(local_gguf.resolve_gguf("smollm2-135m"), threads=threads)
server = provider._server()
done = 0
start = time.perf_counter()
for i in range(requests):
    reply = server.handle_chat_completions({
        "messages": [{"role": "user", "content": f"Write a short story about a lighthouse {i}."}],
        "max_tokens": tokens, "temperature": 0, "seed": i})
    done += reply["usage"]["completion_tokens"]
seconds = time.perf_counter() - start
cpu = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"tokens": done, "seconds": seconds, "cpu": cpu.ru_utime + cpu.ru_stime}))
"""


def spin(stop) -> None:
    while not stop.is_set():
        sum(range(10_000))


def one_run(setting: tuple[int, int], requests: int, tokens: int) -> dict:
    poll, threads = setting
    out = subprocess.run([sys.executable, "-c", ONE_RUN, str(poll), str(threads), str(requests),
                          str(tokens)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(args, busy: bool) -> dict[tuple[int, int], list[dict]]:
    results: dict[tuple[int, int], list[dict]] = {setting: [] for setting in SETTINGS}
    stop = multiprocessing.Event()
    hog = multiprocessing.Process(target=spin, args=(stop,)) if busy else None
    if hog:
        hog.start()
    try:
        for round_ in range(args.rounds):
            order = SETTINGS if round_ % 2 == 0 else SETTINGS[::-1]
            for setting in order:
                results[setting].append(one_run(setting, args.requests, args.tokens))
    finally:
        if hog:
            stop.set()
            hog.join()
    return results


def report(label: str, results: dict[tuple[int, int], list[dict]]) -> None:
    print(f"\n{label}")
    print(f"{'poll':>5} {'threads':>8} {'tokens/s (median)':>18} {'runs':>24} "
          f"{'CPU s (median)':>15} {'vs default':>11}")
    base = statistics.median(r["tokens"] / r["seconds"] for r in results[SETTINGS[0]])
    for (poll, threads), runs in results.items():
        rates = [r["tokens"] / r["seconds"] for r in runs]
        rate = statistics.median(rates)
        cpu = statistics.median(r["cpu"] for r in runs)
        print(f"{poll:>5} {threads:>8} {rate:>18.1f} {', '.join(f'{x:.1f}' for x in rates):>24} "
              f"{cpu:>15.1f} {rate / base:>10.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=96)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}; "
          f"{args.rounds} rounds of {args.requests} requests x {args.tokens} tokens per setting")
    report("alone", measure(args, busy=False))
    report("beside one busy process (a spinning Python loop)", measure(args, busy=True))
    print(f"\nload average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
