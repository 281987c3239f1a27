"""Dense encoding through a dynamically quantised int8 ONNX export, run by ONNX Runtime.

`<model>-int8` (e.g. `minilm-int8`) selects this backend for any sentence-transformers model
whose modules are Transformer → Pooling (mean, cls or max) → optional Normalize.

Why not sentence-transformers' own `backend="onnx"`: it loads through `optimum-onnx`, whose
only release pins `transformers<4.58` and would downgrade the transformers 5 the rest of the
package runs on. The same two steps are done here with the libraries made for them: the
transformer is exported by `torch.onnx.export`, its weights quantised by ONNX Runtime's
`quantize_dynamic` (int8 weights per output channel, activations quantised on the fly), and
encoding runs in an `onnxruntime.InferenceSession`; pooling and normalisation are a few numpy
lines. The export is made once per (model, settings) and kept under the cache folder.

Two choices keep it ranking like fp32 (bench/int8_variants.py chose them by recall and nDCG):
- the weight MatMul whose quantisation moves the vectors most stays fp32
  (SETTINGS["fp32_matmuls"] of them). It is found at export by quantising each weight MatMul
  alone and measuring how far the vectors of data/int8_calibration.txt move from fp32 (for
  MiniLM the FFN output of layer 0, whose input has a few very wide channels);
- only documents are encoded in int8: queries are few and short, so DenseRetriever encodes them
  with the fp32 model (DenseRetriever.encode; not part of the export key, as it changes no
  document vector).
"""

import hashlib
import json
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np

from personalens.errors import InputError
from personalens.paths import cache_dir

INT8_SUFFIX = "-int8"
# Part of every export's key and of the embedding cache's model identity: changing a setting
# makes a new export and new vectors, never a mix with the old ones.
# Eager attention exports as plain MatMul/Softmax, which ONNX Runtime runs faster than the
# exported SDPA pattern; only MatMuls with a constant (weight) side are quantised, so attention
# scores stay fp32, and the embedding lookup is not quantised (it costs nothing).
# bench/int8_encoding.py measured these choices (bench/RESULTS.md).
# Each text is run alone (see Int8Encoder.encode), which changes vectors as much as a setting.
SETTINGS = {"exporter": "torch.onnx", "opset": 17, "attention": "eager", "weights": "QInt8",
            "per_channel": True, "ops": ["MatMul"], "matmul_const_b_only": True,
            "quantiser": "onnxruntime.quantize_dynamic", "run": "one text per run",
            "fp32_matmuls": 1, "sensitivity": "each weight MatMul alone, mean 1 - cosine to the "
            "fp32 graph, data/int8_calibration.txt"}
CALIBRATION = Path(__file__).parent / "data" / "int8_calibration.txt"
BACKEND = "onnx-int8"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_POOLING = ("mean", "cls", "max")


def split_int8(name: str) -> tuple[str, bool]:
    """(base model name, wants int8): `minilm-int8` → (`minilm`, True).

    A local folder whose own name ends in -int8 is an ordinary model, not a request for this
    backend.
    """
    if name.endswith(INT8_SUFFIX) and len(name) > len(INT8_SUFFIX) and not Path(name).exists():
        return name[: -len(INT8_SUFFIX)], True
    return name, False


def export_key(identity: str) -> str:
    # The calibration texts choose the fp32 MatMuls, so editing them makes a new export.
    calibration = hashlib.sha256(CALIBRATION.read_bytes()).hexdigest()
    blob = json.dumps({"model": identity, **SETTINGS, "calibration": calibration},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def cache_identity(identity: str) -> str:
    """The embedding cache's name for this backend's vectors of model `identity`."""
    return f"{identity}|{BACKEND}:{export_key(identity)}"


def export_folder(identity: str) -> Path:
    return cache_dir() / "onnx" / export_key(identity)


def ensure_export(source: str, identity: str) -> Path:
    """The cached int8 export of `source` (made now, atomically, if missing)."""
    target = export_folder(identity)
    if (target / "export.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".export-"))
    try:
        _export(source, identity, staging)
        staging.rename(target)
    except OSError:
        if not (target / "export.json").exists():
            raise
    finally:  # another process may have won the race with an identical export
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _export(source: str, identity: str, folder: Path) -> None:
    import time

    from sentence_transformers import SentenceTransformer

    start = time.perf_counter()
    model = SentenceTransformer(source, device="cpu",
                                model_kwargs={"attn_implementation": SETTINGS["attention"]})
    head = _head(model, identity)
    model[0].tokenizer.save_pretrained(folder / "tokenizer")
    fp32 = folder / "model_fp32.onnx"
    manifest = {"model": identity, "settings": SETTINGS, "inputs": export_transformer(model, fp32),
                "max_seq_length": model.max_seq_length, **head}
    effects = sensitivity(fp32, folder, manifest, calibration_texts(), folder / "probe.onnx")
    kept = [node for node, _ in effects[:SETTINGS["fp32_matmuls"]]]
    quantise(fp32, folder / "model_int8.onnx", nodes_to_exclude=kept)
    fp32.unlink()
    manifest.update(fp32_matmuls=kept, sensitivity=dict(effects),
                    export_seconds=round(time.perf_counter() - start, 2))
    (folder / "export.json").write_text(json.dumps(manifest, indent=2))


def calibration_texts() -> list[str]:
    lines = CALIBRATION.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def weight_matmuls(graph: Path) -> list[str]:
    """The MatMul nodes whose second input is a weight (the ones quantised), in graph order."""
    import onnx

    model = onnx.load(str(graph))
    weights = {i.name for i in model.graph.initializer}
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights]


def sensitivity(fp32: Path, folder: Path, manifest: dict, texts: list[str],
                probe: Path) -> list[tuple[str, float]]:
    """Each weight MatMul's effect alone: the mean 1 - cosine between the fp32 graph's vectors
    of `texts` and the vectors with only that MatMul quantised; largest first.

    `folder` holds the tokenizer; `manifest` the export's inputs and head; `probe` is where
    each one-MatMul graph is written (and removed). Both sides run in ONNX Runtime, one text
    at a time, so only quantisation differs. Measured end to end rather than at the MatMul's
    output, because what matters is the sentence vector after every later layer and pooling.
    """
    reference = Int8Encoder(folder, graph=fp32, manifest=manifest).encode(texts)
    effects = []
    try:
        for node in weight_matmuls(fp32):
            quantise(fp32, probe, nodes_to_quantize=[node])
            vectors = Int8Encoder(folder, graph=probe, manifest=manifest).encode(texts)
            cosine = (vectors * reference).sum(axis=1) / (
                np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1))
            effects.append((node, round(float(1 - cosine.mean()), 8)))
    finally:
        probe.unlink(missing_ok=True)
    return sorted(effects, key=lambda e: -e[1])


def export_transformer(model, path: Path) -> list[str]:
    """The fp32 ONNX graph of a SentenceTransformer's transformer (token vectors out); returns
    its input names. bench/int8_variants.py quantises it other ways."""
    import torch

    transformer = model[0]
    sample = transformer.tokenizer(["an example", "a second, longer example"], padding=True,
                                   return_tensors="pt")
    names = [n for n in _INPUTS if n in sample]

    class LastHiddenState(torch.nn.Module):
        """The transformer with positional inputs and one output, as the exporter wants it."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *inputs):
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    # The tracer warns about every data-dependent branch in the model's Python; the export is
    # checked by its result (tests compare int8 and fp32 vectors), not by those warnings.
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(LastHiddenState(transformer.auto_model).eval(),
                          tuple(sample[n] for n in names), str(path), input_names=names,
                          output_names=["last_hidden_state"],
                          dynamic_axes={n: {0: "batch", 1: "tokens"}
                                        for n in [*names, "last_hidden_state"]},
                          opset_version=SETTINGS["opset"], dynamo=False)
    return names


def quantise(fp32: Path, out: Path, **options) -> None:
    """SETTINGS' dynamic int8 quantisation of an fp32 graph; `options` override
    `quantize_dynamic`'s arguments (the variants bench)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    arguments = {"weight_type": QuantType.QInt8, "per_channel": SETTINGS["per_channel"],
                 "op_types_to_quantize": SETTINGS["ops"],
                 "extra_options": {"MatMulConstBOnly": SETTINGS["matmul_const_b_only"]},
                 **options}
    quantize_dynamic(str(fp32), str(out), **arguments)


def _head(model, identity: str) -> dict:
    """What follows the transformer: pooling mode and normalisation; refuses anything else."""
    kinds = [type(m).__name__ for m in model]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise InputError(f"retriever {identity!r}{INT8_SUFFIX}: the int8 backend handles "
                         f"Transformer → Pooling → Normalize models, not {' → '.join(kinds)}")
    mode = getattr(model[1], "pooling_mode", None)
    if mode not in _POOLING:
        raise InputError(f"retriever {identity!r}{INT8_SUFFIX}: pooling {mode!r} is not one of "
                         f"{', '.join(_POOLING)}")
    return {"pooling": mode, "normalize": kinds[-1] == "Normalize"}


class Int8Encoder:
    """Encodes like `SentenceTransformer.encode` (same signature subset) from an int8 export."""

    def __init__(self, folder: Path, *, threads: int | None = None, graph: Path | None = None,
                 manifest: dict | None = None):
        """The export in `folder`; `graph` and `manifest` stand in for its model_int8.onnx and
        export.json while the export is being made (the sensitivity probes)."""
        import onnxruntime as ort
        from transformers import AutoTokenizer

        self.manifest = manifest or json.loads((folder / "export.json").read_text())
        self.tokenizer = AutoTokenizer.from_pretrained(folder / "tokenizer")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(graph or folder / "model_int8.onnx"), options,
                                            providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str], **_) -> np.ndarray:
        """Embeddings in input order, each text run alone.

        Dynamic quantisation gives each MatMul's input one range for the whole tensor, so in a
        batch a text's vector would depend on its batch partners and their padding (up to 0.03
        per coordinate): the same text could get another vector, and be cached with it,
        depending on what else a run encoded. Alone, a text always gets the same vector, and
        nothing is padded; bench/int8_encoding.py measured it no slower than batches of 32
        sorted by length.
        """
        vectors = [self.encode_batch([text]) for text in texts]
        return np.vstack(vectors) if vectors else np.empty((0, 0), np.float32)

    def encode_batch(self, texts: list[str]) -> np.ndarray:
        """The texts as one padded batch (the bench compares this with `encode`)."""
        names = self.manifest["inputs"]
        batch = self.tokenizer(texts, padding=True, truncation=True, return_tensors="np",
                               max_length=self.manifest["max_seq_length"])
        tokens = self.session.run(None, {n: batch[n].astype(np.int64) for n in names})[0]
        vectors = pool(tokens, batch["attention_mask"], self.manifest["pooling"])
        if self.manifest["normalize"]:
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors


def pool(tokens: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Sentence vectors from token vectors (batch × tokens × dim), ignoring padding."""
    if mode == "cls":
        return tokens[:, 0].astype(np.float32)
    keep = mask[..., None].astype(bool)
    if mode == "max":
        return np.where(keep, tokens, -np.inf).max(axis=1).astype(np.float32)
    summed = np.where(keep, tokens, 0.0).sum(axis=1)
    return (summed / np.maximum(keep.sum(axis=1), 1)).astype(np.float32)
