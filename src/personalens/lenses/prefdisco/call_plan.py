"""`prefdisco eval --dry-run`: the (instance, condition) items a run would score and the calls
it would make, counted from what `evaluation.Evaluation` does when every call succeeds first time.

- baseline, oracle: one target answer.
- discovery (at its whole `--turns` budget) and fixed_N (N questions): per question a target turn
  and a simulated-user reply, then one more target call for the answer: the release's final
  prompt, or under `--protocol personalens` the dialogue's answer turn. So q + 1 target calls and
  q user calls under either protocol.
- every scored answer: one call per criterion to each judge (`--judges`), and one to the first
  judge for its correctness: every answer under `--correctness judge`, only an open-ended
  gold's under `--correctness rules`.

Prompt tokens come from the prompts the lens builds (its own functions, with each earlier
question and reply at the length its grammar admits); completion tokens are an answer's cap
(`--max-tokens`), a question's and a reply's grammar bound, and a verdict's bounded JSON.
"""

from collections.abc import Iterator

from personalens.lenses.prefdisco import release_protocol
from personalens.lenses.prefdisco.evaluation import (
    OPEN_VERDICT_JUSTIFICATION_CHARS,
    SINGLE_TURN,
    Item,
    conversation,
    correctness_is_judged,
    correctness_messages,
    fixed_questions,
    plan_items,
    rubric,
    target_messages,
)
from personalens.lenses.prefdisco.options import EvalOptions, refuse_self_judging
from personalens.lenses.prefdisco.release_format import Instance, load, require_valid
from personalens.lenses.prefdisco.simulated_user import user_instructions
from personalens.lenses.prefdisco.turn_grammar import (
    MAX_TURN_CHARS,
    QUESTION_CHARS,
    USER_REPLY_CHARS,
)
from personalens.models.completion import Message
from personalens.models.rubric_judge import JUSTIFICATION_CHARS, judge_prompt
from personalens.runs.call_plan import CHARS_PER_TOKEN, CallPlan, estimated_tokens

# One earlier exchange of a dialogue as the target sees it again: its question, the user's reply.
_EXCHANGE = {"raw": "q" * QUESTION_CHARS, "reply": "r" * USER_REPLY_CHARS}
_VERDICT_TOKENS = estimated_tokens(len('{"score": 5, "justification": ""}') + JUSTIFICATION_CHARS)
_OPEN_VERDICT_TOKENS = estimated_tokens(len('{"justification": "", "correct": 0}')
                                        + OPEN_VERDICT_JUSTIFICATION_CHARS)

Call = tuple[str, int, int]  # (role, prompt characters, completion tokens)


def plan_calls(options: EvalOptions) -> CallPlan:
    """What a run of `options` would call, from the data alone (no model is loaded); refused
    as the run would be."""
    refuse_self_judging(options)
    dataset = load(options.data)
    require_valid(dataset, skip_invalid=options.skip_invalid)
    items = plan_items(dataset.instances, options.all_conditions)
    out = CallPlan("prefdisco eval", len(items), "items (instance x condition)")
    judges = len(options.judges) or 1
    for item in items:
        for role, chars, completion in [*_answer_calls(item, options),
                                        *_judge_calls(item.instance, options, judges)]:
            out.add(role, 1, estimated_tokens(chars), completion)
    out.notes += _notes(options, judges)
    if options.judges:  # every judge's calls are counted under "judge"
        out.specs["judge"] = ",".join(options.judges)
    return out


def _answer_calls(item: Item, options: EvalOptions) -> Iterator[Call]:
    """The target's (and in a dialogue the simulated user's) calls for the scored answer."""
    opening = target_messages(item.instance, item.condition, options.turns, options.protocol,
                              options.asks_answer_line)
    if item.condition in SINGLE_TURN:
        yield "target", _chars(opening), options.max_tokens
        return
    questions = fixed_questions(item.condition) or options.turns
    instance = item.instance
    user_system = len(user_instructions(instance.persona, instance.preferences, options.user))
    for index in range(questions):
        yield "target", _chars(conversation(opening, [_EXCHANGE] * index)), \
            estimated_tokens(QUESTION_CHARS)
        # The user sees its instructions and every question so far, with its earlier replies.
        yield "user", user_system + (index + 1) * QUESTION_CHARS + index * USER_REPLY_CHARS, \
            estimated_tokens(USER_REPLY_CHARS)
    dialogue = conversation(opening, [_EXCHANGE] * questions)
    if options.protocol == "release":
        dialogue = release_protocol.with_final_prompt(dialogue, instance.problem,
                                                      options.asks_answer_line)
    yield "target", _chars(dialogue), options.max_tokens


def _judge_calls(instance: Instance, options: EvalOptions, judges: int) -> Iterator[Call]:
    """The judges' calls on one scored answer, taken to be as long as its cap allows."""
    answer = "a" * (options.max_tokens * CHARS_PER_TOKEN)
    for criterion in instance.criteria:
        chars = _chars(judge_prompt(rubric(instance, criterion), answer))
        for _ in range(judges):
            yield "judge", chars, _VERDICT_TOKENS
    if correctness_is_judged(instance.problem, options.correctness):
        yield "judge", _chars(correctness_messages(instance.problem, answer)), \
            _OPEN_VERDICT_TOKENS


def _chars(messages: list[Message]) -> int:
    return sum(len(m["content"]) for m in messages)


def _notes(options: EvalOptions, judges: int) -> list[str]:
    notes = [f"every call succeeds at its first attempt (--attempts {options.attempts} allows "
             "retries of a broken turn, an empty user reply or an invalid verdict: more calls)"]
    if any(c not in SINGLE_TURN for c in options.all_conditions):
        notes.append(f"discovery counted at its full budget of {options.turns} question(s); a "
                     "target that answers earlier makes fewer target and user calls")
    notes.append(f"answers counted at --max-tokens ({options.max_tokens}) tokens, also as the "
                 "judges read them: an upper bound (a local/ model's answer is capped to fit "
                 f"its context, and its grammar holds a turn to {MAX_TURN_CHARS:,} characters)")
    if judges > 1:
        judged = ("every answer's" if options.correctness == "judge"
                  else "an open-ended answer's")
        notes.append(f"{judges} judges ({', '.join(options.judges)}) each score every "
                     f"criterion; {judged} correctness is judged by the first")
    return notes
