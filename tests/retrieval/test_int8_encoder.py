"""`<model>-int8`: the quantised ONNX Runtime encoder, its cached export and its cache identity."""

import json

import numpy as np
import pytest

from personalens.errors import InputError
from personalens.retrieval import DenseRetriever, Document, get_retriever, int8_encoder
from personalens.retrieval.embedding_cache import EmbeddingCache


def test_suffix_selects_the_backend_and_keeps_real_folders():
    assert int8_encoder.split_int8("minilm-int8") == ("minilm", True)
    assert int8_encoder.split_int8("org/model-int8") == ("org/model", True)
    assert int8_encoder.split_int8("minilm") == ("minilm", False)
    assert int8_encoder.split_int8("-int8") == ("-int8", False)


def test_suffix_on_an_existing_folder_is_that_folder(tmp_path):
    folder = tmp_path / "mine-int8"
    folder.mkdir()
    assert int8_encoder.split_int8(str(folder)) == (str(folder), False)


def test_pooling_by_hand():
    # 2 texts × 3 tokens × 2 dims; the second text has one padding token.
    tokens = np.array([[[1, 2], [3, 4], [5, 6]], [[2, 0], [4, 2], [100, 100]]], np.float32)
    mask = np.array([[1, 1, 1], [1, 1, 0]])
    np.testing.assert_allclose(int8_encoder.pool(tokens, mask, "mean"), [[3, 4], [3, 1]])
    np.testing.assert_allclose(int8_encoder.pool(tokens, mask, "max"), [[5, 6], [4, 2]])
    np.testing.assert_allclose(int8_encoder.pool(tokens, mask, "cls"), [[1, 2], [2, 0]])


def test_the_calibration_texts_are_the_file_without_its_comments():
    texts = int8_encoder.calibration_texts()
    assert len(texts) == 32 and not any(t.startswith("#") or not t.strip() for t in texts)
    assert texts[0] == "What is my favourite kind of music?"


def test_export_key_changes_with_model_and_settings(monkeypatch):
    a = int8_encoder.export_key("m")
    assert a == int8_encoder.export_key("m") and a != int8_encoder.export_key("n")
    identity = int8_encoder.cache_identity("m")
    monkeypatch.setitem(int8_encoder.SETTINGS, "per_channel", False)
    assert int8_encoder.export_key("m") != a
    assert int8_encoder.cache_identity("m") != identity  # cached vectors follow the settings
    monkeypatch.setitem(int8_encoder.SETTINGS, "per_channel", True)
    assert int8_encoder.export_key("m") == a


def test_export_key_changes_with_the_calibration_texts(monkeypatch, tmp_path):
    a = int8_encoder.export_key("m")
    edited = tmp_path / "calibration.txt"
    edited.write_bytes(int8_encoder.CALIBRATION.read_bytes() + b"One more sentence.\n")
    monkeypatch.setattr(int8_encoder, "CALIBRATION", edited)
    assert int8_encoder.export_key("m") != a  # they choose the fp32 MatMuls


@pytest.mark.minilm
@pytest.mark.slow
def test_int8_minilm_is_close_to_fp32_and_cached_apart(tmp_path, monkeypatch):
    import onnx

    cache = EmbeddingCache(tmp_path / "e.sqlite")
    fp32, int8 = DenseRetriever("minilm", cache=cache), get_retriever("minilm-int8")
    assert isinstance(int8, DenseRetriever)
    int8.cache = cache
    key = int8_encoder.export_key(fp32.identity)
    assert int8.identity == f"{fp32.identity}|onnx-int8:{key}" and int8.bundled
    texts = ["I adopted a grey cat named Miso last spring.",
             "My sister Anna works night shifts at the hospital.",
             "short", "I adopted a grey cat named Miso last spring."]
    a, b = fp32.encode(texts), int8.encode(texts)
    assert fp32.encoded_texts == 3 and int8.encoded_texts == 3  # neither reused the other's
    cosine = (a * b).sum(axis=1)
    assert cosine.min() > 0.97 and np.allclose(np.linalg.norm(b, axis=1), 1, atol=1e-5)
    assert not np.allclose(a, b, atol=1e-4)  # really the quantised model, not fp32 again
    np.testing.assert_array_equal(b[0], b[3])
    # A text's vector is its own: activations are quantised with one range per run, so in a
    # padded batch its partners would move it (they do, below); each text runs alone.
    encoder = int8.load()
    np.testing.assert_array_equal(encoder.encode(texts[2::-1], batch_size=2)[::-1], b[:3])
    np.testing.assert_array_equal(encoder.encode(texts[1:2]), b[1:2])
    batched = encoder.encode_batch(texts[:3])
    assert not np.allclose(batched, b[:3], atol=1e-4)
    assert ((batched * b[:3]).sum(axis=1) > 0.97).all()

    # Queries are encoded by the fp32 model (and share its cached vectors); documents by int8.
    query = int8.encode(texts[:1], is_query=True)
    np.testing.assert_array_equal(query, fp32.encode(texts[:1]))
    assert not np.allclose(query, b[:1], atol=1e-4)
    # A search scores fp32 query vectors against int8 document vectors.
    index = int8.index([Document(str(i), t) for i, t in enumerate(texts[:3])])
    np.testing.assert_allclose(index.scores(texts[1:2]), a[1:2] @ b[:3].T, atol=1e-6)
    fresh = DenseRetriever("minilm-int8", cache=EmbeddingCache(tmp_path / "q.sqlite"))
    np.testing.assert_allclose(fresh.encode(texts[1:2], is_query=True), a[1:2], atol=1e-6)
    assert fresh.encoded_texts == 0 and fresh.query_retriever().encoded_texts == 1

    folder = int8_encoder.export_folder(fp32.identity)
    # The weight MatMul whose quantisation alone moves the calibration vectors most stays fp32;
    # every other weight MatMul is quantised. Which one that is depends on the CPU's int8
    # kernels: the FFN output of layer 0 with AVX-512 VNNI (bench/int8_variants.py), the
    # attention output of layer 0 on an AVX2 CPU without VNNI; both in the first layer.
    manifest = json.loads((folder / "export.json").read_text())
    kept, effects = manifest["fp32_matmuls"], manifest["sensitivity"]
    ranked = sorted(effects, key=effects.get, reverse=True)
    assert kept == ranked[:1] and kept[0].startswith("/inner/encoder/layer.0/")
    assert len(effects) == 36 and min(effects[k] for k in kept) > max(
        v for n, v in effects.items() if n not in kept)
    graph = onnx.load(str(folder / "model_int8.onnx")).graph
    weights = {i.name for i in graph.initializer}
    assert sorted(n.name for n in graph.node
                  if n.op_type == "MatMul" and n.input[1] in weights) == sorted(kept)
    assert not (folder / "probe.onnx").exists()
    # The layers' weights are int8; the fp32 embedding table (47 MB) is most of the rest.
    assert (folder / "model_int8.onnx").stat().st_size < 65e6  # the fp32 export is 90 MB
    monkeypatch.setattr(int8_encoder, "_export", lambda *a: pytest.fail("exported twice"))
    again = DenseRetriever("minilm-int8", cache=EmbeddingCache(tmp_path / "f.sqlite"))
    np.testing.assert_allclose(again.encode(texts[:1]), int8.load().encode(texts[:1]),
                               atol=1e-6)


@pytest.mark.minilm
@pytest.mark.slow
def test_a_model_with_an_unsupported_head_is_refused(tmp_path):
    from sentence_transformers import SentenceTransformer, models

    source = DenseRetriever("minilm").source
    base = SentenceTransformer(source, device="cpu")
    dense = models.Dense(in_features=384, out_features=8)
    SentenceTransformer(modules=[base[0], base[1], dense]).save(str(tmp_path / "with-dense"))
    retriever = DenseRetriever(str(tmp_path / "with-dense") + "-int8")
    with pytest.raises(InputError, match="Transformer → Pooling → Normalize"):
        retriever.load()
