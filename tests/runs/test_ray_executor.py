"""`--executor ray`: the same records and metrics as in-process, and kill -9 then resume.

One local Ray instance (2 CPUs) serves the module; CLI runs join it with --ray-address, so a
killed driver leaves the cluster up, as a killed driver on a real cluster would.
"""

import json
import os
import signal
import socket
from collections import Counter

import pytest

from tests.cli_runner import kill_after_records, personalens, start
from tests.conftest import COMMUNITY_0, EXAMPLE
from tests.fault_server import FaultServer
from tests.lenses.personabench.test_e2e import oracle
from tests.lenses.pqb.test_eval import META, QUERIES
from tests.runs.test_reliability import GENERATE, _files, _records, _schema_reply, _scored

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_address():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PERSONALENS_CACHE_DIR":
                                       os.environ["PERSONALENS_CACHE_DIR"]}})
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def _metrics(run) -> dict:
    return json.loads((run / "metrics.json").read_text())


def _sorted_lines(run) -> list[str]:
    return sorted((run / "records.jsonl").read_text().splitlines())


@pytest.mark.minilm
def test_personabench_on_ray_gives_the_in_process_records(tmp_path, ray_address):
    args = ("personabench", "eval", "--data", COMMUNITY_0, "--noise", "0.0,0.7", "--retriever",
            "bm25,minilm", "--no-answer")
    local = personalens(*args, "--out", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    remote = personalens(*args, "--out", tmp_path / "ray", "--executor", "ray",
                         "--ray-address", ray_address)
    assert remote.returncode == 0, remote.stderr
    assert _sorted_lines(tmp_path / "ray") == _sorted_lines(tmp_path / "local")
    assert _metrics(tmp_path / "ray") == _metrics(tmp_path / "local")
    manifests = [json.loads((tmp_path / r / "manifest.json").read_text())
                 for r in ("local", "ray")]
    assert manifests[0]["config"] == manifests[1]["config"]  # the executor is not identity


@pytest.mark.minilm
def test_pqb_eval_encodes_on_ray_data_with_the_in_process_result(tmp_path, ray_address):
    from personalens.lenses.pqb.command import run_eval
    from personalens.lenses.pqb.options import EvalOptions

    for name in ("local", "ray"):
        run_eval(EvalOptions(queries=QUERIES, meta=META, retriever="minilm", out=tmp_path / name,
                             executor=name, ray_address=ray_address if name == "ray" else None),
                 progress=False)
    assert _metrics(tmp_path / "ray") == _metrics(tmp_path / "local")
    assert _sorted_lines(tmp_path / "ray") == _sorted_lines(tmp_path / "local")
    assert _metrics(tmp_path / "ray")["n_queries"] == 9


@pytest.mark.minilm
def test_ray_data_encoding_matches_local_vectors(tmp_path, ray_address):
    import numpy as np

    from personalens.retrieval import DenseRetriever
    from personalens.retrieval.embedding_cache import EmbeddingCache
    from personalens.runs.executor import make_executor

    texts = [f"note {i}: " + "words " * (i % 17) for i in range(300)]
    local = DenseRetriever("minilm", cache=EmbeddingCache(tmp_path / "a.sqlite"))
    remote = DenseRetriever("minilm", cache=EmbeddingCache(tmp_path / "b.sqlite"),
                            executor=make_executor("ray", ray_address))
    a, b = local.encode(texts), remote.encode(texts)
    assert remote.encoded_texts == 300 and b.shape == (300, 384)
    np.testing.assert_allclose(b, a, atol=1e-5)  # row order kept across actors and batches
    assert float((a[17] * b[17]).sum()) > 0.9999


def test_pqb_parsing_on_ray_equals_in_process(ray_address):
    from personalens.lenses.pqb import style_profiles
    from personalens.lenses.pqb.spacy_pipeline import load_pipeline
    from personalens.runs.executor import make_executor

    histories = {"u2": ["I love it. Works great!", "Bad strap."],
                 "u1": [f"The {n} sounds fine and the case is sturdy." for n in range(7)]}
    chunk = style_profiles.PARSE_CHUNK
    try:
        style_profiles.PARSE_CHUNK = 3  # several tasks, so chunk order matters
        remote = style_profiles.parse_histories(histories, load_pipeline(),
                                                make_executor("ray", ray_address))
    finally:
        style_profiles.PARSE_CHUNK = chunk
    local = style_profiles.parse_histories(histories, load_pipeline())
    assert list(remote) == ["u1", "u2"] and remote == local
    assert len(remote["u2"]) == 3  # "I love it." "Works great!" "Bad strap."
    assert sum(remote["u1"][0].values()) > 0


def test_generation_on_ray_writes_the_in_process_data(tmp_path, ray_address):
    args = (*GENERATE, "--communities", "2")
    with FaultServer(_schema_reply) as server:
        local = personalens(*args, "--base-url", server.base_url, "--out", tmp_path / "local")
        assert local.returncode == 0, local.stderr
        remote = personalens(*args, "--base-url", server.base_url, "--out", tmp_path / "ray",
                             "--executor", "ray", "--ray-address", ray_address)
        assert remote.returncode == 0, remote.stderr
    for folder in ("synthetic_data", "ground_truth"):
        assert _files(tmp_path / "ray" / folder) == _files(tmp_path / "local" / folder)
    assert len(_files(tmp_path / "ray" / "synthetic_data")) > 10
    assert _sorted_lines(tmp_path / "ray") == _sorted_lines(tmp_path / "local")
    usage = [json.loads((tmp_path / r / "manifest.json").read_text())["usage"]["generator"]
             for r in ("local", "ray")]
    assert usage[1]["requests"] == usage[0]["requests"] > 0  # workers' usage reached here


@pytest.mark.minilm
def test_killed_ray_driver_resumes_to_the_in_process_records(tmp_path, ray_address):
    args = ("personabench", "eval", "--data", EXAMPLE, "--noise", "0.0,0.5", "--retriever",
            "bm25,minilm", "--model", "openai/m", "--no-cache")
    with FaultServer(oracle) as server:
        url = ("--base-url", server.base_url)
        reference = personalens(*args, *url, "--out", tmp_path / "local")
        assert reference.returncode == 0, reference.stderr
        planned = _metrics(tmp_path / "local")["n_planned"]
        out = tmp_path / "killed"
        process = start(*args, *url, "--concurrency", "1", "--out", out, "--executor", "ray",
                        "--ray-address", ray_address)
        kill_after_records(process, out / "records.jsonl", 3)
        process.wait()
        assert process.returncode == -signal.SIGKILL, "the run ended before the kill"
        done = (out / "records.jsonl").read_text().count("\n")
        assert 3 <= done < planned
        resumed = personalens(*args, *url, "--out", out, "--executor", "ray",
                              "--ray-address", ray_address)
        assert resumed.returncode == 0, resumed.stderr
    records = _records(out)
    assert Counter(r["key"] for r in records).most_common(1)[0][1] == 1
    assert _scored(records) == _scored(_records(tmp_path / "local"))
    assert _metrics(out)["conditions"] == _metrics(tmp_path / "local")["conditions"]


def test_unknown_executor_and_stray_address_are_bad_input(tmp_path):
    base = ("personabench", "eval", "--data", EXAMPLE, "--retriever", "bm25", "--no-answer")
    unknown = personalens(*base, "--executor", "dask", "--out", tmp_path / "a")
    assert unknown.returncode == 2 and "unknown executor 'dask'" in unknown.stderr
    stray = personalens(*base, "--ray-address", "auto", "--out", tmp_path / "b")
    assert stray.returncode == 2 and "--ray-address needs --executor ray" in stray.stderr
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    unreachable = personalens(*base, "--executor", "ray", "--ray-address",
                              f"127.0.0.1:{port}", "--out", tmp_path / "c", timeout=60)
    assert unreachable.returncode == 2
    assert f"--ray-address 127.0.0.1:{port}: nothing answers there" in unreachable.stderr
    malformed = personalens(*base, "--executor", "ray", "--ray-address", "head-node",
                            "--out", tmp_path / "d")
    assert malformed.returncode == 2 and "is not HOST:PORT" in malformed.stderr
    for name in "abcd":
        assert not (tmp_path / name).exists()
