"""Writing one session with the model: personal sessions must reveal their fact, noise none.

A personal session whose text does not contain its answer item after a retry gets one plain
sentence that does (recorded as `revealed_by: "fallback"`), so every queried item is revealed.
A noise session that leaks a queried value after a retry is replaced by code-written small talk.
"""

from typing import Literal

import pydantic

from personalens.models import ChatModel, ModelCallFailed, complete_structured
from personalens.population.document_plan import CONVERSATION, PURCHASE, USER_AI, SessionPlan
from personalens.population.reveal_check import leaks, reveals, session_text

SYSTEM = ("You write short, natural, realistic transcripts and records for a synthetic dataset "
          "of private documents. Reply with JSON only.")
Line = pydantic.constr(strip_whitespace=True, min_length=1, max_length=120)


class Turn(pydantic.BaseModel):
    speaker: Literal["A", "B"]
    text: Line


class Conversation(pydantic.BaseModel):
    turns: list[Turn] = pydantic.Field(min_length=4, max_length=5)


class ChatTurn(pydantic.BaseModel):
    role: Literal["user", "assistant"]
    content: Line


class Chat(pydantic.BaseModel):
    turns: list[ChatTurn] = pydantic.Field(min_length=4, max_length=5)


class Item(pydantic.BaseModel):
    title: Line
    description: Line
    brand: Line
    categories: list[Line] = pydantic.Field(min_length=1, max_length=3)


class Purchases(pydantic.BaseModel):
    items: list[Item] = pydantic.Field(min_length=1, max_length=2)


def _humanise(key: str) -> str:
    return key.replace("_", " ")


def _prompt(plan: SessionPlan, person: str, personas: dict[str, str], strict: bool,
            style: str | None = None) -> str:
    reveal = plan.reveal
    if plan.kind == CONVERSATION:
        text = (f"Write a chat between A = {person} ({personas[person]}) and B = {plan.partner} "
                f"({personas.get(plan.partner, '')}). B is A's {plan.relation}. ")
        if reveal is None:
            text += (f"They chat about {plan.topic}. Keep it general: nothing about either "
                     "person's job, family, tastes, plans or life.")
        else:
            speaker = "A" if reveal.subject == person else "B"
            text += (f"Somewhere in the chat, {speaker} lets slip, in passing and without "
                     f"announcing it, this fact about {reveal.subject}: {reveal.description} "
                     f"-> {reveal.value}.")
        if plan.earlier_topic:
            text += f" They may refer back to an earlier chat about {plan.earlier_topic}."
        if plan.news:
            text += (f" They may mention this news from {plan.news['date']}: "
                     f"{plan.news['title']}.")
        if style:
            text += f" A's own lines follow this writing style: {style}"
    elif plan.kind == USER_AI:
        text = f"Write a chat between {person} ({personas[person]}) as 'user' and an AI assistant."
        if reveal is None:
            text += (f" The user asks the assistant to {plan.topic}. Nothing personal about "
                     "the user comes up.")
        else:
            text += (f" While asking for help with something, the user reveals in passing, "
                     f"without stating it as a fact about themself, that {reveal.description} "
                     f"-> {reveal.value}.")
        if style:
            text += f" The user's messages follow this writing style: {style}"
    else:
        text = f"List 1 to 3 products that {person} ({personas[person]}) bought online, "
        text += ("each with title, description, brand and categories. "
                 + ("Ordinary household supplies that say nothing about the buyer."
                    if reveal is None else
                    f"One product shows this about the buyer: {reveal.description} -> "
                    f"{reveal.value}."))
    if strict and reveal is not None:
        text += f' Use the exact words "{reveal.value}" once.'
    return text


_SCHEMAS = {CONVERSATION: Conversation, USER_AI: Chat, PURCHASE: Purchases}


def _to_release(plan: SessionPlan, person: str, parsed: pydantic.BaseModel) -> dict:
    if plan.kind == CONVERSATION:
        names = {"A": person, "B": plan.partner}
        return {"target_name": plan.partner, "conversation": [
            {"role": names[t.speaker], "content": t.text} for t in parsed.turns]}
    if plan.kind == USER_AI:
        return {"user_ai_interaction": [{"role": t.role, "content": t.content}
                                        for t in parsed.turns]}
    return {"purchase_history": [i.model_dump() for i in parsed.items]}


def fallback_line(plan: SessionPlan, person: str) -> str:
    reveal = plan.reveal
    if reveal.attribute == "relationship":
        return f"I'm really glad you're my {reveal.value}."
    # Whoever the fact is about says it (a neighbour's fact comes up in a chat with them).
    return f"By the way, {reveal.value} is part of my {_humanise(reveal.attribute)}."


def add_fallback(plan: SessionPlan, person: str, session: dict) -> dict:
    line = fallback_line(plan, person)
    if plan.kind == CONVERSATION:
        speaker = person if plan.reveal.subject == person else plan.partner
        session["conversation"].append({"role": speaker, "content": line})
    elif plan.kind == USER_AI:
        session["user_ai_interaction"].insert(0, {"role": "user", "content": line})
    else:
        value = plan.reveal.value
        session["purchase_history"].append({
            "title": value, "description": line, "brand": value,
            "categories": [_humanise(plan.reveal.attribute)]})
    return session


def small_talk(plan: SessionPlan, person: str) -> dict:
    """Code-written noise that cannot leak anything: used when a model's noise leaked twice."""
    if plan.kind == CONVERSATION:
        lines = ["Did you see the forecast for the weekend?", "Rain again, apparently.",
                 "At least it should clear up by the evening.", "Let's hope so."]
        speakers = [person, plan.partner]
        return {"target_name": plan.partner, "conversation": [
            {"role": speakers[i % 2], "content": line} for i, line in enumerate(lines)]}
    if plan.kind == USER_AI:
        return {"user_ai_interaction": [
            {"role": "user", "content": "How many grams are in a kilogram?"},
            {"role": "assistant", "content": "There are 1,000 grams in a kilogram."},
            {"role": "user", "content": "And how many kilograms in a tonne?"},
            {"role": "assistant", "content": "A metric tonne is 1,000 kilograms."}]}
    return {"purchase_history": [{"title": "Paper towels, 6 rolls", "description":
                                  "Absorbent two-ply kitchen paper towels.", "brand": "Generic",
                                  "categories": ["Household Supplies"]}]}


async def write_session(model: ChatModel, plan: SessionPlan, person: str,
                        personas: dict[str, str], forbidden: list[str],
                        style: str | None = None) -> dict:
    """The session in release form (without ids) plus how its content was checked.

    `style` is how the person writes; it shapes their own turns (purchases are not typed).

    When the model cannot produce a valid session at all (it keeps breaking the JSON schema),
    code writes it (`model_failed: true`), so one bad reply does not sink a whole community; the
    count is reported with the run's statistics.
    """
    session = small_talk(plan, person)
    for attempt in range(2):
        prompt = _prompt(plan, person, personas, strict=attempt > 0, style=style)
        try:
            parsed, _ = await complete_structured(
                model, [{"role": "system", "content": SYSTEM},
                        {"role": "user", "content": prompt}],
                _SCHEMAS[plan.kind], regenerations=1, temperature=0.8, max_tokens=500,
                seed=2 * attempt)
        except ModelCallFailed as exc:
            if exc.kind != "invalid_structured_output":
                raise  # the endpoint itself failed: a recorded step failure, retried on rerun
            return _written_by_code(plan, person, exc)
        session = _to_release(plan, person, parsed)
        text = session_text(session)
        if plan.reveal is not None and reveals(text, plan.reveal.value, plan.reveal.attribute):
            return {"session": session, "revealed_by": "model"}
        if plan.reveal is None and not leaks(text, forbidden):
            return {"session": session, "revealed_by": None}
    if plan.reveal is not None:
        return {"session": add_fallback(plan, person, session), "revealed_by": "fallback"}
    return {"session": small_talk(plan, person), "revealed_by": None, "replaced_leak": True}


def _written_by_code(plan: SessionPlan, person: str, exc: ModelCallFailed) -> dict:
    session = small_talk(plan, person)
    if plan.reveal is None:
        return {"session": session, "revealed_by": None, "model_failed": str(exc)}
    return {"session": add_fallback(plan, person, session), "revealed_by": "fallback",
            "model_failed": str(exc)}
