"""A GBNF grammar (the subset the prefdisco turn grammars use) as a Python regex, to test in
process which strings a grammar admits, and its longest string.

Supported: one `name ::= expression` rule per line, `#` comments, string literals with \\n \\t
\\r \\\\ \\" escapes, character classes (`[^\\n]`, `[0-9]`, `\\xHH`), groups, `|`, and the
postfix `?`, `*`, `+`, `{m}`, `{m,}`, `{m,n}`. Rules may refer to rules (not recursively).
This mirrors llama.cpp's grammar syntax; the slow test runs the grammars on llama.cpp itself.
"""

import re
from dataclasses import dataclass

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "]": "]", "[": "[",
            "-": "-", "^": "^"}


@dataclass
class Compiled:
    pattern: str  # a Python regex for the whole grammar (use with re.fullmatch)
    longest: int | None  # characters in the longest admitted string; None: unbounded

    def matches(self, text: str) -> bool:
        return re.fullmatch(self.pattern, text, re.S) is not None


def compile_gbnf(grammar: str) -> Compiled:
    rules: dict[str, str] = {}
    for line in grammar.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, body = line.partition("::=")
        rules[name.strip()] = body.strip()
    return _Parser(rules).rule("root", ())


class _Parser:
    def __init__(self, rules: dict[str, str]):
        self.rules = rules

    def rule(self, name: str, stack: tuple[str, ...]) -> Compiled:
        if name in stack:
            raise ValueError(f"recursive rule {name!r} is not supported")
        if name not in self.rules:
            raise ValueError(f"undefined rule {name!r}")
        text = self.rules[name]
        compiled, end = self.alternatives(text, 0, (*stack, name))
        if text[end:].strip():
            raise ValueError(f"rule {name!r}: unexpected {text[end:]!r}")
        return compiled

    def alternatives(self, text: str, at: int, stack) -> tuple[Compiled, int]:
        options = []
        while True:
            sequence, at = self.sequence(text, at, stack)
            options.append(sequence)
            at = _skip(text, at)
            if at < len(text) and text[at] == "|":
                at += 1
                continue
            break
        longest = (None if any(o.longest is None for o in options)
                   else max(o.longest for o in options))
        pattern = options[0].pattern if len(options) == 1 else \
            "(?:" + "|".join(o.pattern for o in options) + ")"
        return Compiled(pattern, longest), at

    def sequence(self, text: str, at: int, stack) -> tuple[Compiled, int]:
        parts: list[Compiled] = []
        while True:
            at = _skip(text, at)
            if at >= len(text) or text[at] in "|)":
                break
            item, at = self.item(text, at, stack)
            item, at = _postfix(item, text, at)
            parts.append(item)
        longest = (None if any(p.longest is None for p in parts)
                   else sum(p.longest for p in parts))
        return Compiled("".join(p.pattern for p in parts), longest), at

    def item(self, text: str, at: int, stack) -> tuple[Compiled, int]:
        char = text[at]
        if char == '"':
            value, at = _literal(text, at + 1)
            return Compiled(re.escape(value), len(value)), at
        if char == "[":
            pattern, at = _char_class(text, at + 1)
            return Compiled(pattern, 1), at
        if char == "(":
            inner, at = self.alternatives(text, at + 1, stack)
            at = _skip(text, at)
            if text[at] != ")":
                raise ValueError(f"expected ')' at {text[at:]!r}")
            return Compiled(f"(?:{inner.pattern})", inner.longest), at + 1
        name = re.match(r"[a-zA-Z0-9-]+", text[at:])
        if name is None:
            raise ValueError(f"unexpected {text[at:]!r}")
        inner = self.rule(name.group(0), stack)
        return Compiled(f"(?:{inner.pattern})", inner.longest), at + len(name.group(0))


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t":
        at += 1
    return at


def _postfix(item: Compiled, text: str, at: int) -> tuple[Compiled, int]:
    if at >= len(text):
        return item, at
    group = f"(?:{item.pattern})"
    if text[at] == "?":
        return Compiled(group + "?", item.longest), at + 1
    if text[at] == "*":
        return Compiled(group + "*", None if item.longest else 0), at + 1
    if text[at] == "+":
        return Compiled(group + "+", None if item.longest else 0), at + 1
    bounds = re.match(r"\{(\d+)(,(\d*))?\}", text[at:])
    if bounds is None:
        return item, at
    low = int(bounds.group(1))
    high = low if bounds.group(2) is None else (int(bounds.group(3)) if bounds.group(3)
                                                else None)
    quantifier = f"{{{low},{'' if high is None else high}}}"
    longest = None if high is None or item.longest is None else high * item.longest
    return Compiled(group + quantifier, longest), at + len(bounds.group(0))


def _literal(text: str, at: int) -> tuple[str, int]:
    value = []
    while text[at] != '"':
        char, at = _char(text, at)
        value.append(char)
    return "".join(value), at + 1


def _char(text: str, at: int) -> tuple[str, int]:
    if text[at] != "\\":
        return text[at], at + 1
    code = text[at + 1]
    if code == "x":
        return chr(int(text[at + 2:at + 4], 16)), at + 4
    if code == "u":
        return chr(int(text[at + 2:at + 6], 16)), at + 6
    return _ESCAPES[code], at + 2


def _char_class(text: str, at: int) -> tuple[str, int]:
    negated = text[at] == "^"
    at += negated
    members = []
    while text[at] != "]":
        first, at = _char(text, at)
        if text[at] == "-" and text[at + 1] != "]":
            last, at = _char(text, at + 1)
            members.append(f"{re.escape(first)}-{re.escape(last)}")
        else:
            members.append(re.escape(first))
    return f"[{'^' if negated else ''}{''.join(members)}]", at + 1
