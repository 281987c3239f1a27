"""Writing habits: each person's style and typo rates, typed into their own turns only."""

import json
import random
import re

import pytest

import personalens.population.writing_habits as habits_module
from personalens.lenses.pqb.typo_edits import align
from personalens.population.document_plan import Reveal
from personalens.population.generate import run_generate
from personalens.population.reveal_check import reveals, session_text
from personalens.population.typo_habits import KINDS, eligible
from personalens.population.writing_habits import (
    STYLES,
    draw_habits,
    protected_words,
    type_session,
)
from tests.cli_runner import personalens
from tests.population.test_generate import _options

LEVEL = "0.5"  # the fullest level of _options: it holds every session
FILES = {"conversation": "conversation_data_all.json",
         "user_ai_interaction": "user_ai_interaction_data_all.json",
         "purchase_history": "purchase_history_data_all.json"}


def _released(root) -> dict[tuple[str, str], dict]:
    """(person, segment id) -> the released session, from the fullest level's files."""
    folder = root / "synthetic_data/community_0/private_data" / f"noise_{LEVEL}"
    out = {}
    for kind, name in FILES.items():
        for entry in json.loads((folder / name).read_text()):
            data = entry["Data"]
            if kind == "conversation":
                data = [s for partner in data for s in partner["Conversations"]]
            out.update({(entry["Name"], s["segment_id"]): s for s in data})
    return out


def _clean_and_typed(root):
    """(person, reveal, clean session, released session) for every session of the run."""
    records = {r["key"]: r for r in map(json.loads, (root / "records.jsonl").read_text()
                                        .splitlines())}
    released = _released(root)
    for entry in json.loads((root / "ground_truth/community_0/sessions.json").read_text()):
        person, index = entry["person"], entry["index"]
        clean = records[f"community_0/session/{person}/{index}"]["value"]["session"]
        reveal = Reveal(**entry["reveals"]) if entry["reveals"] else None
        yield person, reveal, clean, released[(person, entry["segment_ids"][LEVEL])]


def _letters(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", text)


def _check_turn(clean: str, typed: str, kind: str, protected: frozenset[str]) -> int:
    """Every eligible unprotected word carries one edit of `kind`; returns how many."""
    # The edits change letters only: spaces, digits and punctuation stay where they were.
    assert re.sub(r"[A-Za-z]", "", clean) == re.sub(r"[A-Za-z]", "", typed)
    checked = 0
    for word, typed_word in zip(_letters(clean), _letters(typed), strict=True):
        if eligible(word) and word.lower() not in protected:
            assert [e.kind for e in align(word, typed_word)] == [kind], (word, typed_word)
            checked += 1
        else:
            assert typed_word == word
    return checked


@pytest.mark.parametrize("code_written", [None, "Write a chat between"])
def test_a_certain_typo_hits_every_eligible_word_the_person_typed_and_nothing_else(
        tmp_path, double, monkeypatch, code_written):
    # Code-written small talk has partner and assistant turns, which must stay clean.
    double["fail_when"] = code_written
    monkeypatch.setattr(habits_module, "typo_rates",
                        lambda rng: {**dict.fromkeys(KINDS, 0.0), "adjacent_key": 1.0})
    assert run_generate(_options(tmp_path / "gen")).complete
    checked = others = 0
    for person, reveal, clean, typed in _clean_and_typed(tmp_path / "gen"):
        protected = protected_words(reveal)
        for key in ("conversation", "user_ai_interaction"):
            for before, after in zip(clean.get(key, []), typed.get(key, []), strict=True):
                if before["role"] in (person, "user"):
                    checked += _check_turn(before["content"], after["content"], "adjacent_key",
                                           protected)
                else:
                    others += 1
                    assert after == before
        for item in typed.get("purchase_history", []):
            assert item in clean["purchase_history"]  # purchases are not typed by the person
        if reveal is not None:  # the fact's words survive, so its question stays answerable
            assert reveals(session_text(typed), reveal.value, reveal.attribute)
    assert checked > 20
    assert (others > 0) == bool(code_written)
    check = personalens("personabench", "validate", tmp_path / "gen" / "synthetic_data")
    assert check.returncode == 0, check.stdout + check.stderr


def test_rates_per_kind_are_met_on_the_persons_turns():
    rates = {**dict.fromkeys(KINDS, 0.0), "deletion": 0.08, "repetition": 0.04,
             "transposition": 0.02}
    words = ("people", "often", "mistype", "longer", "words", "when", "they", "write", "quickly",
             "without", "looking", "back", "over", "their", "message", "before", "sending")
    text_rng = random.Random(0)
    counts = dict.fromkeys(KINDS, 0)
    total = 0
    for i in range(400):
        line = " ".join(text_rng.choice(words) for _ in range(15)) + "."
        session = {"conversation": [{"role": "Ana", "content": line},
                                    {"role": "Ben", "content": line}]}
        typed = type_session(session, "Ana", rates, random.Random(i), frozenset())
        assert typed["conversation"][1] == session["conversation"][1]
        assert session["conversation"][0]["content"] == line  # the input is not modified
        for word, typed_word in zip(line[:-1].split(), typed["conversation"][0]["content"][:-1]
                                    .split(), strict=True):
            total += 1
            for edit in align(word, typed_word):
                counts[edit.kind] += 1
    for kind, rate in rates.items():
        assert counts[kind] / total == pytest.approx(rate, abs=0.012), (kind, counts)


def test_protected_words_cover_the_value_its_synonyms_and_letter_runs():
    assert protected_words(None) == frozenset()
    assert protected_words(Reveal("Ana", "favorite_food", "Pad Thai", "")) == {"pad", "thai"}
    assert protected_words(Reveal("Ana", "gadgets", "PS5 console", "")) == {"ps", "console"}
    sibling = protected_words(Reveal("Ana", "relationship", "sibling", ""))
    assert {"sibling", "brother", "sister"} <= sibling
    session = {"user_ai_interaction": [{"role": "user", "content": "I cook Pad Thai tonight"}]}
    typed = type_session(session, "Ana", {"deletion": 1.0}, random.Random(1),
                         protected_words(Reveal("Ana", "favorite_food", "Pad Thai", "")))
    words = _letters(typed["user_ai_interaction"][0]["content"])
    assert words[2:4] == ["Pad", "Thai"] and words[1] != "cook" and words[4] != "tonight"


def test_habits_are_seeded_distinct_and_within_the_drawn_ranges():
    people = [f"p{i}" for i in range(400)]
    first = draw_habits(7, 0, people)
    assert first == draw_habits(7, 0, people)
    assert first != draw_habits(8, 0, people) and first != draw_habits(7, 1, people)
    # Styles are dealt from a shuffled deck: the first len(STYLES) people all differ.
    assert len({first[p].style for p in people[:len(STYLES)]}) == len(STYLES)
    totals = [sum(first[p].typo_rates.values()) for p in people]
    clean = [t for t in totals if t <= 0.005 + 1e-6]
    assert 0.12 < len(clean) / len(totals) < 0.28
    assert all(0.02 - 1e-4 <= t <= 0.12 + 1e-4 for t in totals if t > 0.005 + 1e-6)
    assert all(set(first[p].typo_rates) == set(KINDS) for p in people)
    off = draw_habits(7, 0, people, typos=False)
    assert all(set(h.typo_rates.values()) == {0.0} for h in off.values())
    assert [h.style for h in off.values()] == [h.style for h in first.values()]


def test_habits_are_recorded_in_the_ground_truth_and_shape_the_prompts(tmp_path, double):
    run_generate(_options(tmp_path / "a"))
    truth = json.loads((tmp_path / "a/ground_truth/community_0/writing_habits.json").read_text())
    prompts = double["model"].provider.default.prompts
    run_generate(_options(tmp_path / "b"))
    again = (tmp_path / "b/ground_truth/community_0/writing_habits.json").read_text()
    assert json.loads(again) == truth
    released = json.loads((tmp_path / "a/synthetic_data/community_0/eval_info/"
                           "eval_info_all.json").read_text())
    assert set(truth) == {p["Name"] for p in released}
    for name, habit in truth.items():
        assert habit["writing_style"] in STYLES and set(habit["typo_rates"]) == set(KINDS)
        own = [p for p in prompts if p.startswith((f"Write a chat between A = {name} ",
                                                   f"Write a chat between {name} "))]
        assert own and all(habit["writing_style"] in p for p in own)
    assert not any(h["writing_style"] in p for p in prompts if "bought online" in p
                   for h in truth.values())
    for path in (tmp_path / "a" / "synthetic_data").rglob("*.json"):
        text = path.read_text()
        assert "typo_rates" not in text and not any(s in text for s in STYLES), path


def test_without_typo_habits_the_release_is_the_clean_text(tmp_path, double):
    run_generate(_options(tmp_path / "gen", typo_habits=False))
    for _, _, clean, typed in _clean_and_typed(tmp_path / "gen"):
        for key in ("conversation", "user_ai_interaction"):
            assert typed.get(key) == clean.get(key)
    truth = json.loads((tmp_path / "gen/ground_truth/community_0/writing_habits.json")
                       .read_text())
    assert all(set(h["typo_rates"].values()) == {0.0} for h in truth.values())


def test_a_rerun_rewrites_typed_data_and_truth_byte_for_byte(tmp_path, double):
    def files():
        return {p.relative_to(tmp_path): p.read_bytes() for folder in
                ("synthetic_data", "ground_truth") for p in (tmp_path / "gen" / folder).rglob("*")
                if p.is_file()}

    run_generate(_options(tmp_path / "gen"))
    first = files()
    run_generate(_options(tmp_path / "gen"))
    assert len(double["model"].provider.calls) == 0
    assert files() == first


def test_the_cli_offers_the_switch():
    result = personalens("generate", "--help", env={"COLUMNS": "200"})
    assert result.returncode == 0 and "--no-typo-habits" in result.stdout
