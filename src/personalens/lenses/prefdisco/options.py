"""`personalens prefdisco eval` and `build`: their options, declared once (CLI, validation,
identity)."""

from typing import ClassVar, Literal

import pydantic

from personalens.errors import InputError
from personalens.lenses.prefdisco.simulated_user import UserKind
from personalens.models import DEFAULT_MODEL, SPEC_HELP
from personalens.models.role_set import Role, RoleModels
from personalens.models.rubric_judge import ScoringMode
from personalens.runs.options import CommaList, IntList, LensOptions, UserPath, not_identity, option

CONDITIONS = ("baseline", "discovery", "oracle")
# The release's max_tokens for the target (src/config/evaluation_config.yaml).
RELEASE_MAX_TOKENS = 8192
Protocol = Literal["release", "personalens"]
TruncatedAnswers = Literal["exclude", "score"]
# judge: the release's (a judge reads the answer against the gold); rules: the ANSWER: line
# every prompt asks for, checked by rule (a judge only for open-ended golds).
Correctness = Literal["judge", "rules"]
# |PA_oracle - PA_baseline| on the 1-5 scale below which NormAlign is undefined: a gap of 0.01
# would scale a 0.3 discovery gain to 3,000.
NORMALIGN_MIN_GAP = 0.05


class EvalOptions(LensOptions):
    command = "prefdisco eval"
    roles: ClassVar = (
        Role("target", "model", DEFAULT_MODEL, f"Target model (answers): {SPEC_HELP}."),
        Role("user", "user_model", None, "Simulated user's model (the paper's is one fixed "
             "model for every target). Without it, only with --allow-self-judging: the "
             "target's.", fallback="target"),
        Role("judge", "judge", None, "Judge model (the paper's is one fixed model for every "
             "target). Without it (or --judges), only with --allow-self-judging: the "
             "target's.", fallback="target"))

    data: UserPath = option(help="prefq-bench JSONL file, or a folder of them.")
    out: UserPath = not_identity(help="Run directory; rerunning the same command resumes it.")
    conditions: CommaList = option(list(CONDITIONS),
                                   "Comma-separated: baseline, discovery, oracle.")
    fixed_questions: IntList = option(
        [], "Fixed-question ablation, e.g. 2,4,8: condition fixed_<N> asks exactly N.")
    turns: int = option(5, "Question budget in discovery.", ge=1)
    user: UserKind = option("passive", "Simulated user: passive (answers only what is asked) "
                                       "or collaborative.")
    scoring: ScoringMode = option("strict", "strict (default) or release (the released "
                                            "scorer's behaviour, for comparisons).")
    judges: CommaList = option([], "Several judge specs, comma-separated (same endpoint as "
                                   "--judge); reports their agreement.")
    skip_invalid: bool = option(False, "Run the valid records and list the invalid ones.")
    temperature: float = option(0.0, "Target's temperature (0 means 0).", ge=0, le=2)
    user_temperature: float = option(0.4, "Simulated user's temperature.", ge=0, le=2)
    judge_temperature: float = option(0.0, "Judge's temperature.", ge=0, le=2)
    correctness: Correctness | None = option(
        None, "How correctness is decided: judge (the release's: the first judge reads the "
              "answer against the gold answer, and no prompt asks for an ANSWER: line) or "
              "rules (every prompt asks for an ANSWER: line, checked by rule; a judge only "
              "for open-ended golds). Default: judge under --protocol release, rules under "
              "--protocol personalens.")
    correctness_temperature: float = option(
        0.0, "The correctness judge's temperature (the release asks 0 for it).", ge=0, le=2)
    allow_self_judging: bool = option(
        False, "Let the target's model play the simulated user and the judge when "
               "--user-model or --judge is not given (the run then grades the model by itself).")
    attempts: int = option(3, "Tries for a valid judge verdict, a well-formed turn or a "
                              "non-empty user reply.", ge=1)
    protocol: Protocol = option(
        "release", "release (default): the release's prompts, and in discovery a final prompt "
                   "after the dialogue whose answer is scored; personalens: our prompts, the "
                   "answer given in the dialogue is scored.")
    max_tokens: int = option(
        RELEASE_MAX_TOKENS, "Longest target reply, in tokens (the release's 8192); a local "
                            "model's is capped so that prompt and reply fit its context.", ge=16)
    truncated: TruncatedAnswers = option(
        "exclude", "An answer cut off at the token limit: exclude (default) leaves it out of "
                   "accuracy and counts it apart; score grades it like any other.")
    normalign_min_gap: float = option(
        NORMALIGN_MIN_GAP, "NormAlign is undefined for a task whose oracle and baseline "
                           "PrefAlign differ by less than this (1-5 scale).", ge=0)
    models: RoleModels = option(RoleModels(), cli=False)

    @pydantic.model_validator(mode="before")
    @classmethod
    def _correctness_of_protocol(cls, values):
        """The resolved method is the option's value, so the run's identity records it: the
        release judges correctness, personalens' own protocol checks it by rule."""
        if isinstance(values, dict) and values.get("correctness") is None:
            release = values.get("protocol", "release") == "release"
            return {**values, "correctness": "judge" if release else "rules"}
        return values

    @pydantic.model_validator(mode="after")
    def _known_conditions(self) -> "EvalOptions":
        unknown = [c for c in self.conditions if c not in CONDITIONS]
        if unknown or not self.all_conditions:
            raise ValueError(f"--conditions takes {', '.join(CONDITIONS)} (got "
                             f"{', '.join(unknown) or 'none'})")
        if any(n < 1 for n in self.fixed_questions):
            raise ValueError("--fixed-questions takes positive counts")
        return self

    @property
    def all_conditions(self) -> list[str]:
        return [*self.conditions, *[f"fixed_{n}" for n in self.fixed_questions]]

    @property
    def has_dialogue(self) -> bool:
        """Whether a simulated user plays: discovery or a fixed_N is planned."""
        return "discovery" in self.conditions or bool(self.fixed_questions)

    @property
    def asks_answer_line(self) -> bool:
        """Whether the target's prompts ask for an `ANSWER:` line: only the rules read one."""
        return self.correctness == "rules"


def refuse_self_judging(options: EvalOptions) -> None:
    """Bad input (one line) when the simulated user (in a run with a dialogue) or the judge
    would fall back to the target's model without --allow-self-judging: the paper has one
    fixed model play both for every target, and a model grading itself is another measure."""
    falls_back = {"the simulated user": ("--user-model", options.has_dialogue
                                         and options.models["user"] is None),
                  "the judge": ("--judge", options.models["judge"] is None
                                and not options.judges)}
    missing = {role: flag for role, (flag, missing) in falls_back.items() if missing}
    if missing and not options.allow_self_judging:
        raise InputError(f"{' and '.join(missing)} would be the target's own model: give "
                         f"{' and '.join(missing.values())} (the paper uses one fixed model "
                         "for every target), or --allow-self-judging to let the target grade "
                         "itself")


class BuildOptions(LensOptions):
    command = "prefdisco build"
    roles: ClassVar = (Role("generator", "model", DEFAULT_MODEL, f"Generator model: {SPEC_HELP}."),)

    out: UserPath = not_identity(help="Build folder (a run directory; rerunning resumes it). "
                                      "The dataset goes to OUT/data/<task>.jsonl.")
    problems: list[UserPath] = option(
        [], "Source benchmark rows (JSONL; MATH-500, AIME, CommonsenseQA, LogiQA, MaScQA, "
            "MedQA, MMLU, ScienceQA, SimpleQA, SocialIQA). Repeatable; the task is the file's "
            "stem. Default: the ~30 problems shipped with personalens.")
    population: UserPath | None = option(
        None, "A `personalens generate` output: personas come from its profiles.")
    personas: int = option(6, "Personas the generator writes (without --population).", ge=1)
    per_problem: int = option(2, "Personas paired with each problem.", ge=1)
    preferences: int = option(3, "Preferences (and rubric criteria) per instance.", ge=1)
    candidates: int = option(8, "Candidate attributes proposed per instance before selection.",
                             ge=1)
    limit: int | None = option(None, "At most this many problems per task.", ge=1)
    tasks: CommaList = option([], "Only these tasks, comma-separated (the shipped problems': "
                                  "math, commonsense, social, logic, health; or --problems "
                                  "files' stems). Default: every task.")
    seed: int = option(0, "Seed of the persona-problem pairing.")
    temperature: float = option(0.7, "Generator temperature.")
    models: RoleModels = option(RoleModels(), cli=False)
