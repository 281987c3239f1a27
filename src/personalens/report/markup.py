"""Markup built from escaped parts: elements (HTML or inline SVG) whose text is always data.

`tag("p", "a < b", class_="note")` is `<p class="note">a &lt; b</p>`: every string child and
every attribute value is escaped, and only `Markup` (what `tag` returns) goes in unescaped.
Tag and attribute names come from code, and are checked: a name that is not a plain
identifier, a `<script>` element or an event-handler attribute (`on...`) is refused, so
nothing a page shows can run, whatever the data holds.
"""

import html
import re
from collections.abc import Iterable

_NAME = re.compile(r"[a-z][a-z0-9-]*\Z")
_FORBIDDEN_TAGS = frozenset({"script", "iframe", "object", "embed", "foreignobject"})


class Markup(str):
    """Markup made by `tag` (or `join`): inserted as it is."""



def _children(children) -> str:
    parts = []
    for child in children:
        if child is None:
            continue
        if isinstance(child, Markup):
            parts.append(child)
        elif isinstance(child, str | int | float):
            parts.append(html.escape(str(child), quote=False))
        else:  # an iterable of children
            parts.append(_children(child))
    return "".join(parts)


def _attribute(name: str, value: object) -> str:
    name = name.rstrip("_").replace("_", "-")
    if not _NAME.match(name) or name.startswith("on"):
        raise ValueError(f"attribute {name!r} is not allowed in report markup")
    if value is True:
        return f" {name}"
    return f' {name}="{html.escape(str(value), quote=True)}"'


def tag(name: str, *children, **attributes) -> Markup:
    """The element `name` with escaped `children` (strings, numbers, Markup, or iterables of
    them) and escaped `attributes` (`class_=` for class, `_` for `-`; True for a bare
    attribute, None or False to leave one out)."""
    if not _NAME.match(name) or name in _FORBIDDEN_TAGS:
        raise ValueError(f"element {name!r} is not allowed in report markup")
    attrs = "".join(_attribute(k, v) for k, v in attributes.items()
                    if v is not None and v is not False)
    return Markup(f"<{name}{attrs}>{_children(children)}</{name}>")


def join(children: Iterable) -> Markup:
    """Several children as one piece of markup (strings escaped)."""
    return Markup(_children(children))
