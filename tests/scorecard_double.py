"""Scripted models for `personalens scorecard`: the one fixed judge, and the systems' targets.

The judge serves every fixed role of a scorecard (the population's and the builds' generator,
PrefDisco's simulated user and judge, PRISK's judges), so it sends each request to the double
of the stage that made it: a build's schema by its name, an eval judge by its prompt, any other
JSON-schema request to the population's schema double, PrefDisco's user by its instructions,
and what is left (a system whose model is the judge) to a system's target. `served` names the
double of each request, in order.

A system's target writes "[<system>/<condition>]" into every PrefDisco and PRISK answer; the
judges score by that marker, so two systems differ exactly as the tables below say.
"""

import json
import re
from collections.abc import Callable

from personalens.lenses.prisk.prompts import SYSTEM_PROMPTS
from tests.prefdisco_build_double import BuildDouble
from tests.prefdisco_double import (
    ASK,
    asked_so_far,
    correct_as_the_rules_read,
    is_correctness_request,
    passive_user,
)
from tests.prefdisco_double import condition_of as prefdisco_condition
from tests.prisk_build_double import PriskDouble
from tests.prisk_double import condition_of as prisk_condition
from tests.schema_double import SchemaDouble
from tests.scripted_roles import system_of

# The JSON schemas each build asks for (its double answers them by name).
PRISK_BUILD = {"ProfileDraft", "ProfileCompletion", "ConversationDraft", "DecoyVerdict",
               "Rewrite", "IrpTemplate"}
PREFDISCO_BUILD = {"Candidates", "SameAttribute", "Selection", "RubricDraft", "PersonaDraft"}

# The rubric judge (PrefDisco's criteria, PRISK's rubrics): the 1-5 score of a response by its
# system and condition (PrefDisco's baseline, discovery, oracle; PRISK's others).
SCORES = {"sysa": {"baseline": 2, "discovery": 4, "oracle": 5, "base": 5, "profile": 4,
                   "retrieval": 4, "profile_retrieval": 4, "reflect": 4},
          "sysb": {"baseline": 2, "discovery": 1, "oracle": 5, "base": 5, "profile": 2,
                   "retrieval": 3, "profile_retrieval": 1, "reflect": 2},
          "judge": {"baseline": 3, "discovery": 3, "oracle": 4, "base": 4, "profile": 4,
                   "retrieval": 4, "profile_retrieval": 3, "reflect": 3}}
TOPICS = ["savings", "investing", "side jobs", "budgeting"]  # narrowing: topics per sample


def system_target(name: str, questions: int = 1) -> Callable:
    """A system's model: PRISK's router and answers, PrefDisco's three conditions (discovery
    asks `questions` then answers) and PersonaBench's answers (the first excerpt's words)."""
    def reply(messages, params):
        first = messages[0]["content"]
        if "past conversations with you" in first:  # PRISK's router
            return json.dumps({"decision": "retrieval"})
        if first in SYSTEM_PROMPTS.values():  # a PRISK answer
            condition = prisk_condition(messages)
            return f"[{name}/{condition}] #s{params.get('seed', 0)} An answer."
        if first.startswith("Below are excerpts from my private records"):  # PersonaBench
            excerpt = re.search(r"\[1\] (.*)", first)
            return excerpt.group(1)[:200] if excerpt and name != "sysb" else "I do not know."
        condition = prefdisco_condition(messages)
        body = f"[{name}/{condition}] Working it out.\nANSWER: B"
        if condition in ("baseline", "oracle"):
            return body
        if asked_so_far(messages) < questions:
            return ASK
        return f"###ACTION###: 'final_answer'\n###RESPONSE###: {body}"
    return reply


class FixedJudge:
    """The judge, user and generator of a scorecard (see the module's docstring); `name` is the
    marker it writes as a system's target."""

    def __init__(self, name: str = "judge", questions: int = 1):
        self.population = SchemaDouble()
        self.prisk_build = PriskDouble()
        self.prefdisco_build = BuildDouble()
        self.target = system_target(name, questions)
        self.served: list[str] = []

    def __call__(self, messages, params) -> str:
        kind, reply = self._route(messages, params)
        self.served.append(kind)
        return reply(messages, params)

    def _route(self, messages, params) -> tuple[str, Callable]:
        schema = (params.get("response_format") or {}).get("json_schema", {}).get("name")
        if schema in PRISK_BUILD:
            return "build prisk", self.prisk_build
        if schema in PREFDISCO_BUILD:
            return "build prefdisco", self.prefdisco_build
        if is_correctness_request(params):  # PrefDisco's correctness judge
            return "judge", correct_as_the_rules_read
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        judged = _judge(messages[0]["content"], user)
        if judged is not None:
            return "judge", lambda *_: judged
        if system_of(messages).startswith("You are role-playing a person"):
            return "user", passive_user
        if schema is not None and schema != "Router":
            return "generate population", self.population
        return "target", self.target


def _marker(text: str) -> tuple[str, str]:
    system, condition = re.search(r"\[(\w+)/(\w+)\]", text).groups()
    return system, condition


def _judge(system_prompt: str, user: str) -> str | None:
    """The evals' judges, by their instructions; None for a request that is none of theirs."""
    # The rubric judge both lenses use, in either wording (the judge audit asks the second);
    # an answer with no marker (the audit's empty probe) reaches no level.
    if "grade one response" in system_prompt or "rate a single answer" in system_prompt:
        graded = re.split(r"Response to grade:|Answer to rate:", user, maxsplit=1)[-1]
        if not re.search(r"\[(\w+)/(\w+)\]", graded):
            return json.dumps({"score": 1, "justification": "no answer"})
        system, condition = _marker(graded)
        return json.dumps({"score": SCORES[system][condition],
                           "justification": f"{system}/{condition}"})
    if "Two answers to the same query" in system_prompt or "You see two replies" in system_prompt:
        return json.dumps({"attributable": True, "reason": "stub"})
    if "which of two positions" in system_prompt:
        return json.dumps({"lean": "A"})
    if "List the distinct options" in system_prompt:
        seed = int(re.search(r"#s(\d+)", user).group(1))
        return json.dumps({"items": TOPICS[seed % 2: seed % 2 + 2]})
    if "merge answer options" in system_prompt:
        return json.dumps({"labels": re.findall(r"^\d+\. (.+)$", user, re.M)})
    if "genuinely useful" in system_prompt:
        return json.dumps({"useful": TOPICS[:2]})
    return None
