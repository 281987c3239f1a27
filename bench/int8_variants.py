"""Which int8 quantisation of MiniLM ranks like fp32, at what speed? The table that chose the
shipped `minilm-int8`.

    python bench/int8_variants.py [--population DIR] [--rounds 3] [--speed-chunks 256]
                                  [--variants NAME,...|all] [--quick]

For each variant: its encoding speed against fp32 torch MiniLM, and the largest |Δ| of
PersonaBench retrieval recall@5 and nDCG@5 against fp32 over noise 0.0 / 0.3 / 0.5 / 0.7 on two
data sets, the released community_0 (116 questions per level) and a generated population
(`--population DIR`: every community under DIR/synthetic_data; if there is none, 100 people
are generated there first with the bundled model, see POPULATION). Every
variant quantises the same fp32 ONNX export (eager attention) and runs one text at a time, as
the shipped encoder does. Variants (the default set, except static-percentile; `--variants all`
adds it and the ones tried before this bench measured retrieval):

- per-tensor: dynamic quantisation, one int8 scale per weight matrix (ONNX Runtime's default);
- per-channel: dynamic, one scale per output channel (what `minilm-int8` shipped before);
- per-channel+q32: the same for documents, queries encoded by fp32 torch MiniLM (queries are
  few and short; documents are the cost);
- static-minmax / static-percentile: static QDQ quantisation (int8 weights per channel, uint8
  activations) with activation ranges from ONNX Runtime's calibration (min/max, or the
  99.999th percentile) on 128 chunks drawn from the data set being encoded, so each data set
  gets its own calibration;
- sensitive-N: per-channel with the N weight MatMuls whose quantisation moves the vectors most
  left fp32. Each MatMul's effect is measured alone by the export's own function (only it
  quantised, mean 1 - cosine to the fp32 graph) over 64 chunks of the released data; the
  ranking is printed. The shipped export ranks them the same way on its own calibration
  sentences (retrieval/data/int8_calibration.txt);
- sensitive-N+q32: the same with fp32 queries (N = 1, 2, 4);
- shipped: `DenseRetriever("minilm-int8")` as the package runs it (its export, its query
  encoder), so the table shows which row it is.

Speed: the first --speed-chunks chunks of the released noise-0.7 level plus that level's
questions in proportion (116 per 958 chunks), encoded by each variant (documents and queries by
the variant's encoders) and by fp32 torch (batch 32); medians of --rounds, the order alternated
each round. Retrieval: each person's sessions indexed, their questions searched, k = 5, scored
by the lens's own `score_retrieval`, averaged over the scored questions of a level as
metrics.json's `overall` is. --quick: 2 noise levels, 64 speed chunks, 1 round, no population
(a smoke run, not a result).
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from int8_encoding import DATA  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
NOISES = ["0.0", "0.3", "0.5", "0.7"]
# The generated data set: 4 communities of 25 people, 1 own attribute each plus the social
# questions (about 213 questions per community), bundled model, a seed no test or other bench
# uses. About 1,060 model calls per community: some 4 hours for all four on 2 cores.
POPULATION = ["--people", "25", "--communities", "4", "--attributes-per-person", "1",
              "--max-list-entries", "1", "--seed", "26"]
K = 5
CALIBRATION_CHUNKS = 128
SENSITIVITY_CHUNKS = 64
TARGET_DELTA, TARGET_SPEED = 0.01, 1.8

Encode = Callable[[list[str]], np.ndarray]


@dataclass
class DataSet:
    name: str
    communities: list  # release_reader.Community
    noises: list[str]

    def texts(self) -> tuple[list[str], list[str]]:
        """Every distinct session text and question of the data set."""
        docs, queries = {}, {}
        for community in self.communities:
            for noise in self.noises:
                for person in community.people(noise):
                    for s in community.levels[noise].sessions[person]:
                        docs[s.text] = None
                    for q in community.questions[person]:
                        queries[q.question] = None
        return list(docs), list(queries)

    def sample(self, n: int, seed: int = 0) -> list[str]:
        docs, _ = self.texts()
        return random.Random(seed).sample(docs, min(n, len(docs)))


@dataclass
class Encoders:
    """How a variant encodes documents and queries (the same function for most)."""

    docs: Encode
    queries: Encode


class Vectors:
    """A retriever for DenseIndex over vectors encoded once: the same search the lens runs."""

    def __init__(self, encoders: Encoders, docs: list[str], queries: list[str]):
        self.docs = dict(zip(docs, encoders.docs(docs), strict=True))
        self.queries = dict(zip(queries, encoders.queries(queries), strict=True))

    def encode(self, texts: list[str], *, is_query: bool = False) -> np.ndarray:
        table = self.queries if is_query else self.docs
        return np.vstack([table[t] for t in texts])


def load_population(folder: Path) -> DataSet:
    """The generated data set: every community under `folder`/synthetic_data, made first
    (resumably, with POPULATION's options) if there is none."""
    from personalens.population.release_reader import load_communities

    data = folder / "synthetic_data"
    if not data.exists():
        exe = str(Path(sys.executable).with_name("personalens"))
        print(f"generating the 100-person population into {folder} (bundled model; resumable)")
        subprocess.run([exe, "generate", *POPULATION, "--out", str(folder)], check=True)
    communities = load_communities(data, NOISES)
    people = sum(len(c.questions) for c in communities)
    return DataSet(f"generated ({people} people)", communities, NOISES)


def released(noises: list[str]) -> DataSet:
    from personalens.population.release_reader import load_community

    return DataSet("released", [load_community(DATA, noises)], noises)


def retrieval(data: DataSet, retriever: Vectors) -> dict[str, tuple[float, float, int]]:
    """{noise: (mean recall, mean nDCG, questions)} as the lens scores retrieval."""
    from personalens.lenses.personabench.evaluation import plan
    from personalens.lenses.personabench.scoring import score_retrieval
    from personalens.retrieval import Document
    from personalens.retrieval.dense import DenseIndex

    out = {}
    for noise in data.noises:
        groups: dict[tuple, list] = {}
        for item in plan(data.communities, [noise], ["minilm"]):
            groups.setdefault((item.community.name, item.person), []).append(item)
        scores = []
        for items in groups.values():
            level = items[0].community.levels[noise]
            sessions = level.sessions[items[0].person]
            index = DenseIndex(retriever, [Document(s.segment_id, s.text) for s in sessions])
            found = index.search([i.question.question for i in items], K).ids
            scores += [score_retrieval(ids, level.ground_truth[i.question.q_id])
                       for i, ids in zip(items, found, strict=True)]
        out[noise] = (float(np.mean([s.recall for s in scores])),
                      float(np.mean([s.ndcg for s in scores])), len(scores))
    return out


class Workbench:
    """The fp32 export, its weight MatMuls, and the folders the variants quantise into."""

    def __init__(self, work: Path):
        from sentence_transformers import SentenceTransformer

        from personalens.retrieval import int8_encoder
        from personalens.retrieval.model_source import resolve_model_source

        self.work = work
        source, identity = resolve_model_source("minilm")
        self.template = int8_encoder.ensure_export(source, identity)  # tokenizer, export.json
        self.fp32_model = SentenceTransformer(source, device="cpu")
        exporting = SentenceTransformer(source, device="cpu",
                                        model_kwargs={"attn_implementation": "eager"})
        self.fp32 = work / "fp32.onnx"
        self.inputs = int8_encoder.export_transformer(exporting, self.fp32)
        self.tokenizer = exporting[0].tokenizer
        self.matmuls = int8_encoder.weight_matmuls(self.fp32)

    def fp32_encode(self, texts: list[str]) -> np.ndarray:
        return self.fp32_model.encode(texts, batch_size=32, show_progress_bar=False)

    def folder(self, name: str, quantise: Callable[[Path], None]) -> Path:
        """A folder laid out as an export the int8 encoder loads, its graph made by `quantise`."""
        folder = self.work / name
        if not (folder / "model_int8.onnx").exists():
            shutil.copytree(self.template, folder, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("model_int8.onnx"))
            quantise(folder / "model_int8.onnx")
        return folder

    def dynamic(self, name: str, **options) -> Path:
        from personalens.retrieval import int8_encoder

        return self.folder(name, lambda out: int8_encoder.quantise(self.fp32, out, **options))

    def static(self, name: str, calibration: list[str], method: str) -> Path:
        from onnxruntime.quantization import (
            CalibrationDataReader,
            CalibrationMethod,
            QuantFormat,
            QuantType,
            quantize_static,
        )

        tokenizer, inputs = self.tokenizer, self.inputs
        length = 256
        if method == "percentile":
            # ONNX Runtime's histogram collector stacks every run's outputs, so its inputs must
            # be of one length: texts of at least the sample's lower-quartile length, cut to it.
            lengths = sorted(len(ids) for ids in tokenizer(calibration, truncation=True,
                                                            max_length=256)["input_ids"])
            length = lengths[len(lengths) // 4]
            calibration = [t for t in calibration if len(tokenizer(t)["input_ids"]) >= length]

        class Chunks(CalibrationDataReader):
            def __init__(self):
                self.pending = iter(calibration)

            def get_next(self):
                text = next(self.pending, None)
                if text is None:
                    return None
                batch = tokenizer([text], truncation=True, max_length=length,
                                  return_tensors="np")
                return {n: batch[n].astype(np.int64) for n in inputs}

        extra = {"MatMulConstBOnly": True}
        if method == "percentile":
            extra["CalibPercentile"] = 99.999
        methods = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile}
        return self.folder(name, lambda out: quantize_static(
            str(self.fp32), str(out), Chunks(), quant_format=QuantFormat.QDQ,
            op_types_to_quantize=["MatMul"], per_channel=True, weight_type=QuantType.QInt8,
            activation_type=QuantType.QUInt8, calibrate_method=methods[method],
            extra_options=extra))

    def sensitivity(self, texts: list[str]) -> list[tuple[str, float]]:
        """Each weight MatMul's effect alone, by the export's own measurement on `texts`."""
        import json

        from personalens.retrieval import int8_encoder

        manifest = json.loads((self.template / "export.json").read_text())
        return int8_encoder.sensitivity(self.fp32, self.template, manifest, texts,
                                        self.work / "probe.onnx")


@dataclass
class Variant:
    name: str
    encoders: Callable[[DataSet], Encoders]  # built per data set (static ones calibrate on it)


def variants(bench: Workbench, names: list[str], ranking: Callable[[], list[str]]) -> list[Variant]:
    from personalens.retrieval import int8_encoder
    from personalens.retrieval.dense import DenseRetriever

    def int8(folder: Path, fp32_queries: bool = False) -> Encoders:
        encode = int8_encoder.Int8Encoder(folder).encode
        return Encoders(encode, bench.fp32_encode if fp32_queries else encode)

    def shipped(_: DataSet) -> Encoders:
        retriever = DenseRetriever("minilm-int8")
        retriever.cache = _NoCache()
        return Encoders(retriever.encode,
                        lambda texts: retriever.encode(texts, is_query=True))

    def sensitive(n: int, fp32_queries: bool) -> Callable[[DataSet], Encoders]:
        return lambda _: int8(bench.dynamic(f"sensitive-{n}", nodes_to_exclude=ranking()[:n]),
                              fp32_queries)

    def static(method: str) -> Callable[[DataSet], Encoders]:
        return lambda data: int8(bench.static(f"static-{method}-{data.name}",
                                              data.sample(CALIBRATION_CHUNKS), method))

    table = {
        "per-tensor": lambda _: int8(bench.dynamic("per-tensor", per_channel=False)),
        "per-channel": lambda _: int8(bench.dynamic("per-channel")),
        "per-channel+q32": lambda _: int8(bench.dynamic("per-channel"), fp32_queries=True),
        "static-minmax": static("minmax"),
        "static-percentile": static("percentile"),
        "sensitive-2": sensitive(2, False),
        "sensitive-1+q32": sensitive(1, True),
        "sensitive-2+q32": sensitive(2, True),
        "sensitive-4+q32": sensitive(4, True),
        "shipped": shipped,
        **older_variants(bench),
    }
    return [Variant(name, table[name]) for name in names]


# What ships is sensitive-1+q32: the export's calibration sentences rank the same MatMul first
# (the shipped row shows it).
# static-percentile is left out of the default set for time (2 min of histograms per data set).
DEFAULT = ["per-tensor", "per-channel", "per-channel+q32", "static-minmax", "sensitive-2",
           "sensitive-1+q32", "sensitive-4+q32", "shipped"]  # sensitive-2+q32 on request


def older_variants(bench: Workbench) -> dict[str, Callable[[DataSet], Encoders]]:
    """The variants the first version of this bench compared by cosine only (RESULTS.md)."""
    import onnx
    from onnxruntime.quantization import QuantType

    from personalens.retrieval import int8_encoder

    def int8(name: str, graph: Callable[[], Path], **options) -> Callable[[DataSet], Encoders]:
        def build(_: DataSet) -> Encoders:
            folder = bench.folder(name, lambda out: int8_encoder.quantise(graph(), out,
                                                                         **options))
            encode = int8_encoder.Int8Encoder(folder).encode
            return Encoders(encode, encode)
        return build

    # Graphs rewritten by the optimizer lose shape information the quantiser wants.
    untyped = {"extra_options": {"MatMulConstBOnly": True,
                                 "DefaultTensorType": onnx.TensorProto.FLOAT}}
    ffn_out = [n for n in bench.matmuls if "/output/dense/" in n and "attention" not in n]
    return {
        "reduce-range": int8("reduce-range", lambda: bench.fp32, reduce_range=True),
        "uint8-weights": int8("uint8-weights", lambda: bench.fp32,
                              weight_type=QuantType.QUInt8),
        "fused": int8("fused", lambda: fused(bench, False), **untyped),
        "fused-attention": int8("fused-attention", lambda: fused(bench, True), **untyped,
                                op_types_to_quantize=["MatMul", "Attention"]),
        "ffn-out-fp32": int8("ffn-out-fp32", lambda: bench.fp32, nodes_to_exclude=ffn_out),
    }


def fused(bench: Workbench, attention: bool) -> Path:
    """ONNX Runtime's BERT optimizer on the fp32 export (LayerNorm, GELU, optionally
    attention fused)."""
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    out = bench.work / f"fused-{attention}.onnx"
    if not out.exists():
        options = FusionOptions("bert")
        options.enable_attention = attention
        optimizer.optimize_model(str(bench.fp32), model_type="bert", num_heads=12,
                                 hidden_size=384, optimization_options=options,
                                 opt_level=0).save_model_to_file(str(out))
    return out


class _NoCache:
    """Encodes every time, so the shipped row is timed and measured like the others."""

    def lookup_or_encode(self, identity, texts, encode):
        return list(encode(texts)), len(texts)


def speeds(sides: dict[str, Encoders], docs: list[str], queries: list[str],
           rounds: int) -> dict[str, float]:
    """Median seconds per side to encode `docs` and `queries`, order alternated by round."""
    for side in sides.values():  # first-call costs
        side.docs(docs[:4]), side.queries(queries[:4])
    times: dict[str, list[float]] = {name: [] for name in sides}
    for r in range(rounds):
        for name in (list(sides) if r % 2 == 0 else list(reversed(sides))):
            start = time.perf_counter()
            sides[name].docs(docs)
            sides[name].queries(queries)
            times[name].append(time.perf_counter() - start)
        print(f"  speed round {r + 1}/{rounds} done", flush=True)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=Path, default=REPO / "bench" / ".population-100")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--speed-chunks", type=int, default=256)
    parser.add_argument("--variants", default=",".join(DEFAULT))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"needs the PersonaBench anchor at {DATA}")
    if args.quick:
        args.rounds, args.speed_chunks = 1, 64
    with tempfile.TemporaryDirectory(prefix="int8-variants-") as scratch:
        # The shipped row makes its export in a cache of its own, as a new user would.
        os.environ["PERSONALENS_CACHE_DIR"] = str(Path(scratch) / "cache")
        measure(args, Path(scratch))


def measure(args, work: Path) -> None:
    noises = ["0.0", "0.7"] if args.quick else NOISES
    sets = [released(noises)] + ([] if args.quick else [load_population(args.population)])
    bench = Workbench(work)
    ranking: list[str] = []

    def ranked() -> list[str]:
        if not ranking:
            sample = random.Random(1).sample(released(["0.7"]).texts()[0], SENSITIVITY_CHUNKS)
            effects = bench.sensitivity(sample)
            print("weight MatMuls by their effect alone (mean 1 - cosine to fp32), top 8:")
            for node, effect in effects[:8]:
                print(f"  {effect:.5f}  {node}")
            ranking.extend(node for node, _ in effects)
        return ranking

    names = [n for n in args.variants.split(",") if n] if args.variants != "all" else [
        *DEFAULT, *older_variants(bench)]
    chosen = variants(bench, names, ranked)
    fp32 = Encoders(bench.fp32_encode, bench.fp32_encode)
    results: dict[str, dict[str, dict]] = {}
    for data in sets:
        docs, queries = data.texts()
        print(f"{data.name}: {len(docs)} distinct chunks, {len(queries)} questions, "
              f"noise {', '.join(data.noises)}", flush=True)
        results.setdefault("fp32", {})[data.name] = retrieval(data, Vectors(fp32, docs, queries))
        for variant in chosen:
            start = time.perf_counter()
            encoders = variant.encoders(data)
            results.setdefault(variant.name, {})[data.name] = retrieval(
                data, Vectors(encoders, docs, queries))
            print(f"  {variant.name}: {time.perf_counter() - start:.0f} s", flush=True)
    speed_set = released(["0.7"])
    docs, queries = speed_set.texts()
    n_queries = max(1, round(args.speed_chunks * len(queries) / len(docs)))
    sides = {"fp32": fp32, **{v.name: v.encoders(speed_set) for v in chosen}}
    medians = speeds(sides, docs[:args.speed_chunks], queries[:n_queries], args.rounds)
    report(results, medians, sets, args, n_queries)


def cpu() -> str:
    """The CPU's name and whether it has VNNI (int8 dot products), which sets int8's gain."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                 if line.startswith("model name")), "unknown CPU")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines()
                  if line.startswith("flags")), [])
    vnni = [f for f in flags if "vnni" in f]
    return f"{name}; {', '.join(vnni) if vnni else 'no VNNI'}; {os.cpu_count()} CPUs"


def report(results: dict, medians: dict[str, float], sets: list[DataSet], args,
           n_queries: int) -> None:
    print(f"\nspeed: {args.speed_chunks} chunks + {n_queries} questions, medians of "
          f"{args.rounds}; load average {os.getloadavg()[0]:.2f}; {cpu()}")
    fp32 = results["fp32"]
    for data in sets:
        print(f"\nfp32 on {data.name}: " + ", ".join(
            f"noise {n} recall {r:.3f} nDCG {g:.3f} (n={q})"
            for n, (r, g, q) in fp32[data.name].items()))
    header = "| variant | vs fp32 | " + " | ".join(
        f"max abs Δ recall / nDCG, {d.name}" for d in sets) + " | meets target |"
    print("\n" + header + "\n|---|---|" + "---|" * len(sets) + "---|")
    for name, by_set in results.items():
        if name == "fp32":
            continue
        speed = medians["fp32"] / medians[name]
        cells, worst = [], 0.0
        for data in sets:
            dr = max(abs(by_set[data.name][n][0] - fp32[data.name][n][0]) for n in data.noises)
            dn = max(abs(by_set[data.name][n][1] - fp32[data.name][n][1]) for n in data.noises)
            worst = max(worst, dr, dn)
            cells.append(f"{dr:.3f} / {dn:.3f}")
        meets = "yes" if worst <= TARGET_DELTA + 1e-12 and speed >= TARGET_SPEED else "no"
        print(f"| {name} | {speed:.2f} × | " + " | ".join(cells) + f" | {meets} |")
    print("\nper noise level, Δ recall / Δ nDCG against fp32:")
    for name, by_set in results.items():
        if name == "fp32":
            continue
        for data in sets:
            print(f"  {name:<18} {data.name:<14} " + "  ".join(
                f"{n}: {by_set[data.name][n][0] - fp32[data.name][n][0]:+.3f}/"
                f"{by_set[data.name][n][1] - fp32[data.name][n][1]:+.3f}"
                for n in data.noises))


if __name__ == "__main__":
    main()
