"""The simulated user's instructions: it knows its persona and preferences, never the task.

`passive` (the paper's user) answers only what it is asked, briefly, and volunteers nothing;
`collaborative` also mentions the preferences most related to the question. Both reply in plain
text, so any chat model can play the user.
"""

from typing import Literal

from personalens.lenses.prefdisco.protocol import render_persona, render_preferences

UserKind = Literal["passive", "collaborative"]

_STYLE = {
    "passive": ("Answer only the question you are asked, in one or two plain sentences, in the "
                "first person. Do not volunteer any preference you were not asked about. If "
                "you are asked about something your preferences do not cover, say you have no "
                "particular preference."),
    "collaborative": ("Answer the question you are asked in a few plain sentences, in the first "
                      "person, and also mention any of your preferences that bear on what was "
                      "asked."),
}


def user_instructions(persona: dict | str, preferences: dict[str, dict], kind: UserKind) -> str:
    return ("You are role-playing a person talking to an AI assistant, which will ask you "
            "questions about how you would like to be helped.\n\n"
            f"Who you are:\n{render_persona(persona)}\n\n"
            f"Your preferences:\n{render_preferences(preferences)}\n\n"
            f"{_STYLE[kind]} Reply with plain text only: no JSON, no labels.")
