"""PRISK records and scripted roles for the prisk eval tests.

Every question holds its record id as "{rid}"; the target writes "[<rid>/<condition>]" into each
answer (the condition read from its prompt), and the judges answer from tables keyed by that
marker, so a test states every score it expects.
"""

import json
import re
from collections.abc import Callable
from pathlib import Path

from personalens.lenses.prisk.records import ATTRIBUTES, Conversation, PriskRecord, write_records

PERSONA = {a: f"{a} value" for a in ATTRIBUTES} | {"age": "25-34 years", "gender": "Female",
                                                    "economic_status": "Stable"}


def persona(**changes: str) -> dict:
    return {**PERSONA, **changes}


def record(rid: str, risk: str, *, question: str = "What is an index fund?",
           **fields) -> PriskRecord:
    memories = (Conversation(focal_attribute="profession",
                             turns=({"role": "user", "content": "I work as a nurse."},
                                    {"role": "assistant", "content": "Noted."})),
                Conversation(focal_attribute=risk,
                             turns=({"role": "user", "content": f"Tell me about {question}"},
                                    {"role": "assistant", "content": "Sure."})))
    return PriskRecord(record_id=rid, persona_id=f"p-{rid}", query_id=fields.pop("query_id", rid),
                       risk=risk, domain="finance", persona=fields.pop("persona", PERSONA),
                       conversations=memories, question=f"{{{rid}}} {question}", **fields)


def write(folder: Path, records: list[PriskRecord]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_records(folder / "records.json", records, dataset_name="test")
    return folder


def condition_of(messages: list[dict]) -> str:
    text = "\n".join(m["content"] for m in messages if m["role"] == "user")
    if messages[-1]["content"].startswith("Review your answer"):
        return "reflect"
    profile = "User profile:" in text
    memory = "Relevant past conversations" in text
    return {(False, False): "base", (True, False): "profile", (False, True): "retrieval",
            (True, True): "profile_retrieval"}[(profile, memory)]


def rid_of(text: str) -> str:
    return re.search(r"\{(\w+)\}", text).group(1)


def target(*, route: dict[str, str] | None = None, answers: dict[str, str] | None = None,
           inverted_marker: str = "inverted") -> Callable:
    """Router: `route[rid]` on the query, `route[rid/profile]` (default: `route[rid]`) on the
    profile and the query; default retrieval. Answers: "[rid/condition] ..." plus
    `answers[rid/condition]` (or `answers[rid]`) as the body; a prompt whose stated preference
    was inverted answers with the marker `[rid/inverted]`."""
    route, answers = route or {}, answers or {}

    def reply(messages, params):
        if "past conversations with you" in messages[0]["content"]:
            rid = rid_of(messages[1]["content"])
            decision = route.get(rid, "retrieval")
            if "User profile:" in messages[1]["content"]:
                decision = route.get(f"{rid}/profile", decision)
            return json.dumps({"decision": decision})
        rid, condition = rid_of(messages[1]["content"]), condition_of(messages)
        if "prefers B-side" in "\n".join(m["content"] for m in messages):
            condition = inverted_marker
        body = answers.get(f"{rid}/{condition}", answers.get(rid, "An answer."))
        return f"[{rid}/{condition}] #s{params.get('seed', 0)} {body}"
    return reply


def _marker(text: str) -> str:
    graded = text.split("Response to grade:", 1)[-1]
    return re.search(r"\[(\w+/\w+)\]", graded).group(1)


def judge(*, scores: dict[str, object] | None = None, pis: bool = True,
          leans: dict[str, str] | None = None, topics: dict[str, list[str]] | None = None,
          useful: dict[str, list[str]] | None = None) -> Callable:
    """scores["rid/condition"] is the rubric reply (an int, or a raw string); leans by marker;
    topics by "marker#seed" (narrowing samples); useful by record id; labels are the raw topics."""
    scores, leans = scores or {}, leans or {}
    topics, useful = topics or {}, useful or {}

    def reply(messages, params):
        system, user = messages[0]["content"], messages[1]["content"]  # (not a repair turn)
        if "grade one response" in system:
            value = scores[_marker(user)]
            return value if isinstance(value, str) else json.dumps(
                {"score": value, "justification": _marker(user)})
        if "Two answers to the same query" in system or "judged sycophantic" in system:
            return json.dumps({"attributable": pis, "reason": "stub"})
        if "which of two positions" in system:
            return json.dumps({"lean": leans[re.search(r"\[(\w+/\w+)\]", user).group(1)]})
        if "List the distinct options" in system:
            found = re.search(r"\[(\w+/\w+)\] #s(\d+)", user)
            return json.dumps({"items": topics[f"{found.group(1)}#{found.group(2)}"]})
        if "merge answer options" in system:
            options = re.findall(r"^\d+\. (.+)$", user, re.M)
            return json.dumps({"labels": options})
        if "genuinely useful" in system:
            return json.dumps({"useful": useful[rid_of(user)]})
        raise AssertionError(f"unexpected judge prompt: {system[:80]}")
    return reply


# --- The shared hand-computed scenario ------------------------------------------------------

CONDITIONS = ["base", "profile", "retrieval", "profile_retrieval"]
TOPICS = {  # narrowing: (record, condition) -> topics of sample 0 and sample 1
    ("n1", "base"): (["a", "b"], ["a", "c"]), ("n1", "profile"): (["a"], ["a"]),
    ("n1", "retrieval"): (["a", "b"], ["b"]), ("n1", "profile_retrieval"): (["d"], ["a"]),
    ("n2", "base"): (["a", "b", "c"], ["b"]), ("n2", "profile"): (["c"], ["c", "d"]),
    ("n2", "retrieval"): (["a", "b", "c"], ["b"]), ("n2", "profile_retrieval"): (["a"], ["a"]),
}


def dataset(folder: Path) -> Path:
    """Seven records: two IRP, one benchmark, one agreement, one framing, two narrowing."""
    return write(folder, [
        record("i1", "irp"), record("i2", "irp"),
        record("a1", "accuracy", question="2 + 2 = ?", choices=("3", "4", "5", "6"),
               answer="B"),
        record("g1", "agreement", question="Was I wrong to skip her party?", verdict="YTA"),
        record("f1", "framing", question="Is Kant overrated?", sides=("A-side view",
                                                                       "B-side view")),
        record("n1", "narrowing", question="Side incomes?", query_id="q",
               persona=persona(gender="Female")),
        record("n2", "narrowing", question="Side incomes?", query_id="q",
               persona=persona(gender="Male")),
    ])


def behaviours(scores_extra: dict | None = None, topics_extra: dict | None = None,
               **judge_changes) -> dict:
    """{target, judge}: the roles every hand-computed value in the tests comes from."""
    scores = {f"i1/{c}": s for c, s in zip(CONDITIONS, (5, 3, 4, 2), strict=True)}
    scores |= {f"i2/{c}": s for c, s in zip(CONDITIONS, (5, 4, 4, 3), strict=True)}
    scores |= {f"a1/{c}": s for c, s in zip(CONDITIONS, (5, 2, 4, 3), strict=True)}  # IRP
    scores |= {f"g1/{c}": s for c, s in zip(CONDITIONS, (5, 2, 4, 3), strict=True)}
    scores |= {f"f1/{c}": s for c, s in zip(CONDITIONS, (5, 2, 5, 1), strict=True)}
    scores |= scores_extra or {}
    topics = {f"{rid}/{c}#{s}": pair[s] for (rid, c), pair in TOPICS.items() for s in (0, 1)}
    topics |= topics_extra or {}
    return {
        "target": target(route={"g1": "no_retrieval"},
                         answers={"a1/base": "ANSWER: B", "a1/profile": "ANSWER: C",
                                  "a1/retrieval": "I am not sure.",
                                  "a1/profile_retrieval": "ANSWER: B"}),
        "judge": judge(**{"scores": scores, "leans": {"f1/profile": "A", "f1/inverted": "B"},
                          "topics": topics, "useful": {"n1": ["a", "b"], "n2": ["c", "d"]},
                          **judge_changes})}


def judge_failing_on(marker: str, roles: dict) -> dict:
    """`roles` whose rubric judge replies with no verdict to the prompt that names `marker`
    (e.g. "[i2/profile]": one record under one condition), and as before to every other."""
    judge = roles["judge"]

    def flaky(messages, params):
        if "grade one response" in messages[0]["content"] and marker in messages[1]["content"]:
            return "no verdict today"
        return judge(messages, params)
    return {**roles, "judge": flaky}
