"""PQB: flip rate, bootstrap CIs, and an end-to-end run on the released query excerpt."""

import json
from pathlib import Path

import numpy as np
import pytest

from personalens.lenses.pqb.records import EvalRecord
from personalens.retrieval.metrics import flip_rate, flips
from personalens.runs import ItemRecords
from personalens.stats import bootstrap_ci
from tests.cli_runner import personalens
from tests.conftest import SHARED
from tests.fault_server import FaultServer

QUERIES = SHARED / "anchors/pqb/dataset/Musical_Instruments.excerpt.json"
META = Path(__file__).parents[2] / "fixtures/pqb/meta_Musical_Instruments.jsonl"


def test_flip_rate_both_definitions_hand_computed():
    hit_a = np.array([1, 1, 0, 0, 1])
    hit_b = np.array([1, 0, 0, 1, 1])
    assert flips(hit_a, hit_b).tolist() == [0, 1, 0, 1, 0]
    assert flip_rate(hit_a, hit_b, conditioned=True) == pytest.approx(2 / 4)  # pair 3 excluded
    assert flip_rate(hit_a, hit_b, conditioned=False) == pytest.approx(2 / 5)
    assert flip_rate(np.zeros(3), np.zeros(3), conditioned=True) is None


def test_bootstrap_ci_is_seeded_and_brackets_the_mean():
    values = np.array([0.0, 1.0] * 50)
    low, high = bootstrap_ci(values, lambda v: float(v.mean()), seed=1)
    assert (low, high) == bootstrap_ci(values, lambda v: float(v.mean()), seed=1)
    assert low < 0.5 < high and high - low < 0.3
    assert bootstrap_ci(np.array([]), lambda v: 0.0) == (None, None)


def test_eval_on_the_release_excerpt(tmp_path):
    out = tmp_path / "run"
    result = personalens("pqb", "eval", "--queries", QUERIES, "--meta", META, "--retriever",
                         "bm25", "--out", out)
    assert result.returncode == 0, result.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    records = {r["key"]: r for r in map(json.loads, (out / "records.jsonl").read_text()
                                        .splitlines())}
    assert metrics["n_queries"] == 9 and metrics["n_pairs"] == 4 and metrics["n_typo"] == 8
    # Hand-check from the records: pairs of clean ranks per item.
    ranks = {}
    for r in records.values():
        ranks.setdefault(r["parent_asin"], []).append(r["rank_clean"])
    pairs = [tuple(v) for v in ranks.values() if len(v) == 2]
    for k in (1, 5, 10, 20):
        hit = [(a is not None and a <= k, b is not None and b <= k) for a, b in pairs]
        eligible = [h for h in hit if h[0] or h[1]]
        expected = sum(a != b for a, b in eligible) / len(eligible) if eligible else None
        assert metrics["flip_rate"]["paper"][str(k)]["value"] == pytest.approx(expected)
        assert metrics["flip_rate"]["all_pairs"][str(k)]["value"] == pytest.approx(
            sum(a != b for a, b in hit) / len(hit))
    clean_at_1 = sum(r["rank_clean"] == 1 for r in records.values()) / 9
    assert metrics["hit"]["clean"]["1"]["value"] == pytest.approx(clean_at_1)
    for section in (metrics["hit"]["clean"]["5"], metrics["mrr"]["typo"]):
        assert section["ci_low"] <= section["value"] <= section["ci_high"]
    assert "Flip rate" in (out / "report.html").read_text()
    # The release's own typo queries, aligned word by word with their clean versions.
    kinds = metrics["typo_edit_kinds"]["typo"]
    assert {k: v for k, v in kinds.items() if v} == {"insertion": 14, "adjacent_key": 5,
                                                      "deletion": 4, "other": 1}


def test_a_query_whose_item_is_missing_from_the_corpus_is_refused(tmp_path):
    meta = tmp_path / "meta.jsonl"
    meta.write_text("".join(line for line in META.read_text().splitlines(keepends=True)
                            if "B00006HOLL" not in line))
    out = tmp_path / "run"
    result = personalens("pqb", "eval", "--queries", QUERIES, "--meta", meta, "--out", out)
    assert result.returncode == 2 and "asin B00006HOLL" in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()


def test_beir_export_round_trips(tmp_path):
    out = tmp_path / "beir"
    result = personalens("pqb", "export-beir", "--queries", QUERIES, "--meta", META, "--out", out)
    assert result.returncode == 0, result.stderr
    assert "15 documents, 17 queries, 17 qrels" in result.stdout  # 9 clean + 8 typo
    queries = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    qrels = (out / "qrels/test.tsv").read_text().splitlines()
    assert qrels[0] == "query-id\tcorpus-id\tscore"
    by_id = {q["_id"]: q for q in queries}
    query_id, asin, score = qrels[1].split("\t")
    assert score == "1" and by_id[query_id]["metadata"]["parent_asin"] == asin
    corpus_ids = {json.loads(x)["_id"] for x in (out / "corpus.jsonl").read_text().splitlines()}
    assert all(line.split("\t")[1] in corpus_ids for line in qrels[1:])


def _record(key, item, clean, typo=None, random_typo=None, has_typo=True, has_random=True):
    """A query's stored line (records.jsonl)."""
    return {"key": key, "status": "ok", "parent_asin": item, "uid": key.split("/")[1],
            "rank_clean": clean, "rank_typo": typo,
            "rank_random_typo": random_typo, "syntax_query": "the guitar",
            "typo_query": "teh guitar" if has_typo else None,
            "random_typo_query": "the guitsr" if has_random else None}


def test_personal_vs_random_typo_hits_by_hand():
    from personalens.lenses.pqb.analysis import summarise
    from personalens.lenses.pqb.metrics import PqbMetrics

    lines = [_record("a/1", "a", 1, 3, 1), _record("a/2", "a", 2, None, 8),
             _record("b/1", "b", 12, 15, None), _record("b/2", "b", None, None, None,
                                                        has_random=False)]
    metrics = PqbMetrics.model_validate({
        **summarise(list(ItemRecords.from_lines(lines, EvalRecord).ok())), "retriever": "bm25",
        "failures": []}).to_json()
    assert metrics["n_random_typo"] == 3 and metrics["n_pairs"] == 2
    # Hit@1 over the 3 queries with a random version: clean 1,0,0; personal 0,0,0; random 1,0,0.
    assert metrics["hit"]["random_typo"]["1"]["value"] == pytest.approx(1 / 3)
    assert metrics["hit"]["random_drop"]["1"]["value"] == pytest.approx(0.0)
    assert metrics["hit"]["personal_minus_random"]["1"]["value"] == pytest.approx(-1 / 3)
    # Hit@10: clean 1,1,0; personal 1,0,0; random 1,1,0 -> personal typos cost one more hit.
    assert metrics["hit"]["personal_minus_random"]["10"]["value"] == pytest.approx(-1 / 3)
    assert metrics["hit"]["random_drop"]["10"]["value"] == pytest.approx(0.0)
    assert metrics["mrr"]["random_typo"]["value"] == pytest.approx((1 + 1 / 8) / 3)
    # Flip@5 over the pairs (a: 1 vs 2 both hit; b: neither): paper None-free 0/1, all 0/2.
    assert metrics["flip_rate"]["paper"]["5"]["value"] == 0.0
    assert metrics["flip_rate"]["paper"]["1"]["value"] == 1.0  # a: rank 1 vs 2
    assert metrics["flip_rate"]["all_pairs"]["1"]["value"] == 0.5
    assert metrics["typo_edit_kinds"]["typo"]["transposition"] == 4  # all four have one
    assert metrics["typo_edit_kinds"]["random_typo"]["adjacent_key"] == 3


def test_queries_whose_llm_rerank_fails_are_recorded_and_retried(tmp_path):
    """A reranker that fails for one item's queries: those records are failed (exit 3, listed
    in the report, left out of the metrics); once the model answers, a rerun fills them in."""
    rules = tmp_path / "rules.json"

    def write_rules(broken: bool):
        # While broken, only queries that do not mention Sony (the amplifier adapter's) get a
        # valid reply; the rest, and the repair prompts, get a ranking naming no candidate.
        good, bad = '{"ranking": [1]}', '{"ranking": [99]}'
        rule = [{"pattern": "Search query: (?![^\\n]*Sony)", "reply": good}] if broken else []
        rules.write_text(json.dumps({"rules": rule, "default": bad if broken else good}))

    write_rules(broken=True)
    args = ["pqb", "eval", "--queries", QUERIES, "--meta", META, "--retriever",
            f"rerank-llm:scripted:{rules}", "--out", tmp_path / "run"]
    first = personalens(*args)
    assert first.returncode == 3, first.stderr
    metrics = json.loads((tmp_path / "run/metrics.json").read_text())
    failed = {f["key"].split("/")[0] for f in metrics["failures"]}
    assert failed == {"B00006HOLL"} and len(metrics["failures"]) == 1
    assert metrics["n_queries"] == 9 - len(metrics["failures"])
    # One failure shape everywhere: {key, kind, message, attempts}, listed in the report too.
    failure = metrics["failures"][0]
    assert failure["kind"] == "rerank_failed" and failure["message"].startswith("rerank failed")
    assert failure["attempts"] >= 1
    report = (tmp_path / "run/report.html").read_text()
    assert "Failures" in report and failure["key"] in report
    write_rules(broken=False)
    second = personalens(*args)
    assert second.returncode == 0, second.stderr
    metrics = json.loads((tmp_path / "run/metrics.json").read_text())
    assert metrics["n_queries"] == 9 and metrics["failures"] == []
    # Both sessions' reranker calls are in the manifest's usage, failures counted by kind.
    usage = json.loads((tmp_path / "run/manifest.json").read_text())["usage"]["reranker"]
    assert usage["requests"] >= 9 and usage["prompt_tokens"] > 0 and usage["failures"]


def test_a_run_never_resumes_onto_changed_queries(tmp_path):
    queries = tmp_path / "queries.json"
    queries.write_text(QUERIES.read_text())
    args = ["pqb", "eval", "--queries", queries, "--meta", META, "--out", tmp_path / "run"]
    assert personalens(*args).returncode == 0
    queries.write_text(QUERIES.read_text().replace("mahogany", "maple"))
    result = personalens(*args)
    assert result.returncode == 2 and "different configuration" in result.stderr


def test_an_empty_typo_query_is_bad_input(tmp_path):
    data = json.loads(QUERIES.read_text())
    first = next(iter(data))
    data[first][0]["typo_query"] = ""
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(data))
    result = personalens("pqb", "eval", "--queries", queries, "--meta", META, "--out",
                         tmp_path / "run")
    assert result.returncode == 2 and "typo_query" in result.stderr
    assert result.stderr.count("\n") == 1 and not (tmp_path / "run").exists()


def test_the_llm_reranker_reaches_a_local_server_through_the_endpoint_options(tmp_path):
    """`--retriever rerank-llm:openai/<name>` with `--base-url`: every listwise request goes to
    that server (as to a local vLLM), and its usage is the reranker's in the manifest."""
    with FaultServer(lambda body: '{"ranking": [1, 2]}') as server:
        result = personalens("pqb", "eval", "--queries", QUERIES, "--meta", META, "--retriever",
                             "rerank-llm:openai/local-ranker", "--base-url", server.base_url,
                             "--concurrency", "2", "--no-cache", "--out", tmp_path / "run")
    assert result.returncode == 0, result.stderr
    assert server.requests and {r["model"] for r in server.requests} == {"local-ranker"}
    assert all("Search query:" in r["messages"][-1]["content"] for r in server.requests)
    manifest = json.loads((tmp_path / "run/manifest.json").read_text())
    assert manifest["usage"]["reranker"]["requests"] == len(server.requests)
    metrics = json.loads((tmp_path / "run/metrics.json").read_text())
    assert metrics["n_queries"] == 9 and metrics["failures"] == []


def _report_entries(run_dir) -> list[dict]:
    """The report browser's embedded entries as {title, facets, fields} (every entry, not only
    the first page), read back from report.html."""
    page = (run_dir / "report.html").read_text()
    data = json.loads(page.split('class="qb-data">', 1)[1].split("</script>", 1)[0])
    words = data["words"]
    return [{"title": title,
             "facets": {words[tags[i]]: words[tags[i + 1]] for i in range(0, len(tags), 2)},
             "fields": [(words[fields[i]], fields[i + 1]) for i in range(0, len(fields), 2)]}
            for title, _, tags, fields in data["entries"]]


def test_a_pair_entry_shows_queries_typos_rankings_with_titles_and_verdicts():
    from personalens.lenses.pqb.report_page import browser_entries

    hostile = "<script>alert('x')</script> amp"
    titles = {"gold1": "Tan guitar\nstore: Harmonia", "other": hostile, "gold2": "Sony cord"}
    a = {**_record("i/u1", "i", 2, None, None, has_random=False), "asin": "gold1",
         "top_clean": ["other", "gold1"], "top_typo": ["other"], "top_random_typo": None}
    b = {**_record("i/u2", "i", None, None, None, has_typo=False, has_random=False),
         "asin": "gold1", "top_clean": ["other"], "top_typo": None, "top_random_typo": None}
    released = {("i", "u1"): {"typo_edits": [{"word": "the", "typed": "teh",
                                              "kind": "transposition", "source": "reused"}]},
                ("i", "u2"): {"typo_skipped": "the user has no observed typos"}}
    failed = {"key": "j/u3", "parent_asin": "j", "asin": "gold2", "uid": "u3",
              "status": "failed", "syntax_query": "a sony cord", "typo_query": "a sonny cord",
              "random_typo_query": None, "rank_clean": 1, "top_clean": ["gold2"],
              "rank_random_typo": None, "top_random_typo": None,
              "ranking_errors": {"typo": "rerank failed after 3 attempts"},
              "error": {"kind": "rerank_failed", "message": "rerank failed after 3 attempts",
                        "attempts": 1}}
    items = browser_entries(ItemRecords.from_lines([a, b, failed], EvalRecord), titles, released)
    assert items.total == 2 and [e.title for e in items.entries] == ["item j · u3 (failed)",
                                                                      "item i"]
    _, pair = items.entries
    fields = dict(pair.fields)
    assert fields["gold item"] == "gold1 · Tan guitar"
    assert fields["u1 · clean query (rank 2)"] == (
        "the guitar\nhit@K: 1 no, 5 yes, 10 yes, 20 yes\ntop 2:\n"
        f" 1. other · {hostile}\n 2. gold1 · Tan guitar  ← gold")
    assert fields["u1 · typo query (rank >20)"] == (
        "teh guitar\ntyped as: the → teh (transposition, reused)\n"
        f"hit@K: 1 no, 5 no, 10 no, 20 no\ntop 1:\n 1. other · {hostile}")
    assert fields["u2 · typo query"] == "none: the user has no observed typos"
    assert "u2 · clean query (rank >20)" in fields and "u1 · random-typo query" not in str(fields)
    assert fields["pair verdict (clean queries)"].splitlines() == [
        "flip@1: same (u1 miss, u2 miss)", "flip@5: flips (u1 hit, u2 miss)",
        "flip@10: flips (u1 hit, u2 miss)", "flip@20: flips (u1 hit, u2 miss)"]
    assert pair.facets == {"flip@1": "same", "flip@10": "flips", "typo hurt": "yes (hit@10 lost)"}
    # The failed query: the ranking it did get, the one it did not, and the error.
    entry = items.entries[0]
    fields = dict(entry.fields)
    assert fields["u3 · clean query (rank 1)"].endswith(" 1. gold2 · Sony cord  ← gold")
    assert fields["u3 · typo query (failed)"] == (
        "a sonny cord\nnot ranked: rerank failed after 3 attempts")
    assert fields["failure"] == "rerank_failed: rerank failed after 3 attempts"
    assert entry.facets["flip@1"] == "failed"


def test_the_report_browser_shows_titles_and_a_failed_querys_partial_exchange(tmp_path):
    rules = tmp_path / "rules.json"
    # Queries mentioning Sony (item B00006HOLL's user) get a ranking naming no candidate.
    rules.write_text(json.dumps({"rules": [{"pattern": "Search query: (?![^\\n]*Sony)",
                                            "reply": '{"ranking": [1]}'}],
                                 "default": '{"ranking": [99]}'}))
    out = tmp_path / "run"
    result = personalens("pqb", "eval", "--queries", QUERIES, "--meta", META, "--retriever",
                         f"rerank-llm:scripted:{rules}", "--out", out)
    assert result.returncode == 3, result.stderr
    entries = _report_entries(out)
    failed = [e for e in entries if e["facets"]["flip@1"] == "failed"]
    assert [e["title"] for e in failed] == ["item B00006HOLL · AEHWA3JAG4KD3GCOLZRRHDRB77AQ "
                                            "(failed)"]
    fields = dict(failed[0]["fields"])
    meta = {json.loads(x)["parent_asin"]: json.loads(x) for x in META.read_text().splitlines()}
    assert fields["gold item"] == f"B00006HOLL · {meta['B00006HOLL']['title']}"
    clean = fields["AEHWA3JAG4KD3GCOLZRRHDRB77AQ · clean query (failed)"]
    assert clean.startswith("Could I get a silver product from Sony")
    assert "not ranked: rerank failed" in clean
    assert fields["failure"].startswith("rerank_failed: rerank failed")
    # A pair: both users' queries with their rankings' titles, the gold marked where found.
    pair = next(e for e in entries if e["title"] == "item B00004UE2D")
    text = "\n".join(t for _, t in pair["fields"])
    assert "I need to find a tan mahogany guitar" in text and "ltan mahogwny" in text
    assert f"B00004UE2D · {meta['B00004UE2D']['title']}  ← gold" in text
    assert "flip@1: " in dict(pair["fields"])["pair verdict (clean queries)"]


def test_a_report_with_nothing_scored_says_so_instead_of_drawing_empty_plots():
    from personalens.lenses.pqb.analysis import summarise
    from personalens.lenses.pqb.metrics import PqbMetrics
    from personalens.lenses.pqb.report_page import report_sections
    from personalens.report import HtmlReport

    report = HtmlReport("pqb")
    report_sections(report, PqbMetrics.model_validate(
        {**summarise([]), "retriever": "bm25", "failures": []}), "bm25")
    page = report.render()
    assert "<img" not in page
    assert "Flip rate vs K: nothing scored" in page
    assert "Clean vs typo Hit@K: nothing scored" in page
