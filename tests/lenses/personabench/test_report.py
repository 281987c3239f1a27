"""The PersonaBench report's browser shows each item's whole exchange, from the run directory
and the data: question, person, gold, retrieved texts, the prompt sent, the answer and how it
was scored; a failed item shows what it produced before it failed; hostile text stays text."""

import html
import json

import pytest

from personalens.lenses.personabench.answering import answer_messages
from personalens.lenses.personabench.command import EvalOptions, run_eval
from personalens.lenses.personabench.records import PersonabenchRecord
from personalens.lenses.personabench.report_page import browser_entries
from personalens.models import ChatModel
from personalens.models.failures import PermanentModelError
from personalens.models.providers.scripted import ScriptedProvider
from personalens.population.release_reader import load_communities
from personalens.runs import ItemRecords
from tests.conftest import EXAMPLE

SCRIPT = "<script>document.body.setAttribute('data-x','EXEC'+'UTED')</script>"


def _reply(messages, params):
    question = messages[-1]["content"].rsplit("Question:", 1)[-1].strip()
    if question == "What is my job?":
        raise PermanentModelError("bad_request", "the server refused this prompt")
    if question == "How old am I?":
        return f"{SCRIPT} 31"
    return "Porto"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One answered run on the example community (bm25, k 3, noise 0.0) with a scripted
    answerer: it fails 'What is my job?' for good and answers one question with a script."""
    import personalens.models.settings as settings_module

    def load(spec, **kwargs):
        return ChatModel("scripted", ScriptedProvider(default=_reply), role="target",
                         ledger=kwargs["ledger"])

    patch = pytest.MonkeyPatch()
    patch.setattr(settings_module, "load_model", load)
    out = tmp_path_factory.mktemp("pb") / "run"
    try:
        outcome = run_eval(EvalOptions(data=EXAMPLE, out=out, noise=["0.0"], retriever=["bm25"],
                                       k=3, models={"target": "openai/scripted"}),
                           progress=False)
    finally:
        patch.undo()
    assert outcome.metrics.to_json()["n_failed"] == 1  # one person is asked their job
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    return out, records, load_communities(EXAMPLE, ["0.0"])


def _fields(entry) -> dict[str, str]:
    return dict(entry.fields)


def _field(entry, start: str) -> str:
    return next(text for label, text in entry.fields if label.startswith(start))


def _entry_of(run, q_id: str, person: str, *, texts: bool = True):
    _, records, communities = run
    items = browser_entries(ItemRecords.from_lines(records, PersonabenchRecord),
                            communities if texts else ())
    record = next(r for r in records if r["q_id"] == q_id and r["person"] == person)
    key_title = [e for e in items.entries if e.title == record["question"]
                 and record["person"] in _fields(e)["person"]]
    assert len(key_title) == 1
    return record, key_title[0], communities[0].levels["0.0"].sessions[person]


def test_an_answered_entry_holds_the_whole_exchange(run):
    record, entry, sessions = _entry_of(run, "000000003", "Nadia Ferreira")
    fields = _fields(entry)
    by_id = {s.segment_id: s for s in sessions}
    assert fields["question"].startswith("Which city am I living in at the moment?\n")
    assert "Nadia Ferreira" in fields["person"] and "noise 0.0" in fields["person"]
    assert fields["gold answer"] == '"Porto"'
    gold = _field(entry, "gold sessions")
    assert gold.startswith("Porto: 000000000001 (")
    # The retrieved ids in rank order, the gold one marked.
    retrieved = _field(entry, "retrieved by bm25 (top 3)")
    ids = record["retrieved_ids"]
    assert [line.split()[1] for line in retrieved.splitlines()] == ids
    # The prompt is the exact one the model was sent, rebuilt from the data (no session of the
    # example is long enough to be cut) and checked against the record's digest.
    label, prompt = next((k, v) for k, v in entry.fields if k.startswith("prompt sent"))
    assert "rebuilt from the data; identical to the prompt sent" in label and "NOT" not in label
    assert "max_tokens 48" in label
    sent = answer_messages(record["question"], [by_id[i].text for i in ids])
    assert prompt == "── user ──\n" + sent[0]["content"]
    assert all(by_id[i].text in prompt for i in ids)
    assert fields["model answer"] == "Porto"
    score = fields["answer score"]
    assert "gold words: porto\nanswer words: porto\nin both: porto\n" in score
    assert "precision 1.000 (1/1), recall 1.000 (1/1), F1 1.000" in score
    assert _field(entry, "retrieval score").startswith(
        f"recall {record['retrieval']['recall']:.3f}, nDCG {record['retrieval']['ndcg']:.3f}")
    assert "error" not in fields and entry.facets["outcome"] == "correct"


def test_a_failed_answer_shows_the_retrieval_and_the_prompt_it_failed_on(run):
    record, entry, sessions = _entry_of(run, "000000002", "Nadia Ferreira")
    assert record["status"] == "failed" and "prediction" not in record
    fields = _fields(entry)
    by_id = {s.segment_id: s for s in sessions}
    assert entry.facets["outcome"] == "failed"
    assert [line.split()[1] for line in _field(entry, "retrieved by").splitlines()] == \
        record["retrieved_ids"]
    label, prompt = next((k, v) for k, v in entry.fields if k.startswith("prompt sent"))
    assert "rebuilt from the data; identical to the prompt sent" in label and "NOT" not in label
    assert prompt.endswith("Question: What is my job?")
    assert all(by_id[i].text in prompt for i in record["retrieved_ids"])
    assert fields["failure"].startswith("bad_request: ")
    assert "the server refused this prompt" in fields["failure"]
    assert fields["stopped at"].startswith("answering:")
    assert "model answer" not in fields and "answer score" not in fields
    # The fields come in the order of the exchange.
    labels = [label.split(" (")[0] for label, _ in entry.fields]
    assert labels == ["question", "person", "gold answer", "gold sessions", "retrieved by bm25",
                      "retrieval score", "prompt sent to the answering model", "failure",
                      "stopped at"]


def test_without_the_data_the_entry_says_the_texts_are_missing(run):
    _, entry, _ = _entry_of(run, "000000003", "Nadia Ferreira", texts=False)
    assert _field(entry, "prompt sent").startswith("cannot be rebuilt: session(s) ")
    assert "not in the loaded data" in _field(entry, "retrieved by")


def test_a_retrieval_only_entry_shows_each_retrieved_text_and_long_ones_are_cut(run):
    _, records, communities = run
    record = next(r for r in records if r["q_id"] == "000000003"
                  and r["person"] == "Nadia Ferreira")
    bare = {k: v for k, v in record.items() if k not in (
        "prompt_sha256", "prediction", "end_to_end", "usage", "cached")}
    by_id = {s.segment_id: s for s in communities[0].levels["0.0"].sessions["Nadia Ferreira"]}
    # 12,000 records: 25M characters / 12,000 entries / 3 sessions = 694 characters each.
    lines = [{**bare, "key": f"{bare['key']}#{i}"} for i in range(12_000)]
    entry = browser_entries(ItemRecords.from_lines(lines, PersonabenchRecord),
                            communities).entries[0]
    retrieved = _field(entry, "retrieved by bm25 (top 3)")
    for rank, segment in enumerate(record["retrieved_ids"], start=1):
        text = by_id[segment].text
        shown = text if len(text) <= 694 else (
            f"{text[:694]}\n[… {len(text) - 694:,} more characters of this session are not "
            f"shown in this report; the retriever indexed all {len(text):,}]")
        assert f"[{rank}] {segment} · {by_id[segment].kind}" in retrieved
        assert shown in retrieved
    assert any(len(by_id[s].text) > 694 for s in record["retrieved_ids"])
    assert "more characters of this session" in retrieved
    assert not any(label.startswith("prompt") for label, _ in entry.fields)


def test_the_report_shows_the_exchange_and_hostile_answers_stay_text(run):
    out, records, _ = run
    page = (out / "report.html").read_text()
    assert SCRIPT not in page and page.count("<script") == 2  # the browser's data and code
    assert html.escape(SCRIPT) in page  # the first page of entries, as text
    data = page.split('class="qb-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data
    entries = json.loads(data)["entries"]
    assert len(entries) == len(records) == 27
    old = next(e for e in entries if e[0] == "How old am I?")
    assert f"{SCRIPT} 31" in old[3]  # the model's answer, exactly, in the embedded data
    failed = [e for e in entries if e[0] == "What is my job?"]
    assert len(failed) == 1 and all(
        any(str(x).startswith("Question: ") or "Question: What is my job?" in str(x)
            for x in e[3]) for e in failed)


def test_a_report_with_nothing_scored_says_so_instead_of_drawing_empty_plots():
    from personalens.lenses.personabench.analysis import summarise
    from personalens.lenses.personabench.metrics import PersonabenchMetrics
    from personalens.lenses.personabench.report_page import report_sections
    from personalens.report import HtmlReport

    report = HtmlReport("pb")
    report_sections(report, PersonabenchMetrics.model_validate(
        summarise([], n_planned=3, answered=False)))
    page = report.render()
    assert "<img" not in page and "Retrieval recall per category: nothing scored." in page
