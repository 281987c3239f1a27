"""Which int8 quantisation of MiniLM keeps closest to fp32, and at what speed?

    python bench/int8_variants.py [--chunks 256] [--rounds 3]

The shipped `minilm-int8` settings against the variants tried while choosing them, on the
first --chunks session chunks of the released PersonaBench community_0 (noise 0.7). Every
variant quantises the same fp32 ONNX export (eager attention) and is run as the shipped
encoder runs, one text at a time. For each it prints the cosine of its vectors to fp32 torch
MiniLM's (mean and minimum over the chunks) and its speed against fp32 torch (batch 32),
medians of --rounds with the order alternated. Variants:

- shipped: int8 weights per output channel, weight MatMuls only (local SETTINGS);
- reduce-range: 7-bit weights, the ONNX Runtime advice for AVX2 machines without VNNI;
- uint8-weights: unsigned weights (U8U8 kernels);
- fused / fused-attention: ONNX Runtime's BERT optimizer first (LayerNorm, GELU and, in the
  second, attention fused), then the shipped quantisation (the second also quantises Attention);
- ffn-out-fp32: the shipped settings with each layer's FFN output MatMul left fp32 (its input,
  the GELU output, has the widest range);
- smooth-0.8: SmoothQuant (alpha 0.8) on every weight MatMul: each input channel is divided by
  s_j = amax(x_j)^0.8 / amax(w_j)^0.2 (a Mul before the MatMul) and the weight row multiplied
  by it, with amax(x_j) calibrated on the last 64 chunks, so one wide channel no longer sets
  the activation range for all.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from int8_encoding import DATA, chunks  # noqa: E402


def smoothquant(fp32: Path, out: Path, calibration: list[str], tokenizer, names: list[str],
                alpha: float) -> None:
    """`fp32` with every weight MatMul smoothed (see the module docstring), saved to `out`."""
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    model = onnx.load(str(fp32))
    weights = {i.name: i for i in model.graph.initializer}
    targets = [n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    inputs = sorted({n.input[0] for n in targets})
    probe = onnx.load(str(fp32))
    probe.graph.output.extend(helper.make_tensor_value_info(x, onnx.TensorProto.FLOAT, None)
                              for x in inputs)
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    amax: dict[str, np.ndarray] = {}
    for start in range(0, len(calibration), 16):
        batch = tokenizer(calibration[start:start + 16], padding=True, truncation=True,
                          max_length=256, return_tensors="np")
        outputs = session.run(inputs, {n: batch[n].astype(np.int64) for n in names})
        real = batch["attention_mask"].astype(bool)
        for name, value in zip(inputs, outputs, strict=True):
            amax[name] = np.maximum(amax.get(name, 0.0), np.abs(value[real]).max(axis=0))
    nodes = []
    for node in model.graph.node:
        if node in targets:
            w = numpy_helper.to_array(weights[node.input[1]])
            w_max = np.maximum(np.abs(w).max(axis=1), 1e-5)
            s = np.maximum(amax[node.input[0]] ** alpha / w_max ** (1 - alpha), 1e-5)
            s = s.astype(np.float32)
            weights[node.input[1]].CopyFrom(numpy_helper.from_array(w * s[:, None],
                                                                    node.input[1]))
            scale, smoothed = f"{node.name}/smooth_scale", f"{node.name}/smoothed_input"
            model.graph.initializer.append(numpy_helper.from_array(1 / s, scale))
            nodes.append(helper.make_node("Mul", [node.input[0], scale], [smoothed],
                                          name=f"{node.name}/smooth"))
            node.input[0] = smoothed
        nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.save(model, str(out))


def fused(fp32: Path, out: Path, attention: bool) -> None:
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    options = FusionOptions("bert")
    options.enable_attention = attention
    optimizer.optimize_model(str(fp32), model_type="bert", num_heads=12, hidden_size=384,
                             optimization_options=options, opt_level=0).save_model_to_file(str(out))


def build_variants(work: Path, texts: list[str]) -> dict[str, Path]:
    """Folder per variant, each laid out as an export the int8 encoder loads."""
    import onnx
    from onnxruntime.quantization import QuantType
    from sentence_transformers import SentenceTransformer

    from personalens.retrieval import int8_encoder
    from personalens.retrieval.model_source import resolve_model_source

    source, identity = resolve_model_source("minilm")
    shipped = int8_encoder.ensure_export(source, identity)
    model = SentenceTransformer(source, device="cpu", model_kwargs={"attn_implementation": "eager"})
    fp32 = work / "fp32.onnx"
    names = int8_encoder.export_transformer(model, fp32)
    ffn_out = [n.name for n in onnx.load(str(fp32)).graph.node if n.op_type == "MatMul"
               and "/output/dense/" in n.name and "attention" not in n.name]
    # Graphs rewritten by hand or by the optimizer lose shape information the quantiser wants.
    untyped = {"extra_options": {"MatMulConstBOnly": True,
                                 "DefaultTensorType": onnx.TensorProto.FLOAT}}
    graphs = {"fused": work / "fused.onnx", "fused-attention": work / "fused-attention.onnx",
              "smooth-0.8": work / "smooth.onnx"}
    fused(fp32, graphs["fused"], attention=False)
    fused(fp32, graphs["fused-attention"], attention=True)
    smoothquant(fp32, graphs["smooth-0.8"], texts[-64:], model[0].tokenizer, names, 0.8)
    plans = {
        "reduce-range": (fp32, {"reduce_range": True}),
        "uint8-weights": (fp32, {"weight_type": QuantType.QUInt8}),
        "fused": (graphs["fused"], untyped),
        "fused-attention": (graphs["fused-attention"],
                            {**untyped, "op_types_to_quantize": ["MatMul", "Attention"]}),
        "ffn-out-fp32": (fp32, {"nodes_to_exclude": ffn_out}),
        "smooth-0.8": (graphs["smooth-0.8"], untyped),
    }
    folders = {"shipped": shipped}
    for name, (graph, options) in plans.items():
        folder = work / name
        shutil.copytree(shipped, folder, ignore=shutil.ignore_patterns("model_int8.onnx"))
        int8_encoder.quantise(graph, folder / "model_int8.onnx", **options)
        folders[name] = folder
    return folders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"needs the PersonaBench anchor at {DATA}")
    with tempfile.TemporaryDirectory(prefix="int8-variants-cache-") as cache:
        os.environ["PERSONALENS_CACHE_DIR"] = cache
        measure(args)


def measure(args) -> None:
    from sentence_transformers import SentenceTransformer

    from personalens.retrieval import int8_encoder
    from personalens.retrieval.model_source import resolve_model_source

    every = chunks()
    texts = every[:args.chunks]
    with tempfile.TemporaryDirectory(prefix="int8-variants-") as scratch:
        folders = build_variants(Path(scratch), every)
        fp32 = SentenceTransformer(resolve_model_source("minilm")[0], device="cpu")
        sides = {"fp32": lambda t: fp32.encode(t, batch_size=32, show_progress_bar=False)}
        for name, folder in folders.items():
            sides[name] = int8_encoder.Int8Encoder(folder).encode
        reference = sides["fp32"](texts)
        for encode in sides.values():  # first-call costs
            encode(texts[:8])
        times: dict[str, list[float]] = {name: [] for name in sides}
        cosines = {}
        for r in range(args.rounds):
            for name in (list(sides) if r % 2 == 0 else list(reversed(sides))):
                start = time.perf_counter()
                vectors = sides[name](texts)
                times[name].append(time.perf_counter() - start)
                cosines[name] = (vectors * reference).sum(axis=1) / (
                    np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1))
    base = statistics.median(times["fp32"])
    print(f"{len(texts)} chunks; load average {os.getloadavg()[0]:.2f}")
    print(f"{'variant':<16} {'cosine mean':>12} {'cosine min':>11} {'median s':>9} {'vs fp32':>8}")
    for name in sides:
        median = statistics.median(times[name])
        print(f"{name:<16} {cosines[name].mean():>12.5f} {cosines[name].min():>11.5f} "
              f"{median:>9.2f} {base / median:>7.2f}x")


if __name__ == "__main__":
    main()
