"""Plots as PNG bytes (matplotlib, headless), ready to embed in a report."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402

NOTHING_SCORED = "nothing scored"


def _finite(value) -> bool:
    return value is not None and bool(np.isfinite(value))


def _mark_empty(ax, has_data: bool) -> None:
    """Empty axes look like a plot of zeros; say there was nothing to draw instead."""
    if not has_data:
        ax.text(0.5, 0.5, NOTHING_SCORED, ha="center", va="center", transform=ax.transAxes,
                fontsize=12, color="#555")


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def grouped_bars(series: dict[str, dict[str, float | None]], ylabel: str, title: str) -> bytes:
    return _png(draw_grouped_bars(series, ylabel, title))


def draw_grouped_bars(series: dict[str, dict[str, float | None]], ylabel: str, title: str):
    """One group of bars per category, one bar per series; a missing value is marked n/a, not
    drawn (a bar of height 0 would read as a score of 0)."""
    categories = list(dict.fromkeys(c for values in series.values() for c in values))
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(categories))
    drawn = False
    for i, (name, values) in enumerate(series.items()):
        offset = x + i * width - 0.4 + width / 2
        scored = np.array([_finite(values.get(c)) for c in categories], dtype=bool)
        heights = np.array([values[c] if ok else 0.0 for c, ok in zip(categories, scored,
                                                                      strict=True)])
        ax.bar(offset[scored], heights[scored], width, label=name)
        for position in offset[~scored]:
            ax.text(position, 0.01, "n/a", ha="center", va="bottom", rotation=90, fontsize=7)
        drawn = drawn or bool(scored.any())
    ax.set_xticks(x, categories)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    _mark_empty(ax, drawn)
    if series:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))  # outside: never hides a bar
    return fig


def line_plot(series: dict[str, list[tuple[float, float | None]]], xlabel: str, ylabel: str,
              title: str) -> bytes:
    return _png(draw_line_plot(series, xlabel, ylabel, title))


def draw_line_plot(series: dict[str, list[tuple[float, float | None]]], xlabel: str,
                   ylabel: str, title: str):
    fig, ax = plt.subplots(figsize=(6, 4))
    drawn = False
    for name, points in series.items():
        xs = [x for x, y in points if _finite(y)]
        ys = [y for _, y in points if _finite(y)]
        ax.plot(xs, ys, marker="o", label=name)
        drawn = drawn or bool(ys)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.set_title(title)
    _mark_empty(ax, drawn)
    if series:
        ax.legend()
    return fig


def bars_with_ci(values: dict[str, tuple[float | None, float | None, float | None]],
                 ylabel: str, title: str) -> bytes:
    """One bar per label with its CI as an error bar; undefined values are marked, not drawn."""
    labels = list(values)
    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(labels) + 2), 4))
    x = np.arange(len(labels))
    for i, label in enumerate(labels):
        value, low, high = values[label]
        if value is None:
            ax.text(i, 0, "undefined", ha="center", va="bottom", rotation=90, fontsize=8)
            continue
        errors = None
        if low is not None and high is not None:
            errors = [[max(value - low, 0.0)], [max(high - value, 0.0)]]
        ax.bar(i, value, 0.6, yerr=errors, capsize=4, color="tab:blue" if value >= 0
               else "tab:red")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, labels, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    _mark_empty(ax, any(_finite(v[0]) for v in values.values()))
    return _png(fig)


def scatter(x: list[float], y: list[float], xlabel: str, ylabel: str, title: str) -> bytes:
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.scatter(x, y, alpha=0.6)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    _mark_empty(ax, bool(x))
    return _png(fig)


def interaction_plot(cells: dict[tuple[int, int], float | None], ylabel: str,
                     title: str) -> bytes:
    """The 2x2 cell means: memory on x, one line per profile level (parallel = no interaction)."""
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    for profile, label in ((0, "no profile"), (1, "profile")):
        ys = [cells.get((profile, memory)) for memory in (0, 1)]
        ax.plot([0, 1], [np.nan if y is None else y for y in ys], marker="o", label=label)
    ax.set_xticks([0, 1], ["no memory", "memory"])
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend()
    _mark_empty(ax, any(_finite(v) for v in cells.values()))
    return _png(fig)


def forest_plot(rows: list[tuple[str, float | None, float | None, float | None]], xlabel: str,
                title: str) -> bytes:
    """One row per (label, estimate, CI low, CI high), top to bottom, around a line at 0; an
    undefined estimate is marked, not drawn."""
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.35 * len(rows) + 1.2)))
    y = np.arange(len(rows))[::-1]
    for position, (_, value, low, high) in zip(y, rows, strict=True):
        if not _finite(value):
            ax.text(0, position, "undefined", ha="center", va="center", fontsize=8)
            continue
        if _finite(low) and _finite(high):
            ax.plot([low, high], [position, position], color="tab:blue", linewidth=1.5)
        ax.plot([value], [position], "o", color="tab:blue")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(y, [label for label, *_ in rows], fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    _mark_empty(ax, any(_finite(v) for _, v, _, _ in rows))
    return _png(fig)


def panels_with_ci(panels: dict[str, dict[str, tuple[float | None, float | None, float | None]]],
                   columns: int = 5) -> bytes:
    """One small bar chart per panel title (a metric), a bar per label (a system) with its CI;
    each panel keeps its own scale, so metrics of different units sit side by side."""
    rows = max(1, -(-len(panels) // columns))
    fig, axes = plt.subplots(rows, columns, figsize=(3.0 * columns, 2.8 * rows), squeeze=False)
    for ax, (title, values) in zip(axes.flat, panels.items(), strict=False):
        labels = list(values)
        for i, label in enumerate(labels):
            value, low, high = values[label]
            if value is None:
                ax.text(i, 0, "–", ha="center", va="bottom")
                continue
            errors = None
            if low is not None and high is not None:
                errors = [[max(value - low, 0.0)], [max(high - value, 0.0)]]
            ax.bar(i, value, 0.6, yerr=errors, capsize=3, color=f"C{i % 10}")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=8)
        ax.set_title(title, fontsize=9)
        _mark_empty(ax, any(_finite(v[0]) for v in values.values()))
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.tight_layout()
    return _png(fig)
