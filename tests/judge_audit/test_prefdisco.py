"""personalens judge-audit on a scripted prefdisco eval whose two problems have open-ended gold
answers (more than eight words), so the judge scores both the PrefAlign criteria and
correctness. A sound judge passes every probe; a judge that gives 5 and "correct" to anything is
exposed by the probes built for it (the opposite value, an off-topic and an empty answer), while
the reference probe, which it passes, shows why that probe alone would not do. The PrefAlign
headline under each judge is checked against a hand-computed weighted mean."""

import json
import re

import pytest

from personalens.judge_audit.audited_run import open_run
from personalens.judge_audit.options import AuditOptions
from personalens.judge_audit.outputs import run_audit
from personalens.lenses.prefdisco.evaluation import correctness_is_judged
from tests import prefdisco_data as data
from tests.prefdisco_double import Roles, evaluate, passive_user, scripted_target

GOLD = {"o1": "Because ice is less dense than liquid water, so it floats on top.",
        "o2": "Because warm air rises when it is less dense than the cooler air around it."}
# Each user's values share no word with the other's, so an answer to the other problem (written
# for the other user) holds none of this user's value words.
VALUES = {"o1": {"visual": "coloured sketches", "brevity": "numbered steps"},
          "o2": {"visual": "flow charts", "brevity": "terse bullets"}}
# Raw weights; normalised: o1 0.75 / 0.25, o2 0.5 / 0.5.
WEIGHTS = {"o1": {"visual": 0.6, "brevity": 0.2}, "o2": {"visual": 0.5, "brevity": 0.5}}
ANSWERS = {
    "o1/baseline": GOLD["o1"],                                     # visual 1, brevity 1, correct
    "o1/discovery": f"coloured sketches. {GOLD['o1']}",            # 5, 1, correct
    "o1/oracle": "coloured sketches in numbered steps.",            # 5, 5, not correct
    "o2/baseline": f"A flow diagram. {GOLD['o2']}",                # 3 (one word of two), 1, correct
    "o2/discovery": "terse bullets only.",                          # 1, 5, not correct
    "o2/oracle": f"flow charts, bullets kept terse. {GOLD['o2']}",  # 5, 4, correct
}
# The sound judge's scores (visual, brevity) and the weighted mean per answer:
# o1: 1, 0.75 x 5 + 0.25 x 1 = 4, 5; o2: 0.5 x 3 + 0.5 x 1 = 2, 0.5 x 1 + 0.5 x 5 = 3,
# 0.5 x 5 + 0.5 x 4 = 4.5.
SOUND_PREFALIGN = (1 + 4 + 5 + 2 + 3 + 4.5) / 6
SOUND, ALWAYS = "openai/judge", "openai/always"

_PREFERENCE = re.compile(r"(?:This user's preference|What this user prefers): (.*)\n")
_GRADED = re.compile(r"(?:Response to grade|Answer to rate):\n<<<\n(.*?)\n>>>", re.S)
# The correctness judge's request in either wording: (gold answer, the answer judged).
_CHECKED = re.compile(r"(?:Correct answer|Known solution):\n(.*?)\n\n"
                      r"(?:Model's final response|Answer under review):\n(.*)\n\n(?:Give|Write) ",
                      re.S)
OPPOSITE = "the opposite of this: "


def problem(pid: str) -> dict:
    return data.record(pid, {"question": f"{{{pid}}} Why does it happen?", "answer": GOLD[pid]},
                       VALUES[pid], WEIGHTS[pid])


def target():
    """The scripted target (it asks once in discovery), answering ANSWERS[pid/condition]."""
    base = scripted_target(answer="")

    def reply(messages, params):
        text = base(messages, params)
        found = re.search(r"\[(\w+/\w+)\] Working it out\.", text)
        return text if found is None else text.replace("Working it out.",
                                                       ANSWERS[found.group(1)])
    return reply


def sound(messages, params):
    """Correct iff the answer holds the gold; a criterion 5 when the answer holds the user's
    value as written, 4 every word of it in other order, 3 some, 1 none (so an empty answer or
    one written for the other user scores 1); judged against the opposite of the value, the
    other way round (6 - that score)."""
    user = messages[-1]["content"]
    checked = _CHECKED.search(user)
    if checked:
        gold, answer = checked.groups()
        return json.dumps({"justification": "sound",
                           "correct": int(bool(answer.strip()) and gold in answer)})
    value = _PREFERENCE.search(user).group(1)
    graded = _GRADED.search(user).group(1).lower()
    words = value.removeprefix(OPPOSITE).lower().split()
    hits = sum(word in graded for word in words)
    phrase = value.removeprefix(OPPOSITE).lower() in graded
    score = (5 if phrase else 4) if hits == len(words) else 3 if hits else 1
    if value.startswith(OPPOSITE) and graded.strip():
        score = 6 - score
    return json.dumps({"score": score, "justification": "sound"})


def always(messages, params):
    """5 on every criterion, and every answer correct."""
    if _CHECKED.search(messages[-1]["content"]):
        return json.dumps({"justification": "always", "correct": 1})
    return json.dumps({"score": 5, "justification": "always"})


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    root = tmp_path_factory.mktemp("prefdisco-audit")
    monkeypatch = pytest.MonkeyPatch()
    try:
        roles = Roles(target=target(), user=passive_user, judge=sound, always=always)
        roles.install(monkeypatch)
        folder = data.folder(root / "data", {"open": [problem("o1"), problem("o2")]})
        _, records, outcome = evaluate(folder, root / "run", roles)
        assert outcome.complete
        run_calls = len(roles.calls)
        out = root / "audit"
        specs = f"{SOUND},{ALWAYS}"
        run_audit(AuditOptions.parse(run=root / "run", out=out, judges=specs,
                                     models={"judge": specs}), progress=False)
        yield (json.loads((out / "audit.json").read_text()), root / "run", records,
               roles.calls[run_calls:])
    finally:
        monkeypatch.undo()


def _judge(audit, metric, spec) -> dict:
    return audit["metrics"][metric]["judges"][spec]


def test_the_run_judged_correctness_of_the_open_answers(audited):
    _, run, records, _ = audited
    items = {r["key"]: r for r in records if "instance" in r}
    assert len(items) == 6
    # The run's own judge (the sound one) scored each answer as the table says.
    correct = {key.split("/", 1)[1]: r["correctness"]["correct"] for key, r in items.items()}
    assert correct == {"o1/baseline": True, "o1/discovery": True, "o1/oracle": False,
                       "o2/baseline": True, "o2/discovery": False, "o2/oracle": True}
    assert all(r["correctness"]["judged"] for r in items.values())
    opened = open_run(run, None, 0)
    # Open-ended golds: judged under either method.
    assert all(correctness_is_judged(i.problem, "rules")
               for i in opened.judged.instances.values())
    metrics = [v.metric for v in opened.verdicts]
    assert metrics.count("prefalign") == 12 and metrics.count("correctness") == 6


def test_the_sound_judge_passes_every_probe(audited):
    audit = audited[0]
    prefalign, correctness = _judge(audit, "prefalign", SOUND), _judge(audit, "correctness",
                                                                         SOUND)
    figures = prefalign["figures"]
    # The opposite-value probe is asked of the 6 criteria the judge scored 4-5 (one of them 4).
    assert figures["probe.opposite_value"]["value"] == 1.0
    assert figures["probe.opposite_value"]["n"] == 6
    assert figures["probe.off_topic"]["value"] == figures["probe.empty"]["value"] == 1.0
    assert correctness["figures"]["probe.reference"]["value"] == 1.0
    assert correctness["figures"]["probe.reference"]["n"] == 6
    assert correctness["figures"]["probe.off_topic"]["value"] == 1.0
    assert correctness["figures"]["probe.empty"]["value"] == 1.0
    assert prefalign["failed_probes"] == correctness["failed_probes"] == []
    assert "probe.reference" not in figures and "probe.opposite_value" not in \
        correctness["figures"]
    # Every figure on 12 units reaches its threshold; the opposite-value probe's 6 and
    # correctness's 6 units are too few for better than doubtful.
    assert figures["stability.alpha"]["verdict"] == "reliable"
    assert prefalign["verdict"] == correctness["verdict"] == "doubtful"


def test_an_always_top_judge_is_exposed_by_the_probes_built_for_it(audited):
    audit = audited[0]
    figures = _judge(audit, "prefalign", ALWAYS)["figures"]
    assert figures["probe.opposite_value"]["value"] == 0.0
    assert figures["probe.opposite_value"]["n"] == 12  # it scored every criterion 5
    assert figures["probe.opposite_value"]["verdict"] == "unreliable"
    assert figures["probe.off_topic"]["value"] == figures["probe.empty"]["value"] == 0.0
    correctness = _judge(audit, "correctness", ALWAYS)["figures"]
    assert correctness["probe.reference"]["value"] == 1.0  # calling everything correct passes it
    assert correctness["probe.off_topic"]["value"] == 0.0
    assert correctness["probe.empty"]["value"] == 0.0
    assert correctness["probe.off_topic"]["verdict"] == "unreliable"
    for metric in ("prefalign", "correctness"):
        assert _judge(audit, metric, ALWAYS)["verdict"] == "unreliable"
    assert audit["verdict"] == "unreliable"
    failed = _judge(audit, "prefalign", ALWAYS)["failed_probes"]
    opposite = next(p for p in failed if p["family"] == "opposite_value")
    assert (opposite["first"], opposite["score"], opposite["expect"]) == (5, 5, "not_both_high")


def test_the_probes_ask_what_they_say(audited):
    *_, calls = audited
    asked = [messages[-1]["content"] for name, messages, _ in calls if name == "judge"]
    opposite = [t for t in asked if f"preference: {OPPOSITE}" in t]
    # One opposite-value ask per criterion the sound judge scored 4-5, each naming the value.
    values = sorted(_PREFERENCE.search(t).group(1).removeprefix(OPPOSITE) for t in opposite)
    assert values == ["coloured sketches", "coloured sketches", "flow charts", "numbered steps",
                      "terse bullets", "terse bullets"]
    # The value's reason is dropped: it argued for the value.
    assert not any("Why it matters to them" in t for t in opposite)
    assert all("Why it matters to them" in t for t in asked
               if _PREFERENCE.search(t) and OPPOSITE not in t and "Response to grade" in t)
    # Each verdict is asked in the second wording once: 12 criteria, 6 correctness checks.
    assert sum("Answer to rate:" in t for t in asked) == 12
    assert sum("Answer under review:" in t for t in asked) == 6
    # The reference probe gives the gold itself as the answer to check.
    reference = [t for t in asked if _CHECKED.search(t) and
                 _CHECKED.search(t).group(1) == _CHECKED.search(t).group(2)]
    assert len(reference) == 6
    # The off-topic answer is the other problem's (its marker names the other problem).
    off_topic = [t for t in asked if _CHECKED.search(t) and "{o1}" in t
                 and "[o2/" in _CHECKED.search(t).group(2)]
    assert len(off_topic) == 3


def test_the_prefalign_headline_is_the_weighted_mean_under_each_judge(audited):
    audit = audited[0]
    prefalign = audit["metrics"]["prefalign"]
    assert prefalign["run_headline"] == pytest.approx(SOUND_PREFALIGN)
    assert prefalign["judges"][SOUND]["headline"]["value"] == pytest.approx(SOUND_PREFALIGN)
    assert prefalign["judges"][SOUND]["headline"]["n"] == 6  # answers, not criteria
    assert prefalign["judges"][ALWAYS]["headline"]["value"] == pytest.approx(5.0)
    # Correctness: the share judged correct (4 of 6 by the sound judge, all by the other).
    correctness = audit["metrics"]["correctness"]
    assert correctness["judges"][SOUND]["headline"]["value"] == pytest.approx(4 / 6)
    assert correctness["judges"][ALWAYS]["headline"]["value"] == 1.0
    # The two judges disagree on PrefAlign wherever the sound one gave less than 5.
    assert {row["verdict"] for row in prefalign["disagreements"]} == {
        f"open/{key}/prefalign/{criterion}" for key, scores in {
            "o1/baseline": (1, 1), "o1/discovery": (5, 1), "o2/baseline": (3, 1),
            "o2/discovery": (1, 5), "o2/oracle": (5, 4)}.items()
        for criterion, score in zip(("visual", "brevity"), scores, strict=True) if score < 5}


def test_the_headline_weights_are_normalised(audited):
    """Each verdict carries its criterion's normalised weight (o1's 0.6 / 0.2 are 0.75 / 0.25);
    an answer's PrefAlign is the weighted mean of its valid criteria."""
    _, run, _, _ = audited
    opened = open_run(run, None, 0)
    weights = {(v.item, v.criterion): v.context["weight"] for v in opened.verdicts
               if v.metric == "prefalign"}
    assert weights[("open/o1/baseline", "visual")] == pytest.approx(0.75)
    assert weights[("open/o1/baseline", "brevity")] == pytest.approx(0.25)
    assert weights[("open/o2/oracle", "visual")] == pytest.approx(0.5)
    # o1's discovery answer alone: 0.75 x 5 + 0.25 x 1 = 4.
    scored = [(v, v.score) for v in opened.verdicts if v.item == "open/o1/discovery"
              and v.metric == "prefalign"]
    assert opened.judged.headline("prefalign", scored) == pytest.approx(4.0)
    # A criterion without a valid verdict is left out and the others renormalised.
    partial = [(v, None if v.criterion == "brevity" else s) for v, s in scored]
    assert opened.judged.headline("prefalign", partial) == pytest.approx(5.0)
