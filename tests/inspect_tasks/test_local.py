"""The four Inspect tasks offline with the bundled model (`--model personalens/smollm2-135m`:
llama.cpp in-process, no network, no key), each on a tiny slice; every log reads back with
Inspect's own log reader."""

import pytest

from tests import prefdisco_data as data
from tests.conftest import EXAMPLE
from tests.inspect_tasks.test_tasks import PQB_META, PQB_QUERIES, fresh_model
from tests.prisk_double import dataset as prisk_dataset

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def _tasks(tmp_path):
    from personalens.inspect_tasks.registry import personabench, pqb, prefdisco, prisk

    folder = data.folder(tmp_path / "prefdisco",
                         {"alpha": [data.weighted("p1", {"visual": 1.0})]})
    return {
        "personabench": (personabench(data=str(EXAMPLE), noise="0.0", retriever="bm25"), 2),
        "prefdisco": (prefdisco(data=str(folder), conditions="baseline", max_tokens=64), 1),
        "prisk": (prisk(data=str(prisk_dataset(tmp_path / "prisk")), conditions="base",
                        risks="irp", retriever="bm25", max_tokens=64), 1),
        "pqb": (pqb(queries=str(PQB_QUERIES), meta=str(PQB_META)), 9),
    }


@pytest.mark.bundled_model
def test_the_four_tasks_run_offline_with_the_bundled_model(tmp_path):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    for name, (task, limit) in _tasks(tmp_path).items():
        [log] = inspect_eval(task, model=fresh_model("smollm2-135m"), limit=limit,
                             log_dir=str(tmp_path / "logs" / name), display="none",
                             max_tokens=64)
        assert log.status == "success", (name, log.error)
        read = read_eval_log(log.location)  # Inspect's reader validates the whole log
        assert read.eval.task == f"personalens/{name}" or read.eval.task == name
        assert len(read.samples) == limit and all(s.error is None for s in read.samples)
        for sample in read.samples:  # each holds its item's record, whatever it scored
            line = sample.scores["lens_record"].metadata["personalens_record"]
            assert line["key"] == sample.id and line["status"] in ("ok", "failed"), name
        used = sum(u.output_tokens for s in read.samples for u in s.model_usage.values())
        assert (used > 0) == (name != "pqb"), name  # pqb ranks only: no model call
