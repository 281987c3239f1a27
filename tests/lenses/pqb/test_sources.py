"""What `pqb build` starts from: Amazon Reviews 2023 files, or a generated population."""

import json
import shutil
from pathlib import Path

import pytest

from personalens.errors import InputError
from personalens.lenses.pqb.amazon_reviews import load_amazon, plain_text
from personalens.lenses.pqb.population_source import load_population, product_id
from personalens.population.generate import run_generate
from tests.population.test_generate import _options
from tests.schema_double import SchemaDouble

FIXTURES = Path(__file__).parents[2] / "fixtures/pqb"
REVIEWS = FIXTURES / "Musical_Instruments.jsonl"
META = FIXTURES / "meta_Musical_Instruments.jsonl"


def test_amazon_histories_are_review_texts_in_time_order_without_markup():
    source = load_amazon(REVIEWS, META)
    assert source.histories == {
        # Same timestamp as nothing else of hers; her reviews come in time, not file, order.
        "U_ALICE": ["Cable\nWorks fine, no hum.", "Second cable\nBought another one.",
                    'Great guitar\nPlays well.\nStays in tune.\nRecommended for "beginners".'],
        # Two reviews at the same time keep the file's order; the empty one (only <br />) goes.
        "U_BOB": ["Nice\nGood & cheap.", "Tuner works."],
        # The review of an item missing from the meta file is skipped.
        "U_CAROL": ["Tuner\nClips on, reads fast. 2 < 3 is fine"],
    }
    assert source.typo_truth == {}
    assert source.origin.endswith("(6 reviews by 3 users), meta_Musical_Instruments.jsonl (3 "
                                  "reviewed items); skipped 1 review(s) whose parent_asin is not "
                                  "in the meta file and 1 empty review(s)")


def test_amazon_products_are_the_reviewed_meta_items_with_their_reviewers():
    products = load_amazon(REVIEWS, META).products
    assert [(p.parent_asin, p.users) for p in products] == [
        ("B00004UE2D", ("U_ALICE", "U_BOB")), ("X0003", ("U_ALICE",)),
        ("X0005", ("U_BOB", "U_CAROL"))]
    guitar = products[0]
    assert guitar.title == "Electric guitar, tan mahogany body, rosewood fingerboard, H pickup"
    assert guitar.meta["store"] == "Harmonia"
    assert guitar.text.splitlines()[:3] == [guitar.title, "Harmonia",
                                            "Musical Instruments Guitars"]


def test_markup_becomes_plain_lines():
    assert plain_text("a<br />b<BR><br/>c") == "a\nb\nc"
    assert plain_text("<p>one</p><p>two <i>three</i></p>") == "one\ntwo three"
    assert plain_text("x &lt; y &amp;&#34;z&#34;  ") == 'x < y &"z"'


@pytest.mark.parametrize("line, message", [
    ('{"user_id": "U", "parent_asin": "X0003", "title": "t", "text": "x", '
     '"timestamp": "yesterday"}', "line 9: field 'timestamp': Input should be a valid integer"),
    ('{"parent_asin": "X0003", "title": "t", "text": "x", "timestamp": 1}',
     "line 9: field 'user_id': Field required"),
    ('{"user_id": "U", "parent_asin": "X0003", "title": null, "text": "x", "timestamp": 1}',
     "line 9: field 'title': Input should be a valid string"),
    ("{not json", "line 9: invalid JSON"),
    ("[1, 2]", "line 9: expected a JSON object"),
])
def test_a_bad_review_line_is_one_line_naming_file_and_line(tmp_path, line, message):
    reviews = tmp_path / "Musical_Instruments.jsonl"
    reviews.write_text(REVIEWS.read_text() + line + "\n")
    with pytest.raises(InputError) as caught:
        load_amazon(reviews, META)
    assert str(caught.value).startswith(f"{reviews} {message}")
    assert "\n" not in str(caught.value)


def test_bad_meta_and_missing_files_are_one_line_errors(tmp_path):
    meta = tmp_path / "meta.jsonl"
    meta.write_text(META.read_text() + META.read_text().splitlines()[0] + "\n")
    with pytest.raises(InputError, match=r"meta.jsonl line 16: duplicate parent_asin B00004UE2D"):
        load_amazon(REVIEWS, meta)
    meta.write_text('{"title": "no id"}\n')
    with pytest.raises(InputError, match=r"line 1: field 'parent_asin' must be a non-empty"):
        load_amazon(REVIEWS, meta)
    with pytest.raises(InputError, match="reviews file not found"):
        load_amazon(tmp_path / "nope.jsonl", META)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(REVIEWS.read_bytes() + b'{"title": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"latin1.jsonl line 9: reviews file is not UTF-8"):
        load_amazon(bad, META)


@pytest.fixture
def population(tmp_path, double, monkeypatch):
    """A generated population where people share household items (one per parity of the prompt's
    length), and the noise chats with an AI are written by code (they must not count as
    anyone's writing)."""
    original = SchemaDouble.__call__

    def shared_supplies(self, messages, params):
        if "Ordinary household supplies" in messages[-1]["content"]:
            shared = f"household supplies {len(messages[-1]['content']) % 2}"
            messages = [*messages[:-1], {**messages[-1], "content": shared}]
        return original(self, messages, params)

    monkeypatch.setattr(SchemaDouble, "__call__", shared_supplies)
    double["fail_when"] = "The user asks the assistant"
    assert run_generate(_options(tmp_path / "gen")).complete
    return tmp_path / "gen"


def _level(root: Path, name: str) -> list[dict]:
    return json.loads((root / "synthetic_data/community_0/private_data/noise_0.5" / name)
                      .read_text())


def _code_written(root: Path) -> set[tuple[str, str]]:
    sessions = json.loads((root / "ground_truth/community_0/sessions.json").read_text())
    return {(s["person"], s["segment_ids"]["0.5"]) for s in sessions if s["model_failed"]}


def _expected_histories(root: Path, skip: set[tuple[str, str]]) -> dict[str, list[str]]:
    """The person's turns per session, sessions in segment id order (the generator numbers
    them in time order), from the fullest level's released files."""
    by_person: dict[str, list[tuple[str, str]]] = {}
    for entry in _level(root, "conversation_data_all.json"):
        person = entry["Name"]
        for partner in entry["Data"]:
            for s in partner["Conversations"]:
                turns = [t["content"] for t in s["conversation"] if t["role"] == person]
                if turns and (person, s["segment_id"]) not in skip:
                    by_person.setdefault(person, []).append((s["segment_id"], "\n".join(turns)))
    for entry in _level(root, "user_ai_interaction_data_all.json"):
        for s in entry["Data"]:
            turns = [t["content"] for t in s["user_ai_interaction"] if t["role"] == "user"]
            if (entry["Name"], s["segment_id"]) not in skip:
                by_person.setdefault(entry["Name"], []).append((s["segment_id"],
                                                                "\n".join(turns)))
    return {f"community_0/{p}": [text for _, text in sorted(texts)]
            for p, texts in by_person.items()}


def test_population_histories_are_the_turns_each_person_typed(population):
    skip = _code_written(population)
    assert skip, "the fixture should have code-written sessions to leave out"
    source = load_population(population)
    assert source.histories == _expected_histories(population, skip)
    assert f"{len(skip)} session(s) written by code left out" in source.origin
    assert not any("How many grams" in text for texts in source.histories.values()
                   for text in texts)


def test_population_products_are_purchases_with_their_buyers(population):
    buyers: dict[str, set[str]] = {}
    skip = _code_written(population)
    for entry in _level(population, "purchase_history_data_all.json"):
        for s in entry["Data"]:
            if (entry["Name"], s["segment_id"]) not in skip:
                for item in s["purchase_history"]:
                    buyers.setdefault(item["title"], set()).add(f"community_0/{entry['Name']}")
    products = load_population(population).products
    assert {p.title: set(p.users) for p in products} == buyers
    assert len(products) >= 2 and max(len(p.users) for p in products) >= 2  # shared items
    for p in products:
        assert p.parent_asin == product_id(p.title) == p.meta["parent_asin"]
        assert len(p.parent_asin) == 10 and list(p.users) == sorted(p.users)
        assert p.text.startswith(f"{p.title}\n{p.meta['store']}\n")
    assert product_id("Paper  Towels ") == product_id("paper towels")


def test_population_typo_truth_comes_from_the_hidden_ground_truth(population):
    habits = json.loads((population / "ground_truth/community_0/writing_habits.json")
                        .read_text())
    source = load_population(population)
    assert source.typo_truth == {f"community_0/{name}": h["typo_rates"]
                                 for name, h in habits.items()}
    assert set(source.typo_truth) == set(source.histories)
    shutil.rmtree(population / "ground_truth")
    without = load_population(population)
    assert without.typo_truth == {}
    # Without the provenance, code-written sessions cannot be told apart and are kept.
    assert any("How many grams" in text for texts in without.histories.values()
               for text in texts)


def test_population_layout_errors_are_one_line(tmp_path):
    with pytest.raises(InputError, match="not a `personalens generate` output folder"):
        load_population(tmp_path)
    info = tmp_path / "synthetic_data/community_0/eval_info"
    info.mkdir(parents=True)
    (info / "eval_info_all.json").write_text("[]")
    with pytest.raises(InputError, match=r"community_0/private_data: expected noise_<ratio>"):
        load_population(tmp_path)
