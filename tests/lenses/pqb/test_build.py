"""`pqb build` end to end: a small synthetic review set, a generated population, the scripted
and the real bundled model, resume, bad options; then `pqb eval --data` and `pqb compare`."""

import json
import signal
from pathlib import Path

import pytest

from personalens.lenses.pqb.candidate_queries import check_candidate
from personalens.population.typo_habits import eligible
from tests.cli_runner import kill_after_records, personalens, start
from tests.pqb_synthetic import META, write_reviews

# The synthetic users' styles are so regular that their Gaussians are tight, and shopping
# queries lie far outside all of them; a wider region than chi2(16) 95% admits some.
GATES = ["--region", "4000", "--min-sentences", "20"]


def _records(folder: Path) -> dict[str, dict]:
    return {r["key"]: r for r in map(json.loads, (folder / "records.jsonl").read_text()
                                     .splitlines())}


def _items(folder: Path) -> dict[str, dict]:
    """Each item's record, with the build's outcome for it (ok or skipped) as `status`."""
    return {k: {**r, "status": r["outcome"]} for k, r in _records(folder).items()
            if k.startswith("item/") and r["status"] == "ok"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("pqb")
    write_reviews(root / "reviews.jsonl")
    out = root / "build"
    result = personalens("pqb", "build", "--reviews", root / "reviews.jsonl", "--meta", META,
                         "--out", out, "--candidates", "templates", *GATES)
    assert result.returncode == 0, result.stderr
    return root, out, result


@pytest.mark.minilm
def test_build_writes_a_dataset_that_keeps_every_constraint(built):
    from personalens.lenses.pqb.spacy_pipeline import load_pipeline

    _, out, result = built
    nlp = load_pipeline()
    queries = json.loads((out / "queries.json").read_text())
    items = {k.removeprefix("item/"): v for k, v in _items(out).items()}
    ok = {a: v for a, v in items.items() if v["status"] == "ok"}
    assert set(queries) == set(ok) and len(ok) >= 3
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["queries"] == 2 * len(ok) == sum(len(v) for v in queries.values())
    assert f"{summary['queries']} queries" in result.stdout
    assert len((out / "corpus.jsonl").read_text().splitlines()) == summary["products"] == 12
    for asin, records in queries.items():
        assert {r["asin"] for r in records} == {asin}
        assert records[0]["uid"] != records[1]["uid"]
        assert {r["uid"] for r in records} <= set(ok[asin]["users"])
        for record in records:
            assert record["syntax_query"] in ok[asin]["kept"]
            assert check_candidate(record["syntax_query"], ok[asin]["terms"], nlp) is None


@pytest.mark.minilm
def test_selected_pairs_pass_the_gates_recomputed_from_the_saved_profiles(built):
    from personalens.lenses.pqb.pair_selection import SelectionOptions, belongs
    from personalens.lenses.pqb.spacy_pipeline import load_pipeline
    from personalens.lenses.pqb.style_profiles import load_profiles

    _, out, _ = built
    nlp = load_pipeline()
    profiles = load_profiles(out / "style")
    options = SelectionOptions(region=4000.0, margin=1.0)
    for item in _items(out).values():
        if item["status"] != "ok":
            continue
        chosen = item["selection"]
        vectors = profiles.vectors(item["kept"], nlp)
        for own, other, index in ((chosen["user_a"], chosen["user_b"], chosen["candidate_a"]),
                                  (chosen["user_b"], chosen["user_a"], chosen["candidate_b"])):
            g_own, g_other = profiles.gaussians[own], profiles.gaussians[other]
            mask = belongs(g_own.mahalanobis_sq(vectors), g_other.mahalanobis_sq(vectors),
                           g_own.log_density(vectors), g_other.log_density(vectors), options)
            assert mask[index]
            # The highest-density eligible candidate for its user.
            densities = g_own.log_density(vectors)
            assert densities[index] == max(densities[mask])


@pytest.mark.minilm
def test_typo_versions_follow_the_rules(built):
    _, out, _ = built
    queries = [q for records in json.loads((out / "queries.json").read_text()).values()
               for q in records]
    typed = [q for q in queries if q["typo_query"]]
    assert typed, "some queries should carry typos"
    for q in typed:
        clean, personal = q["syntax_query"].split(), q["typo_query"].split()
        changed = [(c, t) for c, t in zip(clean, personal, strict=True) if c != t]
        assert 1 <= len(changed) <= 3 and len(changed) == len(q["typo_edits"])
        assert all(eligible(e["word"]) for e in q["typo_edits"])
        # The random baseline edits as many words as the personal version.
        if q["random_typo_query"]:
            assert len(q["random_edits"]) == len(q["typo_edits"])
            assert all(e["source"] == "random" for e in q["random_edits"])
    profiles = json.loads((out / "typo_profiles.json").read_text())
    assert set(profiles) == {"U0_TERSE", "U1_CLAUSAL", "U2_QUESTIONS", "U3_NARRATIVE"}
    # The user who never misspells gets no typo queries.
    assert not [q for q in typed if q["uid"] == "U2_QUESTIONS"]


@pytest.mark.minilm
def test_rerunning_a_finished_build_changes_nothing(built):
    root, out, _ = built
    before = {name: (out / name).read_bytes() for name in ("queries.json", "records.jsonl")}
    result = personalens("pqb", "build", "--reviews", root / "reviews.jsonl", "--meta", META,
                         "--out", out, "--candidates", "templates", *GATES)
    assert result.returncode == 0, result.stderr
    assert {name: (out / name).read_bytes() for name in before} == before


@pytest.mark.minilm
@pytest.mark.slow
def test_a_killed_build_resumes_to_the_same_dataset(built, tmp_path):
    root, out, _ = built
    args = ["pqb", "build", "--reviews", root / "reviews.jsonl", "--meta", META, "--out",
            tmp_path / "b", "--candidates", "templates", *GATES]
    process = start(*args)
    kill_after_records(process, tmp_path / "b/records.jsonl", 6)
    process.wait()
    # The kill landed mid-build: the process died of it, and the build was unfinished.
    assert process.returncode == -signal.SIGKILL, (process.returncode, "the build ended first")
    assert json.loads((tmp_path / "b/manifest.json").read_text())["status"] == "running"
    done = (tmp_path / "b/records.jsonl").read_text().count("\n")
    assert 6 <= done < len(_records(out)), done
    assert not (tmp_path / "b/queries.json").exists()
    result = personalens(*args)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "b/queries.json").read_bytes() == (out / "queries.json").read_bytes()


@pytest.mark.minilm
def test_eval_on_built_data_and_compare(built, tmp_path):
    _, out, _ = built
    for retriever in ("bm25", "minilm"):
        result = personalens("pqb", "eval", "--data", out, "--retriever", retriever, "--out",
                             tmp_path / retriever)
        assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "bm25/metrics.json").read_text())
    records = _records(tmp_path / "bm25")
    queries = [q for v in json.loads((out / "queries.json").read_text()).values() for q in v]
    assert metrics["n_queries"] == len(queries) == len(records)
    assert metrics["n_random_typo"] == sum(q["random_typo_query"] is not None for q in queries)
    with_random = [r for r in records.values() if r["random_typo_query"]]
    for k in ("1", "20"):
        expected = sum(r["rank_random_typo"] is not None and r["rank_random_typo"] <= int(k)
                       for r in with_random) / len(with_random)
        assert metrics["hit"]["random_typo"][k]["value"] == pytest.approx(expected)
    result = personalens("pqb", "compare", tmp_path / "bm25", tmp_path / "minilm", "--out",
                         tmp_path / "cmp")
    assert result.returncode == 0, result.stderr
    comparison = json.loads((tmp_path / "cmp/comparison.json").read_text())
    assert set(comparison["runs"]) == {"bm25", "minilm"}
    assert comparison["metrics"]["bm25"] == metrics
    assert "Flip rate against K per retriever" in (tmp_path / "cmp/report.html").read_text()
    beir = personalens("pqb", "export-beir", "--data", out, "--out", tmp_path / "beir")
    assert beir.returncode == 0, beir.stderr
    exported = len(queries) + sum(bool(q["typo_query"]) + bool(q["random_typo_query"])
                                  for q in queries)
    assert f"12 documents, {exported} queries, {exported} qrels" in beir.stdout
    ids = [json.loads(line)["_id"] for line in (tmp_path / "beir/queries.jsonl").read_text()
           .splitlines()]
    assert sum(i.endswith("/random_typo") for i in ids) == metrics["n_random_typo"]


@pytest.mark.minilm
def test_model_candidates_are_checked_in_code(tmp_path):
    """The scripted model keeps the constraint for two frames and breaks it for the others.

    The first item (most owners, then id) is B00006HOLL, "Sony silver amplifier adapter...".
    """
    write_reviews(tmp_path / "reviews.jsonl")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [
        {"pattern": "relative clause",
         "reply": "1. I need a sony amplifier adapter that has a silver plug."},
        {"pattern": "Start with \\\"I need\\\"",
         "reply": "I need a cheap sony silver amplifier adapter plug."},
        {"pattern": "joined by", "reply": "Query: I want a sony silver amplifier adapter plug."},
    ], "default": "I want a sony amplifier."}))
    out = tmp_path / "b"
    result = personalens("pqb", "build", "--reviews", tmp_path / "reviews.jsonl", "--meta", META,
                         "--out", out, "--model", f"scripted:{rules}", "--max-items", "1",
                         *GATES)
    assert result.returncode == 0, result.stderr
    item = next(iter(_items(out).values()))
    assert item["asin"] == "B00006HOLL"
    assert item["terms"] == ["sony", "silver", "amplifier", "adapter", "plug"]
    reasons = [c["rejected"] for c in item["candidates"]]
    missing = "core term 'silver' appears 0 times"  # the default reply
    assert reasons == ["adds 'cheap'", missing, None, missing, missing, None, missing, missing]
    assert item["candidates"][2]["text"] == ("I need a sony amplifier adapter that has a silver "
                                             "plug.")
    assert item["candidates"][5]["text"] == "I want a sony silver amplifier adapter plug."


@pytest.mark.parametrize("args, message", [
    ([], "give --reviews and --meta"),
    (["--population", "x", "--reviews", "y"], "not both"),
    (["--candidates", "llm"], "--candidates takes 'model' or 'templates' (got 'llm')"),
    (["--corrector", "aspell"], "unknown spelling corrector 'aspell'"),
    (["--model", "nonsense"], "nonsense"),
])
def test_bad_build_options_are_one_line(tmp_path, args, message):
    write_reviews(tmp_path / "reviews.jsonl")
    source = [] if not args or args[0] == "--population" else [
        "--reviews", tmp_path / "reviews.jsonl", "--meta", META]
    result = personalens("pqb", "build", *source, *args, "--out", tmp_path / "out")
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_build_from_a_generated_population_reports_typo_recovery(tmp_path, double):
    from personalens.lenses.pqb.population_source import load_population
    from personalens.population.generate import run_generate
    from tests.population.test_generate import _options

    assert run_generate(_options(tmp_path / "gen")).complete
    source = load_population(tmp_path / "gen")
    out = tmp_path / "b"
    result = personalens("pqb", "build", "--population", tmp_path / "gen", "--out", out,
                         "--candidates", "templates", "--pair-users", "all",
                         "--min-sentences", "3", "--region", "1e9", "--margin", "-1e9",
                         "--covariance", "full")
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["users"] == len(source.histories) and summary["profiled_users"] >= 2
    assert summary["products"] == len(source.products)
    # Learned rates are compared with the hidden truth of every profiled person.
    learned = json.loads((out / "typo_profiles.json").read_text())
    recovery = summary["typo_recovery"]
    assert recovery["users"] == len(set(learned) & set(source.typo_truth)) > 0
    errors = [abs(learned[u]["rates"].get(k, 0.0) - rate)
              for u in set(learned) & set(source.typo_truth)
              for k, rate in source.typo_truth[u].items()]
    assert errors
    # No bound on the error here: the schema double writes letter strings like "bdd" that the
    # dictionary "corrects" into words. tests/lenses/pqb/test_typos.py bounds recovery on real text.
    assert recovery["mean_absolute_error"] == pytest.approx(sum(errors) / len(errors))


@pytest.mark.bundled_model
@pytest.mark.slow
def test_the_bundled_model_writes_candidates_that_code_checks(tmp_path):
    """The real in-process SmolLM2 path: its candidates are recorded with a verdict each, and
    its token usage reaches the manifest."""
    from personalens.lenses.pqb.spacy_pipeline import load_pipeline

    write_reviews(tmp_path / "reviews.jsonl")
    out = tmp_path / "b"
    result = personalens("pqb", "build", "--reviews", tmp_path / "reviews.jsonl", "--meta", META,
                         "--out", out, "--max-items", "1", "--candidates-per-item", "2", *GATES)
    assert result.returncode == 0, result.stderr
    item = next(iter(_items(out).values()))
    nlp = load_pipeline()
    assert len(item["candidates"]) == 2
    for candidate in item["candidates"]:
        assert candidate["rejected"] == check_candidate(candidate["text"], item["terms"], nlp)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["usage"]["generator"]["completion_tokens"] > 0
    if all(c["rejected"] for c in item["candidates"]):
        assert "no candidate kept the 5-core-term constraint" in result.stderr


@pytest.mark.minilm
@pytest.mark.slow
def test_a_failed_correction_is_retried_and_its_typo_versions_filled_in(tmp_path, monkeypatch):
    """While one user's spelling correction fails, the build is incomplete and their queries have
    no typo version (with the reason recorded); the rerun corrects them and adds the versions,
    ending with the same dataset as a build that never failed."""
    import personalens.lenses.pqb.build as build_module
    from personalens.lenses.pqb.amazon_reviews import load_amazon
    from personalens.lenses.pqb.build import run_build
    from personalens.lenses.pqb.options import BuildOptions
    from personalens.lenses.pqb.spelling_correction import DictionaryCorrector
    from personalens.models import ModelCallFailed

    write_reviews(tmp_path / "reviews.jsonl")
    source = load_amazon(tmp_path / "reviews.jsonl", META)
    failing = {"on": True}

    class Flaky(DictionaryCorrector):
        async def correct(self, texts):
            if failing["on"] and texts == source.histories["U3_NARRATIVE"]:
                raise ModelCallFailed("server_error", "HTTP 500", 6)
            return await super().correct(texts)

    monkeypatch.setattr(build_module, "DictionaryCorrector", Flaky)

    def build(out):
        return run_build(BuildOptions(
            reviews=tmp_path / "reviews.jsonl", meta=META, out=out, candidates="templates",
            min_sentences=20, region=4000.0)).metrics.to_json()

    first = build(tmp_path / "b")
    assert not first["complete"]
    assert [f["key"] for f in first["failures"]] == ["correct/U3_NARRATIVE"]
    assert first["typo_skipped_by_reason"]["the user's spelling correction failed"] >= 1
    failing["on"] = False
    second = build(tmp_path / "b")
    assert second["complete"] and "the user's spelling correction failed" not in \
        second["typo_skipped_by_reason"]
    assert second["typo_queries"] > first["typo_queries"]
    assert build(tmp_path / "never-failed")["complete"]
    assert (tmp_path / "b/queries.json").read_bytes() == \
        (tmp_path / "never-failed/queries.json").read_bytes()


def test_an_llm_corrector_is_a_model_of_the_build(tmp_path):
    """--corrector llm:<spec> loads its model with the generator's endpoint, beside the
    generator (none with --candidates templates); the manifest names it."""
    from personalens.lenses.pqb.build import PqbBuild
    from personalens.lenses.pqb.options import BuildOptions

    write_reviews(tmp_path / "reviews.jsonl")
    lens = PqbBuild(BuildOptions(reviews=tmp_path / "reviews.jsonl", meta=META,
                                 out=tmp_path / "b", candidates="templates",
                                 corrector="llm:scripted", min_sentences=20))
    assert lens.identity().models == {"corrector": "scripted"}
    assert lens.roles["corrector"].role == "corrector" and "generator" not in lens.roles
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("args, message", [
    (["--min-sentences", "1000"], "only 0 user(s) have >= 1000 sentences"),
    (["--rank", "20"], "--rank must be at most 16 (got 20)"),
    (["--max-items", "0"], "--max-items must be at least 1"),
])
def test_options_refused_after_parsing_still_write_nothing(tmp_path, args, message):
    write_reviews(tmp_path / "reviews.jsonl")
    result = personalens("pqb", "build", "--reviews", tmp_path / "reviews.jsonl", "--meta", META,
                         "--candidates", "templates", *args, "--out", tmp_path / "out")
    assert result.returncode == 2 and message in result.stderr
    assert result.stderr.count("\n") == 1 and not (tmp_path / "out").exists()


@pytest.mark.minilm
@pytest.mark.slow
def test_the_papers_default_gates_select_pairs_on_varied_writing(tmp_path):
    """PersonaBench's anchor speakers (GPT-4o-written turns, ~1,000-3,500 sentences each) have
    broad style Gaussians: with chi2(16) 26.30 and margin 1 many items get a pair, and every
    recorded selection keeps the gates."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "pqb_default_gates", Path(__file__).parents[3] / "bench/pqb_default_gates.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    summary = bench.build(tmp_path / "b", margin=1.0)
    # How many of the 15 items get a pair depends on the encoder's training trajectory, which
    # differs across CPUs and library versions (14 in one environment, 7 in another, with the
    # same code): the gates must leave pairs for a good share of the items, and every selection
    # must keep them.
    assert summary["profiled_users"] == 10 and summary["items_by_status"]["ok"] >= 5
    for item in _items(tmp_path / "b").values():
        if item["status"] == "ok":
            chosen = item["selection"]
            for side in ("a", "b"):
                assert chosen[f"mahalanobis_sq_{side}"] <= 26.30
                assert chosen[f"rival_mahalanobis_sq_{side}"] > 26.30
                assert chosen[f"log_density_{side}"] - chosen[f"rival_log_density_{side}"] >= 1
