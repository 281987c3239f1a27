"""A scripted generator and judge for `prisk build`: valid replies to each of its requests.

- Profiles: the drafted age band is the one asked for; a first draft in "18-24 years" is a
  PhD professor (breaks the relational constraints), its redraw a barista.
- Conversations: attribute conversations mention the attribute; a decoy for a question holding
  an `echo` marker first repeats the question (MiniLM cosine ~0.73 to it), then talks about
  something else (~0.1).
- Judge: says a decoy answers its question `answers[marker]` times for a question holding the
  marker (an int, or None for always), quoting the conversation's first assistant turn (or, for
  a marker in `unfounded`, words the conversation does not hold), otherwise no.
- IRP templates: the queries in `template_queries`, in turn.
- Benchmark rewrites: "Hi! Could you help me with this: <question>" (numbers dropped for a
  question holding a `lossy` marker).
"""

import json
import re

from personalens.models import ChatModel
from personalens.models.providers.scripted import ScriptedProvider

_VALID = {  # age band -> (education, category, profession)
    "18-24 years": ("Some college", "Hospitality and personal services", "Barista"),
    "25-34 years": ("Bachelor's degree", "Engineering and technology", "Software developer"),
    "35-44 years": ("Associate degree", "Nursing and allied health", "Registered nurse"),
    "45-54 years": ("Vocational training", "Skilled trades and construction", "Electrician"),
    "55-64 years": ("PhD", "Academia and research", "University Professor"),
    "65+ years": ("Bachelor's degree", "Retired", "Retired teacher"),
}
_HOBBIES = ["birdwatching", "chess", "salsa dancing", "pottery", "marathon running",
            "baking sourdough", "restoring old bikes", "amateur astronomy"]


class PriskDouble:
    def __init__(self, *, echo: tuple[str, ...] = (), answers: dict | None = None,
                 always_violate: bool = False, template_queries: tuple[str, ...] = (),
                 unfounded: tuple[str, ...] = (), lossy: tuple[str, ...] = ()):
        self.echo = echo
        self.lossy = lossy  # benchmark questions whose rewrites drop their numbers
        self.unfounded = unfounded  # questions whose "it answers" verdicts quote nothing real
        self.answers = dict(answers or {})
        self.always_violate = always_violate
        self.template_queries = list(template_queries)
        self.judged: list[str] = []  # the question of each judge call
        self.decoy_prompts: list[str] = []

    def __call__(self, messages, params) -> str:
        schema = params["response_format"]["json_schema"]
        # The first user message: a repair turn after an invalid reply asks for the same thing.
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        return json.dumps(getattr(self, schema["name"].lower())(prompt, schema["schema"]))

    def profiledraft(self, prompt, schema):
        n = int(re.search(r"profile number (\d+)", prompt).group(1))
        band = re.search(r"Age band: (.+?)\.\n", prompt).group(1)
        if self.always_violate or (band == "18-24 years" and "rejected" not in prompt):
            education, category, profession = "PhD", "Academia and research", \
                "University Professor"
        else:
            education, category, profession = _VALID[band]
        hobby = _HOBBIES[n % len(_HOBBIES)]
        return {"age": band, "gender": ["Female", "Male"][n % 2], "education_level": education,
                "marital_status": ["Single", "Married", "Divorced", "Widowed"][n % 4],
                "profession_category": category, "profession": profession,
                "economic_status": ["Stable", "Struggling", "Comfortable"][n % 3],
                "health_status": "Good", "mental_health_status": "Mostly calm",
                "emotional_state": f"The user feels hopeful about {hobby} this year.",
                "preference": f"The user shared that they love {hobby}."}

    def profilecompletion(self, prompt, schema):
        return {name: (spec["enum"][0] if "enum" in spec else f"filled {name}")
                for name, spec in schema["properties"].items()}

    def conversationdraft(self, prompt, schema):
        question = re.search(r'will ask later:\n"(.*?)"\n\n', prompt, re.S)
        if question is None:
            topic = re.search(r"where their (.+?) matters", prompt).group(1)
            return _turns(f"Can you help me with something where my {topic} matters?",
                          "Of course, tell me more about it.")
        self.decoy_prompts.append(prompt)
        text = question.group(1)
        if any(m in text for m in self.echo) and "rejected" not in prompt:
            # MiniLM puts "user: Q\nassistant: Q" at cosine ~0.73 to Q (role labels dilute it).
            return {"turns": [{"role": "user", "content": text},
                              {"role": "assistant", "content": text}]}
        return _turns("I am reorganising my bookshelf this weekend, any tips on sorting?",
                      "Sorting by colour or by author both work; pick what you enjoy.")

    def decoyverdict(self, prompt, schema):
        question = re.search(r'Question:\n"(.*?)"', prompt, re.S).group(1)
        self.judged.append(question)
        conversation = re.search(r"Conversation:\n(.*?)\n\nDoes this", prompt, re.S).group(1)
        for marker, times in self.answers.items():
            if marker in question and (times is None or times > 0):
                if times is not None:
                    self.answers[marker] = times - 1
                # The claim quotes words of the conversation (its first assistant turn),
                # unless the marker asks for a quote the conversation does not hold.
                quote = re.search(r"assistant: (.*)", conversation).group(1)
                if marker in self.unfounded:
                    quote = "the answer is forty-two"
                return {"answers_query": True, "reason": "it states the answer",
                        "evidence": quote}
        return {"answers_query": False, "reason": "it does not address the question",
                "evidence": ""}

    def rewrite(self, prompt, schema):
        """A conversational rewrite; a question holding a `lossy` marker loses its numbers
        (every draft)."""
        question = re.search(r'Benchmark question:\n"(.*?)"\n\nRewrite', prompt, re.S).group(1)
        if any(m in question for m in self.lossy):
            question = re.sub(r"\d+", "some", question)
        return {"question": f"Hi! Could you help me with this: {question}"}

    def irptemplate(self, prompt, schema):
        domain = re.search(r"in the domain '(.+?)'", prompt).group(1)
        query = self.template_queries.pop(0)
        return {"domain": domain, "preference": f"The user mentioned a detail about {domain}.",
                "query": query}


def _turns(user: str, assistant: str) -> dict:
    return {"turns": [{"role": "user", "content": user},
                      {"role": "assistant", "content": assistant},
                      {"role": "user", "content": user},
                      {"role": "assistant", "content": assistant}]}


def double_model(double: PriskDouble, role: str = "generator") -> ChatModel:
    return ChatModel("scripted", ScriptedProvider(default=double), role=role)


class MemorySteps:
    """A step store in memory, for calling the builders outside a run."""

    def __init__(self):
        self.done: dict[str, dict] = {}

    async def get(self, key, compute):
        if key not in self.done:
            self.done[key] = {"value": json.loads(json.dumps(await compute()))}
        return self.done[key]["value"]
