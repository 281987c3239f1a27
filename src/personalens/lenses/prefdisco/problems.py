"""The ten source benchmarks' rows, normalised to one problem: question, options, gold answer.

prefq-bench keeps each source's row untouched in `original_problem`; each source spells its
question, choices and gold differently. `normalise` recognises a source by its fields (the
record's task name breaks ties) and says what kind of answer the gold is, which decides how
correctness is checked (`answer_check`).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from personalens.lenses.prefdisco.answer_check import parse_number

AnswerKind = Literal["choice", "numeric", "short", "open"]
_LETTERS = "ABCDEFGHIJ"
OPEN_ANSWER_WORDS = 8  # a gold answer longer than this is judged, not matched


class ProblemShapeError(ValueError):
    """The row has no question or no gold answer in any shape we know."""


@dataclass(frozen=True)
class Problem:
    source: str
    question: str
    options: dict[str, str] = field(default_factory=dict)  # letter -> text
    gold: str = ""
    kind: AnswerKind = "short"


def _letters(texts: list) -> dict[str, str]:
    return {_LETTERS[i]: str(t) for i, t in enumerate(texts)}


def _given_options(row: dict) -> dict[str, str]:
    """The row's `options`: a list (lettered A, B, ...) or a letter -> text object."""
    options = row.get("options") or {}
    if isinstance(options, list):
        return _letters(options)
    return {k: str(v) for k, v in options.items()}


def _math500(row: dict) -> Problem:  # HuggingFaceH4/MATH-500: problem, solution, answer
    return _free("math500", row["problem"], row["answer"])


def _aime(row: dict) -> Problem:
    """AIME sets: the release's gneubig/aime-1983-2024 (Question, Answer, Year, Problem Number),
    others' Problem/Answer or problem/answer; the gold is an integer."""
    question = row.get("Question", row.get("Problem", row.get("problem")))
    return _free("aime", question, row.get("Answer", row.get("answer")))


def _commonsenseqa(row: dict) -> Problem:  # tau/commonsense_qa: choices {label, text}, answerKey
    if not str(row["answerKey"]).strip():
        # The release samples the test split, whose answer keys are all empty.
        raise ValueError("no answerKey: CommonsenseQA's test split has no answer keys; take "
                         "rows from its train or validation split")
    choices = row["choices"]
    options = dict(zip(choices["label"], map(str, choices["text"]), strict=True))
    return Problem("commonsenseqa", row["question"], options, row["answerKey"], "choice")


def _logiqa(row: dict) -> Problem:  # lucasmccabe/logiqa: context, query, options[], index
    question = f"{row['context']}\n\n{row['query']}"
    return Problem("logiqa", question, _letters(row["options"]),
                   _LETTERS[int(row["correct_option"])], "choice")


def _mascqa(row: dict) -> Problem:  # MaScQA: Question (options inline for MCQ), Answer
    question = row.get("Question", row.get("question"))
    gold = str(row.get("Correct Answer", row.get("Answer", row.get("answer"))))
    options = _given_options(row)
    if options or re.fullmatch(r"[A-Da-d]", gold.strip()):
        return Problem("mascqa", question, options, gold.strip().upper(), "choice")
    return _free("mascqa", question, gold)


def _medqa(row: dict) -> Problem:  # GBaker/MedQA-USMLE: options {A: ...}, answer_idx
    options = {k: str(v) for k, v in row["options"].items()}
    return Problem("medqa", row["question"], options, str(row["answer_idx"]), "choice")


def _mmlu(row: dict) -> Problem:  # cais/mmlu: choices[], answer (index)
    return Problem("mmlu", row["question"], _letters(row["choices"]),
                   _LETTERS[int(row["answer"])], "choice")


def _scienceqa(row: dict) -> Problem:  # derek-thomas/ScienceQA: choices[], answer, hint
    question = f"{row['hint']}\n\n{row['question']}" if row.get("hint") else row["question"]
    return Problem("scienceqa", question, _letters(row["choices"]),
                   _LETTERS[int(row["answer"])], "choice")


def _simpleqa(row: dict) -> Problem:  # basicv8vc/SimpleQA: problem, answer (short fact)
    return _free("simpleqa", row["problem"], row["answer"])


def _socialiqa(row: dict) -> Problem:  # allenai/social_i_qa: answerA-C, label "1".."3"
    options = {letter: str(row[f"answer{letter}"]) for letter in "ABC" if f"answer{letter}" in row}
    question = f"{row['context']}\n\n{row['question']}"
    return Problem("socialiqa", question, options, _LETTERS[int(row["label"]) - 1], "choice")


def _generic(row: dict) -> Problem:  # personalens' own shape: question, options?, answer
    options = _given_options(row)
    if options:
        return Problem(row.get("source", "custom"), row["question"], options,
                       str(row["answer"]), "choice")
    return _free(row.get("source", "custom"), row["question"], row["answer"])


def _free(source: str, question, gold) -> Problem:
    """A question without options: numeric, short or open, by the gold's shape."""
    gold = str(gold).strip()
    kind: AnswerKind = ("numeric" if parse_number(gold) is not None
                        else "open" if len(gold.split()) > OPEN_ANSWER_WORDS else "short")
    return Problem(source, str(question), {}, gold, kind)


# (source, fields that identify it, normaliser); the first whose fields a row has wins.
SOURCES: list[tuple[str, tuple[str, ...], Callable[[dict], Problem]]] = [
    ("socialiqa", ("context", "answerA", "label"), _socialiqa),
    ("logiqa", ("context", "query", "options", "correct_option"), _logiqa),
    ("commonsenseqa", ("choices", "answerKey"), _commonsenseqa),
    ("medqa", ("options", "answer_idx"), _medqa),
    ("scienceqa", ("choices", "answer", "lecture"), _scienceqa),
    ("mmlu", ("choices", "answer", "subject"), _mmlu),
    ("math500", ("problem", "solution", "answer"), _math500),
    ("aime", ("Problem", "Answer"), _aime),
    ("aime", ("Question", "Answer", "Problem Number"), _aime),  # the release's AIME rows
    ("simpleqa", ("problem", "answer"), _simpleqa),
    ("mascqa", ("Question",), _mascqa),
    ("custom", ("question", "answer"), _generic),
    # Lowercase AIME rows (with or without a solution) look like SimpleQA or MATH-500 rows, and
    # Question/Answer rows without their year and number look like MaScQA's; these entries are
    # reached only when the task names AIME, which puts them first.
    ("aime", ("problem", "answer"), _aime),
    ("aime", ("Question", "Answer"), _aime),
]
_ALIASES = {"math": "math500", "math-500": "math500", "math_500": "math500",
            "csqa": "commonsenseqa", "social_iqa": "socialiqa", "siqa": "socialiqa",
            "medqa_usmle": "medqa"}


def normalise(row: dict, task: str = "") -> Problem:
    """The row as a Problem; raises ProblemShapeError naming what is missing."""
    if not isinstance(row, dict):
        raise ProblemShapeError("original_problem is not an object")
    named = task.lower().replace(" ", "")  # the source the task names, if any, goes first
    named = _ALIASES.get(named, named)
    candidates = [(n, f, fn) for n, f, fn in SOURCES if n == named] + SOURCES
    for name, fields, normaliser in candidates:
        if all(key in row for key in fields):
            try:
                problem = normaliser(row)
            except (KeyError, IndexError, ValueError, TypeError) as exc:
                raise ProblemShapeError(f"a {name} row with a bad field ({exc!s})") from None
            if not problem.question.strip() or not problem.gold.strip():
                raise ProblemShapeError(f"a {name} row with an empty question or gold answer")
            if problem.options and problem.gold not in problem.options:
                raise ProblemShapeError(f"a {name} row whose gold answer {problem.gold!r} is "
                                        "not one of its options")
            return problem
    raise ProblemShapeError(f"no known source has these fields: {sorted(row)[:8]}")
