"""A community's social graph as a static inline SVG: people on a circle, ties as coloured lines.

The layout is a circle in name order (deterministic, readable for the tens of people a
community holds); each tie is drawn once, coloured by its kind, with a <title> saying who is
what to whom. Names and relations are text in the markup, escaped by `report.markup.tag`.
"""

import math

import networkx as nx

from personalens.report import Markup, join, tag

# One colour per kind of tie; parent and child are one kind seen from its two ends.
COLOURS = {"parent / child": "#d62728", "sibling": "#ff7f0e", "partner": "#9467bd",
           "coworker": "#1f77b4", "friend": "#2ca02c"}
_KIND = {"parent": "parent / child", "child": "parent / child"}
NODE_RADIUS = 7
LABEL_ROOM = 170  # px left for the labels outside the circle


def tie_kind(relation: str) -> str:
    return _KIND.get(relation, relation)


def circle_layout(people: list[str]) -> tuple[float, dict[str, tuple[float, float]]]:
    """(radius, person -> (x, y) around the centre (0, 0)), first person at the top."""
    radius = max(90.0, 9.0 * len(people))
    angle = 2 * math.pi / max(len(people), 1)
    return radius, {p: (radius * math.sin(i * angle), -radius * math.cos(i * angle))
                    for i, p in enumerate(people)}


def _ties(graph: nx.DiGraph) -> list[tuple[str, str, str]]:
    """(a, b, what b is to a) once per pair, a before b in name order."""
    return sorted((u, v, r) for u, v, r in graph.edges(data="relation") if u < v)


def _label(person: str, x: float, y: float, radius: float) -> Markup:
    # Labels sit just outside their node, on the side away from the centre.
    scale = (radius + NODE_RADIUS + 5) / radius
    anchor = "start" if x > 1 else "end" if x < -1 else "middle"
    dy = 4 if abs(x) > 1 else (-6 if y < 0 else 16)
    return tag("text", person, x=f"{x * scale:.1f}", y=f"{y * scale + dy:.1f}",
               text_anchor=anchor, font_size="12")


def _legend(kinds: list[str], top: float, left: float) -> Markup:
    rows = []
    for i, kind in enumerate(kinds):
        y = top + 16 * i
        rows.append(join([tag("line", x1=f"{left:.1f}", y1=f"{y:.1f}", x2=f"{left + 22:.1f}",
                              y2=f"{y:.1f}", stroke=COLOURS.get(kind, "#777"), stroke_width="3"),
                          tag("text", kind, x=f"{left + 28:.1f}", y=f"{y + 4:.1f}",
                              font_size="12")]))
    return tag("g", rows, class_="legend")


def graph_svg(graph: nx.DiGraph, caption: str) -> Markup:
    """The graph as an <svg> element: one <g class="person"> per person, one <line
    class="tie"> per tie, and a legend of the kinds of tie drawn."""
    people = sorted(graph.nodes)
    radius, where = circle_layout(people)
    ties = _ties(graph)
    known = list(COLOURS)  # their order; a kind without a colour goes last, in grey
    kinds = sorted({tie_kind(r) for _, _, r in ties},
                   key=lambda k: (known.index(k) if k in known else len(known), k))
    lines = [tag("line", tag("title", f"{b} is {a}'s {relation}"), class_="tie",
                 x1=f"{where[a][0]:.1f}", y1=f"{where[a][1]:.1f}", x2=f"{where[b][0]:.1f}",
                 y2=f"{where[b][1]:.1f}", stroke=COLOURS.get(tie_kind(relation), "#777"),
                 stroke_width="2.5", data_relation=tie_kind(relation))
             for a, b, relation in ties]
    nodes = [tag("g", tag("title", person), tag("circle", cx=f"{x:.1f}", cy=f"{y:.1f}",
                                                r=NODE_RADIUS, fill="#fff", stroke="#333",
                                                stroke_width="1.5"),
                 _label(person, x, y, radius), class_="person", data_name=person)
             for person, (x, y) in where.items()]
    half = radius + LABEL_ROOM
    height = 2 * radius + 80 + 16 * len(kinds)
    # The HTML parser gives SVG attributes their camel case back (viewbox -> viewBox).
    return tag("svg", tag("title", caption), tag("g", lines), tag("g", nodes),
               _legend(kinds, radius + 40, -half + 10),
               xmlns="http://www.w3.org/2000/svg",
               viewbox=f"{-half:.0f} {-radius - 40:.0f} {2 * half:.0f} {height:.0f}",
               class_="social-graph", role="img", width="100%", style=f"max-width:{2 * half:.0f}px")
