"""Writing one session with the model: personal sessions must reveal their fact, noise none.

A personal session whose text does not contain its answer item after a retry gets one plain
sentence that does (recorded as `revealed_by: "fallback"`), so every queried item is revealed.
A session no question references (noise, or an earlier value of an updated preference) must not
leak any of the person's queried items (`reveal_check.leaked_items`, the check the release's
validator runs): one that does after a retry is replaced by code-written small talk.
"""

from typing import Literal

import pydantic

from personalens.models import ChatModel, ModelCallFailed, complete_structured
from personalens.population.document_plan import CONVERSATION, PURCHASE, USER_AI, SessionPlan
from personalens.population.reveal_check import leaked_items, reveals, session_text

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


_SMALL_TALK = {
    CONVERSATION: (("Did you see the forecast for the weekend?", "Rain again, apparently.",
                    "At least it should clear up by the evening.", "Let's hope so."),
                   ("How has your week been?", "Busy, but fine.", "Same here, mostly.",
                    "Talk soon, then.")),
    USER_AI: ((("user", "How many grams are in a kilogram?"),
               ("assistant", "There are 1,000 grams in a kilogram."),
               ("user", "And how many kilograms in a tonne?"),
               ("assistant", "A metric tonne is 1,000 kilograms.")),
              (("user", "How many minutes are in an hour?"),
               ("assistant", "There are 60 minutes in an hour."),
               ("user", "And how many seconds in a minute?"),
               ("assistant", "There are 60 seconds in a minute."))),
    PURCHASE: (("Paper towels, 6 rolls", "Absorbent two-ply kitchen paper towels.", "Generic",
                "Household Supplies"),
               ("AA batteries, 8 pack", "Alkaline batteries for everyday devices.", "Basics",
                "Electronics")),
}


def _small_talk(plan: SessionPlan, person: str, variant: tuple) -> dict:
    if plan.kind == CONVERSATION:
        speakers = [person, plan.partner]
        return {"target_name": plan.partner, "conversation": [
            {"role": speakers[i % 2], "content": line} for i, line in enumerate(variant)]}
    if plan.kind == USER_AI:
        return {"user_ai_interaction": [{"role": role, "content": line}
                                        for role, line in variant]}
    title, description, brand, category = variant
    return {"purchase_history": [{"title": title, "description": description, "brand": brand,
                                  "categories": [category]}]}


def small_talk(plan: SessionPlan, person: str, queried: list[str] | None = None) -> dict:
    """Code-written noise: used when a model's noise leaked twice. The first variant that names
    none of `queried` (it would take a queried item such as "Household Supplies" to hit one)."""
    variants = [_small_talk(plan, person, v) for v in _SMALL_TALK[plan.kind]]
    return next((v for v in variants if not leaked_items(v, queried or [])), variants[-1])


def clean_fallback(plan: SessionPlan, person: str, session: dict,
                   queried: list[str] | None) -> dict:
    """`session` with the fallback line; on small talk instead when that would leak."""
    revealed = add_fallback(plan, person, session)
    if queried and leaked_items(revealed, queried):
        revealed = add_fallback(plan, person, small_talk(plan, person, queried))
    return revealed


async def write_session(model: ChatModel, plan: SessionPlan, person: str,
                        personas: dict[str, str], queried: list[str] | None,
                        style: str | None = None) -> dict:
    """The session in release form (without ids) plus how its content was checked.

    `queried` is the person's `queried_items` for a session no question references (noise, or an
    outdated value's): the session must leak none of them. It is None for sessions that reveal
    an item a question asks for, which the release's validator does not check for leaks.
    `style` is how the person writes; it shapes their own turns (purchases are not typed).

    When the model cannot produce a valid session at all (it keeps breaking the JSON schema),
    code writes it (`model_failed: true`), so one bad reply does not sink a whole community; the
    count is reported with the run's statistics.
    """
    session = small_talk(plan, person, queried)
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
            return _written_by_code(plan, person, queried, exc)
        session = _to_release(plan, person, parsed)
        shown = plan.reveal is None or reveals(session_text(session), plan.reveal.value,
                                               plan.reveal.attribute)
        if shown and not (queried and leaked_items(session, queried)):
            return {"session": session, "revealed_by": None if plan.reveal is None else "model"}
    if plan.reveal is None:
        return {"session": small_talk(plan, person, queried), "revealed_by": None,
                "replaced_leak": True}
    leaked = bool(queried and leaked_items(session, queried))
    return {"session": clean_fallback(plan, person, small_talk(plan, person, queried) if leaked
                                      else session, queried),
            "revealed_by": "fallback", **({"replaced_leak": True} if leaked else {})}


def _written_by_code(plan: SessionPlan, person: str, queried: list[str] | None,
                     exc: ModelCallFailed) -> dict:
    session = small_talk(plan, person, queried)
    if plan.reveal is None:
        return {"session": session, "revealed_by": None, "model_failed": str(exc)}
    return {"session": clean_fallback(plan, person, session, queried), "revealed_by": "fallback",
            "model_failed": str(exc)}
