"""Scripted models that play target, simulated user and judge for the prefdisco tests.

The behaviour of each role is a plain function of the messages, so a test states exactly what
every role says; `install` makes `ModelSettings.load` build these instead of real models.
"""

import json
import re
from collections.abc import Callable

from tests.scripted_roles import Roles, system_of  # noqa: F401  (re-exported for the tests)

# --- The correctness judge (--correctness judge, the default) ---------------------------------

_CHECKED = re.compile(r"\n\n(?:Correct answer|Known solution):\n(.*?)\n\n"
                      r"(?:Model's final response|Answer under review):\n(.*)\n\n(?:Give|Write) ",
                      re.S)


def is_correctness_request(params: dict) -> bool:
    """A request of the correctness judge: its reply schema is the correctness verdict's."""
    schema = (params.get("response_format") or {}).get("json_schema", {})
    return schema.get("name") == "OpenVerdict"


def checked(messages: list[dict]) -> tuple[str, str]:
    """(gold answer, judged response) of a correctness request, in either wording."""
    gold, response = _CHECKED.search(messages[-1]["content"]).groups()
    return gold, response


def correct_as_the_rules_read(messages, params) -> str:
    """A correctness judge that decides as the rules would: correct iff the response's last
    ANSWER: line (without one, the whole response) is the gold answer. Tests about other
    things keep their hand-computed accuracies under either method."""
    gold, response = checked(messages)
    lines = re.findall(r"ANSWER:\s*(.*)", response)
    given = (lines[-1] if lines else response).strip().upper()
    return json.dumps({"justification": f"read {given!r}", "correct": int(given == gold.upper())})


def judging_correctness(criteria: Callable) -> Callable:
    """A judge: `criteria` answers the rubric requests; the correctness requests are answered
    as the rules would (`correct_as_the_rules_read`)."""
    def reply(messages, params):
        if is_correctness_request(params):
            return correct_as_the_rules_read(messages, params)
        return criteria(messages, params)
    return reply


def judge_by_condition(scores: dict[str, dict[str, int]]) -> Callable:
    """Judge: the score of a criterion depends on which marker the graded response holds."""
    @judging_correctness
    def reply(messages, params):
        user = messages[-1]["content"]
        criterion = re.search(r"Criterion: (\S+)", user).group(1)
        response = user.split("<<<", 1)[1]
        marker = re.search(r"\[(\w+)\]", response).group(1)
        return json.dumps({"score": scores[marker][criterion], "justification": f"{marker}"})
    return reply


def target(questions: int = 1, answer: str = "B") -> Callable:
    """Target: baseline and oracle answer at once; discovery asks `questions` then answers."""
    def reply(messages, params):
        system = system_of(messages)
        if "###ACTION###" not in system:
            marker = "oracle" if system else "baseline"  # baseline has no system prompt
            return f"[{marker}] Working it out.\nANSWER: {answer}"
        asked = sum(1 for m in messages if m["role"] == "assistant")
        if asked < questions:
            return ("###ACTION###: ask_question\n###RESPONSE###: Do you like visual diagrams? "
                    "And short steps?")
        return f"###ACTION###: 'final_answer'\n###RESPONSE###: [discovery] Done.\nANSWER: {answer}"
    return reply


def passive_user(messages, params) -> str:
    return "I like visual diagrams and sketches."


# --- Roles that tell instances and conditions apart --------------------------------------------
# The target writes a marker "[<problem id>/<condition>]" into every answer (the problem id is
# the `{id}` in the question, see prefdisco_data.mmlu_row); the judge scores by that marker.

ASK = "###ACTION###: ask_question\n###RESPONSE###: Do you like visual diagrams? And short steps?"


def condition_of(messages: list[dict]) -> str:
    system = system_of(messages)
    if "###ACTION###" not in system:
        return "oracle" if system else "baseline"  # baseline has no system prompt
    fixed = re.search(r"exactly (\d+) (?:clarifying )?question", system)
    return f"fixed_{fixed.group(1)}" if fixed else "discovery"


def problem_id(messages: list[dict]) -> str:
    first = next(m["content"] for m in messages if m["role"] == "user")
    return re.search(r"\{(\w+)\}", first).group(1)


def asked_so_far(messages: list[dict]) -> int:
    """The target's turns so far (a rejected turn and its correction count too)."""
    return sum(1 for m in messages if m["role"] == "assistant")


def scripted_target(questions: int | dict[str, int] = 1, answer: str | dict[str, str] = "B",
                    ask: str | dict[str, str] = ASK) -> Callable:
    """Baseline and oracle answer at once; discovery asks `questions` (per problem id, if a
    dict) then answers; fixed_N asks N then answers. An answer of "" leaves out the ANSWER
    line. Every answer holds the marker [<id>/<condition>]."""
    def pick(value, pid):
        return value.get(pid, next(iter(value.values()))) if isinstance(value, dict) else value

    def reply(messages, params):
        condition, pid = condition_of(messages), problem_id(messages)
        given = pick(answer, pid)
        body = f"[{pid}/{condition}] Working it out." + (f"\nANSWER: {given}" if given else "")
        if condition in ("baseline", "oracle"):
            return body
        budget = int(condition.removeprefix("fixed_")) if condition.startswith("fixed_") \
            else pick(questions, pid)
        if asked_so_far(messages) < budget:
            return pick(ask, pid)
        return f"###ACTION###: 'final_answer'\n###RESPONSE###: {body}"
    return reply


def judge_table(table: dict[str, dict[str, object]]) -> Callable:
    """Judge: table["<id>/<condition>"][criterion] is the reply: an int (a valid verdict),
    a str (the raw reply, as is), or a list of those indexed by the attempt (the seed).
    Correctness requests are answered as the rules would (`correct_as_the_rules_read`)."""
    @judging_correctness
    def reply(messages, params):
        user = messages[-1]["content"]
        criterion = re.search(r"Criterion: (\S+)", user).group(1)
        marker = re.search(r"\[(\w+/\w+)\]", user.split("<<<", 1)[1]).group(1)
        value = table[marker][criterion]
        if isinstance(value, list):
            value = value[min(params.get("seed", 0), len(value) - 1)]
        if isinstance(value, str):
            return value
        return json.dumps({"score": value, "justification": f"{marker} {criterion}"})
    return reply


def user_by_problem(replies: dict[str, str]) -> Callable:
    """Simulated user: the reply for the problem id named in its instructions' question."""
    def reply(messages, params):
        return replies[_user_problem(messages)]
    return reply


def _user_problem(messages: list[dict]) -> str:
    # The user never sees the problem; prefdisco_data.weighted names each persona by its id.
    return re.search(r"- name: (\w+)", system_of(messages)).group(1)


def evaluate(data, out, roles: "Roles", *, judges=("judge",), progress=False, **options):
    """Run the eval in this process with the scripted roles (installed by the caller):
    returns (metrics.json as a dict, records.jsonl as a list, the Outcome)."""
    from personalens.lenses.prefdisco.command import run_eval
    from personalens.lenses.prefdisco.options import EvalOptions

    outcome = run_eval(EvalOptions(
        data=data, out=out, models={"target": "openai/target", "user": "openai/user"},
        judges=[f"openai/{j}" for j in judges], **options),
        progress=progress)
    metrics = json.loads((out / "metrics.json").read_text())
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return metrics, records, outcome


# --- Providers like llama.cpp's: decoding under a grammar, deterministic or not ----------------

class ConstrainedRoles(Roles):
    """Roles whose models decode under a grammar (as llama.cpp does): the request's `grammar`
    reaches each reply's params. `constrained` names the roles that do (default: all);
    `nondeterministic` names those whose provider is not deterministic (a sampling API)."""

    def __init__(self, *, constrained: tuple[str, ...] | None = None,
                 nondeterministic: tuple[str, ...] = (), **behaviours: Callable):
        super().__init__(**behaviours)
        self.constrained = set(behaviours if constrained is None else constrained)
        self.nondeterministic = set(nondeterministic)

    def load(self, spec, **kwargs):
        from personalens.models import ChatModel
        from personalens.models.providers.scripted import ScriptedProvider

        name = spec.split("/")[-1]
        if name not in self.providers:
            provider = ScriptedProvider(default=self._logged(name),
                                        constrains_output=name in self.constrained)
            if name in self.nondeterministic:
                provider.deterministic = False
            self.providers[name] = provider
        return ChatModel(spec, self.providers[name], role=kwargs.get("role", "target"),
                         ledger=kwargs.get("ledger"))
