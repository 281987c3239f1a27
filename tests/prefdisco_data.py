"""Small prefq-bench files for the prefdisco tests, in the release's own format."""

import json
from pathlib import Path

LEVELS = [{"score": 1, "description": "ignores it"}, {"score": 3, "description": "partly"},
          {"score": 5, "description": "fully"}]


def preference(name: str, value: str) -> dict:
    return {"name": name, "description": f"how the user likes {name}", "value_range": "any",
            "value": value, "local_importance": 0.5, "justification": f"{name} matters",
            "type": "personal", "problem_context": "this problem"}


def record(problem_id: str, original: dict, prefs: dict[str, str],
           weights: dict[str, float | None]) -> dict:
    criteria = []
    for name, weight in weights.items():
        criterion = {"preference": name, "description": f"matches {name}", "levels": LEVELS}
        if weight is not None:
            criterion["weight"] = weight
        criteria.append(criterion)
    return {"type": "personalized_problem", "problem_id": problem_id,
            "original_problem": original,
            "persona": {"name": "Ada", "occupation": "nurse"},
            "persona_preferences": {n: preference(n, v) for n, v in prefs.items()},
            "evaluation_rubric": {"evaluation_criteria": criteria}}


MMLU_ROW = {"question": "2 + 2 = ?", "subject": "math", "choices": ["3", "4", "5", "6"],
            "answer": 1}


def write(path: Path, records: list[dict], dataset: str | None = "mmlu") -> Path:
    lines = []
    if dataset is not None:
        lines.append(json.dumps({"type": "metadata", "dataset": dataset}))
    lines += [json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n")
    return path


def two_preferences(problem_id: str = "p1") -> dict:
    return record(problem_id, MMLU_ROW, {"visual": "visual diagrams and sketches",
                                         "brevity": "short concise steps"},
                  {"visual": 0.75, "brevity": 0.25})


def mmlu_row(problem_id: str, answer: int = 1) -> dict:
    """An MMLU row whose question carries `{problem_id}`, so scripted roles can tell it apart."""
    return {"question": f"{{{problem_id}}} 2 + 2 = ?", "subject": "math",
            "choices": ["3", "4", "5", "6"], "answer": answer}


VISUAL = "visual diagrams and sketches"
BREVITY = "short concise steps"
TONE = "warm encouraging tone"


def weighted(problem_id: str, weights: dict[str, float | None], original: dict | None = None
             ) -> dict:
    """A record with the preferences named in `weights` (visual, brevity, tone)."""
    values = {"visual": VISUAL, "brevity": BREVITY, "tone": TONE}
    built = record(problem_id, original or mmlu_row(problem_id),
                   {name: values[name] for name in weights}, weights)
    built["persona"] = {"name": problem_id, "occupation": "nurse"}
    return built


def folder(root: Path, tasks: dict[str, list[dict]]) -> Path:
    """One file per task (its metadata names the task); returns the folder."""
    root.mkdir(parents=True, exist_ok=True)
    for task, records in tasks.items():
        write(root / f"{task}.jsonl", records, dataset=task)
    return root
