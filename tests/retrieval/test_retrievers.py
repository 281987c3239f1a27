import shutil

import numpy as np
import pytest

from personalens.errors import InputError
from personalens.lenses.personabench.command import EvalOptions, run_eval
from personalens.retrieval import BM25Retriever, DenseRetriever, Document
from personalens.retrieval.embedding_cache import EmbeddingCache
from tests.conftest import EXAMPLE

DOCS = [Document("pets", "My cat Figo sleeps on the sofa all day."),
        Document("work", "I teach chemistry at a school in Leeds."),
        Document("food", "We cooked a spicy jollof rice for dinner.")]


def test_bm25_ranks_the_document_sharing_the_rare_term_first():
    ranking = BM25Retriever().index(DOCS).search(["who teaches chemistry", "Figo"], 2)
    assert [ids[0] for ids in ranking.ids] == ["work", "pets"]
    assert ranking.scores.shape == (2, 2) and ranking.scores[0, 1] == 0.0


@pytest.mark.minilm
@pytest.mark.slow
def test_minilm_finds_paraphrases_and_never_encodes_a_text_twice(tmp_path):
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    first = DenseRetriever("minilm", cache=cache)
    ranking = first.index(DOCS).search(["What is my job?", "my pet"], 1)
    assert ranking.ids == [["work"], ["pets"]]
    assert first.encoded_texts == 5
    second = DenseRetriever("minilm", cache=cache)
    again = second.index(DOCS).search(["What is my job?", "my pet"], 1)
    assert second.encoded_texts == 0 and second._model is None  # the model never loaded
    assert np.allclose(again.scores, ranking.scores)


def test_a_folder_that_is_not_a_model_is_refused(tmp_path):
    with pytest.raises(InputError, match="not a sentence-transformers model folder"):
        DenseRetriever(str(tmp_path))


def test_a_folder_of_several_communities_keeps_their_items_apart(tmp_path):
    for name in ("a", "b"):
        shutil.copytree(EXAMPLE, tmp_path / "data" / name)
    metrics = run_eval(EvalOptions(data=tmp_path / "data", out=tmp_path / "run", noise=["0.0"],
                                   retriever=["bm25"], k=5, no_answer=True)).metrics.to_json()
    assert metrics["complete"] and metrics["n_recorded"] == 54 == 2 * 27
    keys = (tmp_path / "run" / "records.jsonl").read_text()
    assert '"a/community_example/0.0/bm25/' in keys and '"b/community_example/0.0/bm25/' in keys
