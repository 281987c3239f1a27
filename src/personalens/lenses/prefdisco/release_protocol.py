"""What the target is told under `--protocol release` (the default): the release's structure
and content in our own words.

Every condition opens with the user asking for help with the task (the problem and its
options). Baseline has no system prompt. Oracle's system prompt describes the user and gives
each preference with its value, its importance and its justification, and says the answer is
evaluated on how well it fits them. Discovery's system prompt asks the target to learn the
user's background, goals and preferences with one or two clarifying questions per turn before
answering, in the `###ACTION###` wire format; after the dialogue a separate final prompt asks
for the complete answer now, fitted to what was learned, and that answer is the one scored.
Under `--correctness rules` an `ANSWER:` line is asked for at the end of the baseline and
oracle request and of the final prompt; under `--correctness judge` (the default, the
release's) none is: a judge reads the answer. docs/prefdisco.md lists every difference.
"""

from personalens.lenses.prefdisco.problems import Problem
from personalens.lenses.prefdisco.protocol import problem_text, render_persona, with_answer_line
from personalens.models.completion import Message

_FORMAT = ("Reply in this format every turn:\n"
           "###ACTION###: ask_question or final_answer\n"
           "###RESPONSE###: your clarifying question, or your full answer")
# fixed_N only asks: the final prompt follows its last question.
_ASK_FORMAT = ("Reply in this format every turn:\n"
               "###ACTION###: ask_question\n"
               "###RESPONSE###: your clarifying question(s)")
FINAL_PROMPT = ("From this conversation you should now know the user's preferences. Give your "
                "complete final answer to the original task, shaped to those preferences: "
                "how well your explanation fits them is what you will be evaluated on, so "
                "that is your main goal.")


def opening(problem: Problem, answer_line: bool = True) -> Message:
    """The user's first message: the task, then (for a single-turn answer checked by the
    rules) the ANSWER-line instruction."""
    text = f"Could you help me with this task?\n\n{problem_text(problem)}"
    return {"role": "user", "content": with_answer_line(text, problem, answer_line)}


def baseline_messages(problem: Problem, answer_line: bool = True) -> list[Message]:
    """No system prompt: the task alone."""
    return [opening(problem, answer_line)]


def oracle_messages(problem: Problem, persona: dict | str, preferences: dict[str, dict],
                    answer_line: bool = True) -> list[Message]:
    """The user and every preference (value, importance, justification) up front."""
    system = ("You are a helpful assistant writing an explanation personalised to the user who "
              f"asks you for help. Who the user is:\n{render_persona(persona)}\n\n"
              "What they want from this answer, each with how much it matters to them "
              "(importance) and why:\n" + preference_details(preferences) + "\n\n"
              "Answer in the way these preferences ask: how well your explanation fits them "
              "is what you will be evaluated on, so that is your main goal.")
    return [{"role": "system", "content": system}, opening(problem, answer_line)]


def discovery_messages(problem: Problem, questions: int, exact: bool,
                       answer_line: bool = True) -> list[Message]:
    """A new user: ask first (exactly `questions` questions with `exact`), then answer. The
    dialogue never asks for an ANSWER: line (`answer_line` is the final prompt's to ask)."""
    if exact:
        ask = (f"You must ask exactly {questions} clarifying question turn(s) about the "
               "user's background, goals and preferences before you give your final answer; "
               "ask one or two questions per turn that will help you tailor your answer.")
    else:
        ask = ("Before you solve the user's task, first find out about their background, "
               "goals and preferences: start with one or two clarifying questions that will "
               "help you tailor your answer, and do not give the full answer until you know "
               "enough to personalise it. Each turn, decide whether to ask for more "
               "information or to answer; when you ask, ask one or two questions.")
    system = (f"You are a helpful assistant. {ask} Keep a natural, curious and respectful tone: "
              "lead the conversation towards learning about the user without interrogating "
              f"them.\n\n{_ASK_FORMAT if exact else _FORMAT}")
    return [{"role": "system", "content": system}, opening(problem, answer_line=False)]


def final_prompt(problem: Problem, answer_line: bool = True) -> str:
    """What the user says after the dialogue to get the answer that is scored."""
    return with_answer_line(FINAL_PROMPT, problem, answer_line)


def with_final_prompt(dialogue: list[Message], problem: Problem,
                      answer_line: bool = True) -> list[Message]:
    """The dialogue and the final prompt whose answer is scored: a user message of its own
    after the target's answer turn, or added to the user's last reply when the budget ran out
    (no two user messages in a row)."""
    prompt = final_prompt(problem, answer_line)
    if dialogue[-1]["role"] == "user":
        last = dialogue[-1]
        return [*dialogue[:-1], {"role": "user", "content": f"{last['content']}\n\n{prompt}"}]
    return [*dialogue, {"role": "user", "content": prompt}]


def preference_details(preferences: dict[str, dict]) -> str:
    """Each preference: its value, what it is about, its importance and its justification."""
    def one(name: str, p: dict) -> str:
        parts = [("about", p.get("description")), ("importance", p.get("local_importance")),
                 ("why", p.get("justification"))]
        return "\n".join([f"- {name}: {p.get('value')}",
                          *[f"  {label}: {value}" for label, value in parts if value is not None]])
    return "\n".join(one(name, p) for name, p in preferences.items())
