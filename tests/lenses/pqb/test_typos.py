"""PQB's personal typo model: correcting, learning a profile, injecting typos, and recovery."""

import asyncio
import json
import random
from collections import Counter

import pytest

from personalens.errors import InputError
from personalens.lenses.pqb.options import BuildOptions
from personalens.lenses.pqb.spacy_pipeline import load_pipeline
from personalens.lenses.pqb.spelling_correction import DictionaryCorrector, LLMCorrector
from personalens.lenses.pqb.typo_edits import align, word_spans
from personalens.lenses.pqb.typo_injection import (
    InjectedEdit,
    inject_random,
    inject_typos,
    passes_similarity,
    words_to_edit,
)
from personalens.lenses.pqb.typo_profile import (
    ObservedEdit,
    TypoProfile,
    WordHistory,
    learn_profile,
)
from personalens.models import ChatModel, ModelCallFailed, PermanentModelError, RetryPolicy
from personalens.models.providers.scripted import ScriptedProvider
from personalens.population.typo_habits import KINDS, apply_typos
from tests.conftest import COMMUNITY_0


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline()


def correct(texts: list[str]) -> list[str]:
    return asyncio.run(DictionaryCorrector().correct(texts))


# --- correcting ---------------------------------------------------------------------------

def test_dictionary_corrector_fixes_unknown_words_and_keeps_everything_else():
    typed = ["Teh guitra is amazzing, I realy like it!", "SOUND: grat... nekc is fine."]
    fixed = correct(typed)
    assert fixed == ["The guitar is amazing, I really like it!", "SOUND: great... neck is fine."]
    assert [len(t.split()) for t in fixed] == [len(t.split()) for t in typed]


def test_dictionary_corrector_leaves_names_contractions_and_accents_alone():
    assert correct(["I met Yuval at teh cafe.", "I dno't know, it isn't wierd (dont ask)."]) == [
        # A capitalised word inside a sentence is a name; no accent is added to "cafe".
        "I met Yuval at the cafe.",
        # Apostrophes stay where they were: "dont" would become "don't", a different shape.
        "I don't know, it isn't weird (dont ask).",
    ]


def scripted_model(reply) -> ChatModel:
    return ChatModel("scripted", ScriptedProvider(default=reply),
                     retry=RetryPolicy(max_attempts=2, base_delay=0.0))


def test_llm_corrector_returns_the_reply_without_quotes():
    model = scripted_model(lambda messages, params: f'"{messages[-1]["content"].upper()}"')
    assert asyncio.run(LLMCorrector(model).correct(["teh end", "a b"])) == ["TEH END", "A B"]
    assert model.provider.calls[0][0]["role"] == "system"


def test_llm_corrector_failures_propagate():
    def refuse(messages, params):
        raise PermanentModelError("bad_request", "no")

    with pytest.raises(ModelCallFailed, match="bad_request"):
        asyncio.run(LLMCorrector(scripted_model(refuse)).correct(["teh end"]))
    empty = scripted_model("  ")
    with pytest.raises(ModelCallFailed, match="empty_correction"):
        asyncio.run(LLMCorrector(empty).correct(["teh end"]))
    assert empty.ledger.as_dict()["target"]["failures"] == {"empty_correction": 1}


def test_the_corrector_option_is_the_dictionary_or_a_model():
    assert BuildOptions.parse(out="b").corrector_spec is None  # the offline dictionary
    assert BuildOptions.parse(out="b", corrector="llm:scripted").corrector_spec == "scripted"
    for bad in ("llm:", "aspell"):
        with pytest.raises(InputError, match="unknown spelling corrector"):
            BuildOptions.parse(out="b", corrector=bad)


# --- learning a profile -------------------------------------------------------------------

TYPED = ["I realy like teh guitar, it sounds graet.",
         "The strnigs are cheap and the neck is smoth."]
FIXED = ["I really like the guitar, it sounds great.",
         "The strings are cheap and the neck is smooth."]


def test_learn_profile_counts_kinds_per_eligible_word(nlp):
    profile = learn_profile(TYPED, FIXED, nlp)
    # Eligible (>= 3 letters): really like the guitar sounds great | The strings are cheap and
    # the neck smooth -> 6 + 8 = 14. Typos: teh, graet, strnigs swap; realy, smoth drop a letter.
    assert profile.eligible_words == 14
    assert profile.counts == {**dict.fromkeys(KINDS, 0), "transposition": 3, "deletion": 2}
    assert profile.rates["transposition"] == pytest.approx(3 / 14)
    assert profile.rates["deletion"] == pytest.approx(2 / 14)
    assert profile.word_error_rate == pytest.approx(5 / 14)
    assert profile.history["the"] == WordHistory(3, 1, Counter({"teh": 1}))
    assert profile.history["guitar"] == WordHistory(1, 0, Counter())
    assert profile.error_rate("The") == pytest.approx(1 / 3)
    assert profile.error_rate("never") == 0.0


def test_learn_profile_attaches_the_slot_of_each_typo(nlp):
    # Checked by hand: "really" modifies "like" (advmod), "the" determines "guitar", "great"
    # and "smooth" complement "sounds"/"is" (acomp), "strings" is the subject.
    assert learn_profile(TYPED, FIXED, nlp).edits == [
        ObservedEdit("really", "realy", "advmod", "ADV", ("deletion",)),
        ObservedEdit("the", "teh", "det", "DET", ("transposition",)),
        ObservedEdit("great", "graet", "acomp", "ADJ", ("transposition",)),
        ObservedEdit("strings", "strnigs", "nsubj", "NOUN", ("transposition",)),
        ObservedEdit("smooth", "smoth", "acomp", "ADJ", ("deletion",)),
    ]


def test_learn_profile_aligns_llm_corrections_that_change_words(nlp):
    # "alot" -> "a lot" changes the word count: only the 1:1 replacements are compared; a
    # rewrite needing more than two character edits ("buy" -> "purchase") is not a typo.
    profile = learn_profile(["I realy like teh guitar alot.", "I want to buy it"],
                            ["I really like the guitar a lot.", "I want to purchase it"], nlp)
    assert profile.counts == {**dict.fromkeys(KINDS, 0), "transposition": 1, "deletion": 1}
    assert profile.eligible_words == 7  # really like the guitar lot | want purchase
    assert profile.history["purchase"] == WordHistory(1, 0, Counter())


def test_profile_json_round_trip(nlp):
    profile = learn_profile(TYPED, FIXED, nlp)
    data = json.loads(json.dumps(profile.to_json()))
    assert TypoProfile.from_json(data) == profile
    assert data["rates"]["deletion"] == pytest.approx(2 / 14)


# --- injecting ----------------------------------------------------------------------------

def elsewhere(n: int) -> list[ObservedEdit]:
    """`n` observed typos in a slot no query word fills (so none can be reused)."""
    return [ObservedEdit("zzz", "zz", "intj", "X", ("deletion",))] * n


def make_profile(counts: dict[str, int], eligible_words: int, history=None, edits=()):
    return TypoProfile(eligible_words, {**dict.fromkeys(KINDS, 0), **counts}, history or {},
                       list(edits))


@pytest.mark.parametrize("rate, eligible, expected", [
    (0.05, 8, 1),  # 0.4 expected typos: at least one
    (0.15, 10, 2),  # 1.5 rounds half up
    (0.25, 10, 3),
    (0.50, 10, 3),  # at most 3 words
    (0.90, 2, 2),
    (0.50, 0, 0),  # nothing to misspell
    (0.00, 10, 0),  # no typo history, no typo query
])
def test_words_to_edit(rate, eligible, expected):
    profile = make_profile({"deletion": round(rate * 100)}, 100,
                           edits=elsewhere(round(rate * 100)))
    assert words_to_edit(profile, eligible) == expected


def test_reuses_the_exact_typed_form_of_the_same_word_in_the_same_slot(nlp):
    profile = learn_profile(TYPED, FIXED, nlp)
    for seed in range(5):
        injected = inject_typos("It sounds great.", profile, nlp, random.Random(seed))
        assert injected.text == "It sounds graet."
        assert injected.edits == [InjectedEdit("great", "graet", "transposition", "reused")]


def test_reuses_the_kind_of_a_typo_made_in_the_same_slot(nlp):
    # "salty" is error-prone, so it goes first; in "The soup tastes salty." it is an acomp ADJ.
    # The user dropped a letter of "warm" in that slot; their "salty" typo was in another slot.
    profile = make_profile({"deletion": 1, "transposition": 1}, 20, history={
        "salty": WordHistory(2, 1, Counter({"slaty": 1})),
        "warm": WordHistory(1, 1, Counter({"wam": 1}))}, edits=[
        ObservedEdit("salty", "slaty", "amod", "ADJ", ("transposition",)),
        ObservedEdit("warm", "wam", "acomp", "ADJ", ("deletion",))])
    injected = inject_typos("The soup tastes salty.", profile, nlp, random.Random(0))
    assert injected.text == "The soup tastes salt."
    assert injected.edits == [InjectedEdit("salty", "salt", "deletion", "reused")]


def test_falls_back_to_kinds_sampled_by_the_users_frequencies(nlp):
    # No observed typo shares a slot with any query word: kinds come from counts 3:1.
    profile = make_profile({"repetition": 3, "insertion": 1}, 4, edits=elsewhere(1))
    kinds = Counter()
    for seed in range(400):
        injected = inject_typos("Cheap strings sound bright", profile, nlp, random.Random(seed))
        assert all(e.source == "sampled" for e in injected.edits)
        kinds.update(e.kind for e in injected.edits)
    assert set(kinds) == {"repetition", "insertion"}
    assert kinds["repetition"] / sum(kinds.values()) == pytest.approx(0.75, abs=0.04)


def changed_words(clean: str, typed: str) -> list[tuple[str, str]]:
    return [(c, t) for (*_, c), (*_, t) in zip(word_spans(clean), word_spans(typed),
                                                strict=True) if c != t]


def test_short_words_are_never_touched_and_at_most_three_words_change(nlp):
    profile = make_profile({k: 1 for k in KINDS}, 6, edits=elsewhere(6))  # all misspelt
    query = "I am on my way to buy a new red amp and two old strings for my bass guitar"
    for seed in range(30):
        injected = inject_typos(query, profile, nlp, random.Random(seed))
        changed = changed_words(query, injected.text)
        assert len(changed) == len(injected.edits) == 3
        assert all(len(word) >= 3 for word, _ in changed)
    assert inject_typos("I am on my ox", profile, nlp, random.Random(0)).text == "I am on my ox"


def test_error_prone_words_are_changed_first(nlp):
    profile = make_profile({"repetition": 1}, 20, history={
        "cheap": WordHistory(2, 2, Counter({"cheep": 2})),
        "strings": WordHistory(4, 1, Counter({"strigs": 1})),
        "sound": WordHistory(5, 0, Counter())}, edits=elsewhere(4))
    query = "Cheap strings sound bright and warm"  # 6 eligible x 0.2 = 1.2 -> 1 word
    for seed in range(10):
        assert [e.word for e in inject_typos(query, profile, nlp,
                                             random.Random(seed)).edits] == ["Cheap"]
    profile.edits *= 2  # 0.4 x 6 = 2.4 -> 2 words, in order of the user's error rates
    assert [e.word for e in inject_typos(query, profile, nlp, random.Random(0)).edits] == [
        "Cheap", "strings"]


def test_random_baseline_edits_the_same_number_of_words():
    query = "I am on my way to buy a new red amp and two old strings for my bass guitar"
    kinds = Counter()
    for n in (1, 2, 3):
        for seed in range(50):
            injected = inject_random(query, n, random.Random(seed))
            changed = changed_words(query, injected.text)
            assert len(changed) == len(injected.edits) == n
            assert all(len(word) >= 3 and e.source == "random"
                       for (word, _), e in zip(changed, injected.edits, strict=False))
            assert all(align(e.word, e.typed)[0].kind == e.kind for e in injected.edits)
            kinds.update(e.kind for e in injected.edits)
    assert set(kinds) == set(KINDS)
    assert inject_random("I am on my ox", 2, random.Random(0)).edits == []


def test_similarity_gate_uses_the_given_embedding():
    vectors = {"clean": [1.0, 0.0], "close": [0.95, 0.05], "far": [0.8, 0.6]}

    def embed(texts):
        return [vectors[t] for t in texts]

    assert passes_similarity("clean", "close", embed)  # cosine 0.9986
    assert not passes_similarity("clean", "far", embed)  # cosine 0.8
    assert passes_similarity("clean", "far", embed, threshold=0.78)


# --- recovering known habits --------------------------------------------------------------

def user_written(words: int) -> list[str]:
    path = COMMUNITY_0 / "private_data" / "noise_0.0" / "conversation_data_all.json"
    people = json.loads(path.read_text())
    texts = [u["content"] for person in people for target in person["Data"]
             for session in target["Conversations"] for u in session["conversation"]
             if u["role"] == person["Name"]]
    out, count = [], 0
    while count < words:
        out.append(texts[len(out)])
        count += len(out[-1].split())
    return out


def test_a_synthetic_users_habits_are_recovered(community_0, nlp):
    truth = {"transposition": 0.03, "repetition": 0.02, "adjacent_key": 0.02, "insertion": 0.01}
    clean = user_written(1500)
    rng = random.Random(7)
    typed = [apply_typos(text, truth, rng) for text in clean]
    learnt = learn_profile(typed, correct(typed), nlp).rates
    realised = learn_profile(typed, clean, nlp).rates  # what the generator actually did
    for kind in KINDS:
        assert learnt[kind] == pytest.approx(truth.get(kind, 0.0), abs=0.01), kind
    # About 1,200 eligible words: the realised total is within sampling noise of 8 %, and the
    # corrector's own error on it is smaller still.
    assert sum(realised.values()) == pytest.approx(sum(truth.values()), abs=0.02)
    assert sum(learnt.values()) == pytest.approx(sum(realised.values()), abs=0.01)
