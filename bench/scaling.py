"""How do the pipelines scale? Wall time and peak RSS at 4-5 sizes per curve, and the log-log
slope of time against size (1.0 = linear; target <= 1.15).

Every measurement is one `personalens` CLI process (fresh interpreter, its own imports and
model loads), timed from spawn to exit; its peak RSS is the child's own `ru_maxrss` from
`os.wait4`. Each gets a fresh PERSONALENS_CACHE_DIR, except the warm-MiniLM curve, whose cache
is filled by one untimed evaluation of the same data first (with hash-drawn vectors instead of
MiniLM's, see FILL_CACHE: the timed run reads the same rows either way). Curves:

- generate: `personalens generate` with the scripted schema double of the tests
  (tests/schema_double.py: every JSON-schema request gets a valid object at once), N people
  in communities of at most COMMUNITY_SIZE (a community is built whole in memory, because its
  people's documents refer to each other; a large population is many communities), default
  template and noise levels; the pipeline's own cost.
- personabench-bm25: `personabench eval --retriever bm25` on those populations at noise
  0.5 (a personal session and a noise session per item), answers by the `scripted` model
  (the answering path without a real model).
- personabench-minilm-warm: the same with `--retriever minilm` and a warm embedding cache.
- pqb-bm25: `pqb eval --retriever bm25` over a synthetic corpus of N product records
  (meta_<Category>.jsonl format) and a fixed 500 query pairs.
- pqb-style: `pqb build --candidates templates --max-items 1` over N synthetic users with
  about 40 review sentences each, so the build is dominated by the style profiles (spaCy
  rules, the encoder, the users' Gaussians).
- report: rerunning a finished run (every item is skipped; the harness reloads records,
  summarises and rewrites report.html) for the largest run of each curve above, with
  report.html's size and the time headless Chromium takes to load it and show the browser's
  first page.

The slope is the least-squares fit of log(time) on log(size). The size column is the curve's
work unit (people, corpus items, users). Options: --quick (small sizes, for the trend),
--only CURVE[,CURVE], --work DIR (kept; default a temporary folder, deleted).
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # devtools_pipe: the report tests' Chromium driver

from tests.devtools_pipe import DevToolsPipe  # noqa: E402

TARGET_SLOPE = 1.15
SIZES = {
    "generate": [10, 30, 100, 300, 1000],
    "personabench-bm25": [10, 30, 100, 300, 1000],
    "personabench-minilm-warm": [10, 30, 100, 300, 1000],
    "pqb-bm25": [1_000, 3_162, 10_000, 31_623, 100_000],
    "pqb-style": [10, 32, 100, 316, 1000],
}
QUICK = {
    "generate": [10, 30, 100],
    "personabench-bm25": [10, 30, 100],
    "personabench-minilm-warm": [10, 30, 100],
    "pqb-bm25": [1_000, 3_162, 10_000],
    "pqb-style": [10, 32, 100],
}
UNITS = {"generate": "people", "personabench-bm25": "people",
         "personabench-minilm-warm": "people", "pqb-bm25": "corpus items",
         "pqb-style": "users"}
CURVES = [*SIZES, "report"]
COMMUNITY_SIZE = 100  # people per generated community at most; sizes above are multiples
PQB_PAIRS = 500

# `personalens generate` with load_model replaced by the tests' schema-aware scripted double.
# The double and its provider keep every prompt and call for the tests to inspect; here they
# keep none (as the CLI's own scripted model does), so the peak RSS is the pipeline's own.
GENERATE_DOUBLE = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import personalens.models.settings as settings
from tests import schema_double

class _Unkept(list):
    def append(self, prompt):
        pass

def load_model(spec, **kwargs):
    model = schema_double.schema_model()
    model.provider.default.prompts = _Unkept()
    model.provider.keep_calls = False
    model.ledger = kwargs["ledger"]
    return model

settings.load_model = load_model
from personalens.cli.app import main
sys.argv = ["personalens", *sys.argv[1:]]
main()
"""


# The warm-MiniLM curve's untimed cache fill: the same CLI run, but every text the cache lacks
# gets a unit vector drawn from its hash instead of a MiniLM encoding. Encoding 1,000 people's
# sessions for real takes over half an hour on 2 cores; the timed run that follows reads the
# same cache rows either way, so it measures the warm path exactly (its recall is meaningless).
FILL_CACHE = """
import hashlib, sys
import numpy as np
from personalens.retrieval.dense import DenseRetriever

def hashed_vectors(self, texts):
    out = []
    for text in texts:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
        out.append(v / np.linalg.norm(v))
    return np.vstack(out)

DenseRetriever._encode_fresh = hashed_vectors
from personalens.cli.app import main
sys.argv = ["personalens", *sys.argv[1:]]
main()
"""


def measure(argv: list[str], cache: Path, log: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one process; stdout and stderr go to `log`. Its CPU
    seconds (user + system), which depend less on what else the machine runs, are kept in
    CPU_SECONDS[str(log)]."""
    env = {**os.environ, "PERSONALENS_CACHE_DIR": str(cache)}
    with open(log, "w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(["nice", "-n", "10", *map(str, argv)], stdout=out, stderr=out,
                                env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, argv))} exited {proc.returncode}; see {log}\n"
                         + log.read_text()[-2000:])
    CPU_SECONDS[str(log)] = usage.ru_utime + usage.ru_stime
    return seconds, usage.ru_maxrss / 1024


CPU_SECONDS: dict[str, float] = {}


def cli(*args) -> list[str]:
    return [sys.executable, "-m", "personalens", *map(str, args)]


# --- inputs -------------------------------------------------------------------------------

def generate_argv(people: int, out: Path) -> list:
    """`personalens generate` (scripted double) of `people` people in communities of at most
    COMMUNITY_SIZE."""
    communities = -(-people // COMMUNITY_SIZE)
    if people % communities:
        raise ValueError(f"{people} people do not split evenly into communities of at most "
                         f"{COMMUNITY_SIZE}")
    return [sys.executable, "-c", GENERATE_DOUBLE, "generate", "--model", "scripted",
            "--people", people // communities, "--communities", communities, "--out", out]


def population(work: Path, people: int) -> Path:
    """The generate curve's output for `people` (generated here if that curve did not run)."""
    out = work / f"generate-{people}"
    if not (out / "synthetic_data").exists():
        measure(generate_argv(people, out), work / f"cache-gen-{people}",
                work / f"generate-{people}.log")
    return out


WORDS = ["guitar", "strap", "pedal", "cable", "stroller", "bottle", "controller", "headset",
         "case", "tuner", "blanket", "amplifier", "ukulele", "piano", "drum", "cymbal", "capo",
         "microphone", "monitor", "mouse", "wheel", "seat", "chair", "warmer", "mat", "toy"]
ADJECTIVES = ["compact", "portable", "professional", "beginner", "premium", "lightweight",
              "adjustable", "wireless", "vintage", "heavy", "foldable", "quiet", "black",
              "white", "red", "blue", "natural", "pink", "grey", "green", "cheap", "sturdy"]
BRANDS = [f"Brand{i}" for i in range(300)]


def pqb_inputs(work: Path, items: int) -> tuple[Path, Path]:
    """A meta file of `items` products (titles drawn from a 50-word vocabulary plus a
    per-item model number) and PQB_PAIRS query pairs about the first items."""
    folder = work / f"pqb-{items}"
    folder.mkdir(exist_ok=True)
    rng = np.random.default_rng(items)
    vocabulary = np.array(WORDS + ADJECTIVES)
    meta, titles = [], []
    for i in range(items):
        words = " ".join(rng.choice(vocabulary, size=6))
        title = f"{BRANDS[i % len(BRANDS)]} {words} model {i}"
        titles.append(title)
        meta.append(json.dumps({
            "parent_asin": f"B{i:09d}", "title": title, "store": BRANDS[i % len(BRANDS)],
            "categories": ["Musical Instruments"], "features": [words],
            "description": [" ".join(rng.choice(vocabulary, size=20))], "details": {}}))
    (folder / "meta.jsonl").write_text("\n".join(meta) + "\n")
    queries = {}
    for i in rng.choice(items, size=min(PQB_PAIRS, items), replace=False):
        asin, words = f"B{int(i):09d}", titles[int(i)].split()[1:7]
        a = " ".join(rng.permutation(words)[:4])
        b = " ".join(rng.permutation(words)[:4])
        queries[asin] = [
            {"asin": asin, "uid": "UA", "syntax_query": f"i need a {a}",
             "typo_query": f"i ned a {a}"},
            {"asin": asin, "uid": "UB", "syntax_query": f"looking for {b}", "typo_query": None}]
    (folder / "queries.json").write_text(json.dumps(queries))
    return folder / "meta.jsonl", folder / "queries.json"


STYLES = [
    "{A} {n}. {N} {a}, {a}.",
    "Although the {n} that came with it was {a}, I think that the {n}, which my brother "
    "tested, is {a} because it was made well.",
    "Why is the {n} so {a}? Would anyone really want a {a} {n}?",
    "I played it every night and I loved the {n}. My teacher checked the {n} and she liked it.",
    "The {n} broke after two weeks, sadly. We returned it because the old {n} was {a}.",
    "If you need a {a} {n} for travel, this one is worth it. Would buy again!",
]


def style_reviews(work: Path, users: int) -> Path:
    """`users` reviewers of the meta fixture's items, each writing 8 reviews of about 5
    sentences in one of six syntactic styles (mixed with a second one), as Amazon JSONL."""
    path = work / f"reviews-{users}.jsonl"
    meta = ROOT / "tests/fixtures/pqb/meta_Musical_Instruments.jsonl"
    items = [json.loads(line)["parent_asin"] for line in meta.read_text().splitlines()]
    rng = np.random.default_rng(users)
    lines = []
    for u in range(users):
        own, other = STYLES[u % len(STYLES)], STYLES[(u * 7 + 3) % len(STYLES)]
        for n, asin in enumerate(rng.choice(items, size=8, replace=False)):
            text = " ".join(
                (own if rng.random() < 0.8 else other).format(
                    a=rng.choice(ADJECTIVES), A=rng.choice(ADJECTIVES).capitalize(),
                    n=rng.choice(WORDS), N=rng.choice(WORDS).capitalize())
                for _ in range(3))
            lines.append(json.dumps({
                "rating": 5.0, "title": f"Review {n}", "text": text, "images": [],
                "asin": str(asin), "parent_asin": str(asin), "user_id": f"U{u:05d}",
                "timestamp": 1_600_000_000_000 + n * 1000, "helpful_vote": 0,
                "verified_purchase": True}))
    path.write_text("\n".join(lines) + "\n")
    return path


# --- curves -------------------------------------------------------------------------------

def run_curve(name: str, size: int, work: Path) -> tuple[float, float, Path]:
    """(wall seconds, peak RSS MiB, run directory) of one measurement; its CPU seconds are
    CPU_SECONDS[str(work / f"{name}-{size}.log")]."""
    log = work / f"{name}-{size}.log"
    cache = work / f"cache-{name}-{size}"
    if name == "generate":
        out = work / f"generate-{size}"
        shutil.rmtree(out, ignore_errors=True)
        seconds, rss = measure(generate_argv(size, out), cache, log)
        return seconds, rss, out
    if name in ("personabench-bm25", "personabench-minilm-warm"):
        data = population(work, size) / "synthetic_data"
        retriever = "bm25" if name.endswith("bm25") else "minilm"
        args = ["personabench", "eval", "--data", data, "--noise", "0.5",
                "--retriever", retriever, "--model", "scripted"]
        if retriever == "minilm":  # fill the embedding cache, untimed (see FILL_CACHE)
            measure([sys.executable, "-c", FILL_CACHE, *args, "--out",
                     work / f"{name}-{size}-cold"], cache, work / f"{name}-{size}-cold.log")
        out = work / f"{name}-{size}"
        shutil.rmtree(out, ignore_errors=True)
        seconds, rss = measure(cli(*args, "--out", out), cache, log)
        return seconds, rss, out
    if name == "pqb-bm25":
        meta, queries = pqb_inputs(work, size)
        out = work / f"{name}-{size}"
        shutil.rmtree(out, ignore_errors=True)
        seconds, rss = measure(cli("pqb", "eval", "--queries", queries, "--meta", meta,
                                   "--retriever", "bm25", "--out", out), cache, log)
        return seconds, rss, out
    if name == "pqb-style":
        reviews = style_reviews(work, size)
        out = work / f"{name}-{size}"
        shutil.rmtree(out, ignore_errors=True)
        seconds, rss = measure(cli(
            "pqb", "build", "--reviews", reviews,
            "--meta", ROOT / "tests/fixtures/pqb/meta_Musical_Instruments.jsonl",
            "--out", out, "--candidates", "templates", "--max-items", "1",
            "--region", "4000", "--min-sentences", "20"), cache, log)
        return seconds, rss, out
    raise ValueError(name)


def slope(sizes: list[int], seconds: list[float]) -> float:
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def print_curve(name: str, rows: list[tuple[int, float, float, float]]) -> float:
    """Rows are (size, wall s, CPU s, peak RSS MiB); prints them and the slopes."""
    print(f"\n{name} ({UNITS[name]})")
    print(f"{'size':>9} {'wall s':>9} {'CPU s':>9} {'peak RSS MiB':>13} {'wall s per 1k':>14}")
    for size, seconds, cpu, rss in rows:
        print(f"{size:>9,} {seconds:>9.2f} {cpu:>9.2f} {rss:>13.0f} "
              f"{1000 * seconds / size:>14.3f}")
    sizes = [r[0] for r in rows]
    fitted = slope(sizes, [r[1] for r in rows])
    cpu = slope(sizes, [r[2] for r in rows])
    rss_slope = slope(sizes, [r[3] for r in rows])
    top = slope(sizes[-2:], [r[1] for r in rows[-2:]])
    top_cpu = slope(sizes[-2:], [r[2] for r in rows[-2:]])
    verdict = "pass" if fitted <= TARGET_SLOPE else "FAIL"
    print(f"log-log slope of wall time {fitted:.3f} ({verdict}, target <= {TARGET_SLOPE}); "
          f"of CPU time {cpu:.3f}; between the two largest sizes: wall {top:.3f}, CPU "
          f"{top_cpu:.3f}; of peak RSS {rss_slope:.3f}")
    return fitted


# --- the report ---------------------------------------------------------------------------

class Chromium(DevToolsPipe):
    """Headless Chromium (tests/devtools_pipe.py) that times opening a report."""

    def open_seconds(self, page: Path) -> tuple[float, int, int, float]:
        """Seconds from opening a new tab on `page` until the document has loaded and the
        item browser shows its first entries; with the entries rendered, the DOM size and the
        seconds the first click on "next" takes (it parses the browser's JSON)."""
        start = time.perf_counter()
        target = self.call("Target.createTarget", url=page.as_uri())["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        ready = ("location.protocol === 'file:' && document.readyState === 'complete' && "
                 "(!document.querySelector('.qb') || "
                 "document.querySelectorAll('.qb-entry').length > 0)")
        while True:
            result = self.call("Runtime.evaluate", session, expression=ready,
                               returnByValue=True)
            if result["result"].get("value"):
                break
            time.sleep(0.01)
        seconds = time.perf_counter() - start
        counts = self.call("Runtime.evaluate", session, returnByValue=True, expression=(
            "[document.querySelectorAll('.qb-entry').length, "
            "document.getElementsByTagName('*').length]"))["result"]["value"]
        turn = time.perf_counter()
        self.call("Runtime.evaluate", session, returnByValue=True, expression=(
            "(b => b && b.click())(document.querySelectorAll('.qb-pager button')[1])"))
        turn = time.perf_counter() - turn
        self.call("Target.closeTarget", targetId=target)
        return seconds, counts[0], counts[1], turn


def report_curve(work: Path, runs: dict[str, Path]) -> None:
    """Rebuild report.html of the largest run of each curve (a rerun that skips every item)
    and open it in Chromium."""
    print("\nreport (rerun of the largest finished run: load records, summarise, report.html)")
    print(f"{'run':<34} {'wall s':>7} {'RSS MiB':>8} {'report MiB':>11} {'Chromium s':>11} "
          f"{'entries shown':>14} {'DOM elements':>13} {'next page s':>12}")
    browser = Chromium(work / "chromium-profile") if shutil.which("chromium") else None
    try:
        if browser is not None:  # one warm-up open, so the first row pays no browser start
            warm = work / "blank.html"
            warm.write_text("<!doctype html><title>x</title>")
            browser.open_seconds(warm)
        for name, out in runs.items():
            args = shlex.split(json.loads((out / "manifest.json").read_text())["command"])[1:]
            if name == "generate":
                argv = [sys.executable, "-c", GENERATE_DOUBLE, *args]
            else:
                argv = cli(*args)
            seconds, rss = measure(argv, work / f"cache-report-{name}", work / f"report-{name}.log")
            page = out / "report.html"
            size = page.stat().st_size / 2**20
            if browser is not None:
                opened, shown, elements, turn = browser.open_seconds(page)
                chrome = f"{opened:>11.2f} {shown:>14,} {elements:>13,} {turn:>12.2f}"
            else:
                chrome = f"{'(no chromium)':>40}"
            print(f"{name + ' ' + out.name.rsplit('-', 1)[-1]:<34} {seconds:>7.2f} {rss:>8.0f} "
                  f"{size:>11.2f} {chrome}")
    finally:
        if browser is not None:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: the trend only")
    parser.add_argument("--only", default=",".join(CURVES),
                        help=f"comma-separated curves: {', '.join(CURVES)}")
    parser.add_argument("--work", type=Path, help="work folder (kept); default a temporary one")
    args = parser.parse_args()
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = set(only) - set(CURVES)
    if unknown:
        parser.error(f"unknown curve(s): {', '.join(sorted(unknown))}")
    work = (args.work or Path(tempfile.mkdtemp(prefix="personalens-scaling-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    sizes = QUICK if args.quick else SIZES
    print(f"work folder {work}; load average at start {os.getloadavg()[0]:.2f}")
    slopes, largest = {}, {}
    try:
        for name in (c for c in SIZES if c in only):
            rows = []
            for size in sizes[name]:
                seconds, rss, out = run_curve(name, size, work)
                cpu = CPU_SECONDS[str(work / f"{name}-{size}.log")]
                rows.append((size, seconds, cpu, rss))
                largest[name] = out
                print(f"  {name} {size:,}: {seconds:.2f} s wall, {cpu:.2f} s CPU, {rss:.0f} MiB"
                      f" (load average {os.getloadavg()[0]:.2f})", flush=True)
            slopes[name] = print_curve(name, rows)
        if "report" in only:
            if not largest:  # --only report: the largest runs already in --work
                for name in SIZES:
                    done = [p for p in work.glob(f"{name}-*") if (p / "report.html").exists()
                            and p.name.rsplit("-", 1)[-1].isdigit()]
                    if done:
                        largest[name] = max(done, key=lambda p: int(p.name.rsplit("-", 1)[-1]))
            report_curve(work, largest)
        print(f"\nload average at end {os.getloadavg()[0]:.2f}")
        if slopes:
            print("slopes: " + ", ".join(f"{k} {v:.3f}" for k, v in slopes.items()))
            failed = [k for k, v in slopes.items() if v > TARGET_SLOPE]
            print("all slopes <= 1.15" if not failed else f"slope > 1.15: {', '.join(failed)}")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
