"""What a generated community looks like in its report: the social graph, a card per person,
sample sessions of each kind with the revealing turns marked, and an outdated value beside
its update.

Everything is static markup built with `report.markup.tag` (text escaped), collapsed in
<details> elements so a population of a thousand people opens at once: a closed community or
card is parsed, not laid out.
"""

from personalens.population.document_plan import CONVERSATION, PURCHASE, USER_AI
from personalens.population.generated_community import GeneratedCommunity, GeneratedSession
from personalens.population.graph_svg import graph_svg
from personalens.population.quality import Quality, is_degenerate_session
from personalens.population.reveal_check import reveal_words, reveals, words
from personalens.population.social_graph import neighbours
from personalens.report import Markup, join, tag

STYLE = """
.community{border:1px solid #ccc;border-radius:6px;margin:1em 0;padding:.3em .8em}
.community>summary{font-size:1.2em;font-weight:600;cursor:pointer}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:.6em}
.card{border:1px solid #ddd;border-radius:6px;padding:.3em .7em;background:#fcfcfc}
.card summary{cursor:pointer}.card .persona{color:#444;font-style:italic}
.card dl{display:grid;grid-template-columns:max-content 1fr;gap:.1em .8em;margin:.4em 0}
.card dt{color:#555}.card dd{margin:0}.card table{font-size:.9em;margin:.4em 0}
.sessions{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:.6em}
.session{border:1px solid #ddd;border-radius:6px;padding:.3em .7em}
.session h4{margin:.2em 0}.session ol{padding-left:1.4em;margin:.3em 0}
.session.noise{background:#f6f6f6}.label{display:inline-block;font-size:.8em;
border-radius:.6em;padding:0 .5em;margin-right:.3em;background:#e8eefc}
.label.noise{background:#ddd}.label.fallback,.label.warn{background:#fde2c8}
mark.reveal{background:#c8f0c8;padding:0 .15em}mark.warn{background:#fde2c8}
.update{display:flex;gap:.6em;flex-wrap:wrap}.update>div{flex:1 1 380px}
"""
KEY_ATTRIBUTES = ("age", "gender", "occupation", "employer", "current_city", "home_country",
                  "marital_status")
_KIND_NAMES = {CONVERSATION: "conversation", USER_AI: "chat with an AI assistant",
               PURCHASE: "purchase history"}


def _value(value) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _attributes(person: str, attributes: dict, quality: Quality) -> Markup:
    wrong = {(w.attribute, w.value) for w in quality.wrong_values if w.person == person}

    def shown(key: str, value) -> Markup:
        entries = value if isinstance(value, list) else [value]
        return join([", " if i else None,
                     tag("mark", str(e), class_="warn", title="names a member of the community")
                     if (key, e) in wrong else str(e)] for i, e in enumerate(entries))

    def rows(keys) -> list[Markup]:
        return [join([tag("dt", k.replace("_", " ")), tag("dd", shown(k, attributes[k]))])
                for k in keys]

    key = [k for k in KEY_ATTRIBUTES if k in attributes]
    rest = [k for k in attributes if k not in KEY_ATTRIBUTES]
    return join([tag("dl", rows(key)),
                 tag("details", tag("summary", f"all {len(attributes)} attributes"),
                     tag("dl", rows(key + rest))) if rest else None])


def _habits(habits: dict | None) -> Markup | None:
    if not habits:
        return None
    rates = habits.get("typo_rates", {})
    total = sum(rates.values())
    kinds = ", ".join(f"{k.replace('_', ' ')} {r:.3f}" for k, r in
                      sorted(rates.items(), key=lambda kv: -kv[1]) if r > 0)
    typos = (f"{total:.3f} typos per word ({kinds})" if total else "no typos")
    return tag("dl", tag("dt", "writing style"), tag("dd", habits.get("writing_style", "")),
               tag("dt", "typo habits"), tag("dd", typos))


def _questions(community: GeneratedCommunity, person: str) -> Markup:
    rows = [tag("tr", tag("td", q.question), tag("td", q.type), tag("td", _value(q.answer)),
                tag("td", "" if q.outdated_value is None else _value(q.outdated_value)))
            for q in community.release.questions.get(person, [])]
    return tag("table", tag("thead", tag("tr", [tag("th", h) for h in (
        "question", "type", "gold answer", "outdated value")])), tag("tbody", rows))


def person_card(community: GeneratedCommunity, index: int, person: str,
                quality: Quality) -> Markup:
    """A person's card: persona line, key attributes, ties, writing habits, their questions."""
    profile = community.profiles[person]
    ties = ", ".join(f"{other} ({relation})"
                     for other, relation in neighbours(community.graph, person))
    flagged = any(w.person == person for w in quality.wrong_values)
    return tag("details", tag("summary", tag("b", person),
                              tag("span", " value of the wrong kind", class_="label warn")
                              if flagged else None),
               tag("p", profile.get("persona", ""), class_="persona"),
               _attributes(person, profile["attributes"], quality),
               tag("p", "ties: ", ties or "none"), _habits(community.habits.get(person)),
               _questions(community, person),
               class_="card person-card", id=f"{community.name}-person-{index}")


def _turns(session: GeneratedSession) -> list[tuple[str, str]]:
    if session.kind == PURCHASE:
        return [(item.get("brand", ""), f"{item.get('title', '')}: {item.get('description', '')}"
                 f" [{', '.join(item.get('categories', []))}]")
                for item in session.body.get(PURCHASE, [])]
    return [(t["role"], t["content"]) for t in session.body.get(session.kind, [])]


def revealing_turns(session: GeneratedSession, texts: list[str]) -> set[int]:
    """Indices of the turns that reveal the session's fact; when it takes several turns
    together (words spread over them), the turns holding any of its words."""
    fact = session.reveals
    if fact is None:
        return set()
    value, attribute = str(fact["value"]), fact["attribute"]
    alone = {i for i, text in enumerate(texts) if reveals(text, value, attribute)}
    if alone or not reveals("\n".join(texts), value, attribute):
        return alone
    wanted = set().union(*reveal_words(value, attribute))
    return {i for i, text in enumerate(texts) if words(text) & wanted}


def session_card(session: GeneratedSession, note: str | None = None) -> Markup:
    """One session as written, its turns listed; the turns that reveal its fact are marked."""
    fact = session.reveals
    labels = [tag("span", "noise", class_="label noise") if session.noise else
              tag("span", f"reveals {fact['attribute'].replace('_', ' ')}: {fact['value']}",
                  class_="label")]
    if session.revealed_by == "fallback":
        labels.append(tag("span", "revealed by the fallback line", class_="label fallback"))
    elif session.revealed_by == "model":
        labels.append(tag("span", "revealed in the model's words", class_="label"))
    if is_degenerate_session(session.body):
        labels.append(tag("span", "degenerate repetition", class_="label warn"))
    partner = session.body.get("target_name")
    title = (f"{_KIND_NAMES[session.kind]} of {session.person}"
             + (f" with {partner}" if partner else "") + f" · {session.body.get('time', '')}")
    turns = _turns(session)
    marked = revealing_turns(session, [text for _, text in turns])
    items = [tag("li", tag("b", speaker), ": ",
                 tag("mark", text, class_="reveal") if i in marked else text)
             for i, (speaker, text) in enumerate(turns)]
    return tag("div", tag("h4", title), note and tag("p", note, class_="muted"), labels,
               tag("ol", items), class_="session noise" if session.noise else "session",
               data_segment=session.segment_id)


def sample_sessions(community: GeneratedCommunity) -> list[GeneratedSession]:
    """Per document type, the first personal session revealed in the model's words, the first
    revealed by the fallback line, and the first noise session (those that exist)."""
    chosen = []
    for kind in (CONVERSATION, USER_AI, PURCHASE):
        of_kind = [s for s in community.sessions if s.kind == kind]
        for revealed_by in ("model", "fallback"):
            chosen += [s for s in of_kind if not s.noise and s.revealed_by == revealed_by][:1]
        chosen += [s for s in of_kind if s.noise][:1]
    return chosen


def update_pair(community: GeneratedCommunity) -> tuple[GeneratedSession, GeneratedSession,
                                                        str] | None:
    """(the session of an outdated value, a session of its current value, the question) for
    the first question whose answer changed over time."""
    for person, questions in community.release.questions.items():
        for q in questions:
            if not q.outdated_value:
                continue
            old = _value(q.outdated_value)
            current = {str(v) for v in (q.answer if isinstance(q.answer, list) else [q.answer])}
            mine = [s for s in community.sessions if s.person == person and s.reveals
                    and s.reveals["subject"] == person]
            earlier = next((s for s in mine if str(s.reveals["value"]) == old), None)
            later = earlier and next(
                (s for s in mine if str(s.reveals["value"]) in current
                 and s.reveals["attribute"] == earlier.reveals["attribute"]), None)
            if later:
                return earlier, later, q.question
    return None


def community_section(community: GeneratedCommunity, quality: Quality, problems: list[str],
                      *, open_: bool) -> Markup:
    """The whole community, collapsed unless `open_`."""
    people = community.people
    cards = [person_card(community, i, p, quality) for i, p in enumerate(people)]
    update = update_pair(community)
    if update is None:
        change = tag("p", "No preference changed over time in this community "
                          "(--update-probability).", class_="muted")
    else:
        earlier, later, question = update
        change = join([tag("p", f"{question} The earlier session shows a value that is "
                                "outdated; the later one shows the current answer."),
                       tag("div", tag("div", session_card(earlier, "earlier: outdated value")),
                           tag("div", session_card(later, "later: the current value")),
                           class_="update")])
    validation = (tag("p", f"Lexical checks at noise {community.noise}: passed (every answer "
                           "item revealed by one of its sessions, no unreferenced session "
                           "names a queried item, the graph consistent).")
                  if not problems else
                  join([tag("p", f"Lexical checks at noise {community.noise}: "
                                 f"{len(problems)} problem(s)."),
                        tag("ul", [tag("li", p) for p in problems[:50]])]))
    return tag("details", tag("summary", f"{community.name}: {len(people)} people"),
               tag("h3", "Social graph"),
               graph_svg(community.graph, f"Social graph of {community.name}"),
               tag("h3", "Validation"), validation,
               tag("h3", "People"), tag("div", cards, class_="cards"),
               tag("h3", "Sample sessions"),
               tag("p", "Of each document type: a personal session revealed in the model's "
                        "words, one revealed by the fallback line, and a noise session, at noise "
                        f"{community.noise}; the turns that reveal the session's fact are "
                        "marked.", class_="muted"),
               tag("div", [session_card(s) for s in sample_sessions(community)],
                   class_="sessions"),
               tag("h3", "An outdated value beside its update"), change,
               class_="community", id=community.name, open=open_)
