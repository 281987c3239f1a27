"""A scripted generator for `prefdisco build`: valid replies to each of its requests.

Candidate names come from a small fixed pool (so the library sees repeats and near-duplicates);
the selection picks the first candidates named in the prompt; `same` answers the dedup question.
"""

import json
import re

from personalens.models import ChatModel
from personalens.models.providers.scripted import ScriptedProvider

POOL = [("Visual aids", "diagrams and pictures in explanations", "personal"),
        ("Step granularity", "how many intermediate steps are shown", "personal"),
        ("Technical vocabulary", "how much field jargon is used", "expertise"),
        ("Visual aid use", "use of diagrams and pictures in explanations", "personal"),
        ("Worked examples", "concrete examples alongside the method", "personal")]


class BuildDouble:
    def __init__(self, same: bool = True):
        self.same = same
        self.dedup_questions = 0
        self.persona_count = 0

    def __call__(self, messages, params) -> str:
        name = params["response_format"]["json_schema"]["name"]
        prompt = messages[-1]["content"]
        return json.dumps(getattr(self, name.lower())(prompt))

    def candidates(self, prompt):
        return {"dimensions": [{"name": n, "description": d, "type": t} for n, d, t in POOL]}

    def sameattribute(self, prompt):
        self.dedup_questions += 1
        return {"same": self.same}

    def selection(self, prompt):
        names = re.findall(r'"name": "([^"]+)"', prompt)
        return {"preferences": [
            {"name": n, "value": f"likes {n.lower()} a lot", "value_range": "none to a lot",
             "importance": 2 * (i + 1), "justification": "it helps them"}
            for i, n in enumerate(names[:3])]}

    def rubricdraft(self, prompt):
        return {"description": "fit to the preference", "level_1": "not at all",
                "level_3": "partly", "level_5": "fully"}

    def personadraft(self, prompt):
        self.persona_count += 1
        n = re.search(r"person number (\d+)", prompt).group(1)
        return {"name": f"Person {n}", "age": 30 + int(n), "gender": "woman",
                "occupation": ["nurse", "welder", "poet", "chemist"][int(n) % 4],
                "current_city": "Lyon", "education_level": "bachelor's degree",
                "degree_subject": "biology",
                "big_five": {"openness": 4, "conscientiousness": 2, "extraversion": 3,
                             "agreeableness": 5, "neuroticism": 1},
                "domain_expertise": ["first aid"], "backstory": f"Backstory {n}."}


def build_model(double: BuildDouble) -> ChatModel:
    return ChatModel("scripted", ScriptedProvider(default=double), role="generator")
