"""The report layer: self-contained HTML reports with tables and embedded plots."""

from personalens.report.html_report import HtmlReport, Link
from personalens.report.markup import Markup, join, tag
from personalens.report.plots import (
    bars_with_ci,
    forest_plot,
    grouped_bars,
    interaction_plot,
    line_plot,
    panels_with_ci,
    scatter,
)
from personalens.report.question_browser import (
    ENTRY_LIMIT,
    BrowserEntry,
    BrowserItems,
    failure_fields,
    first_entries,
)

__all__ = ["ENTRY_LIMIT", "BrowserEntry", "BrowserItems", "HtmlReport", "Link", "Markup",
           "bars_with_ci", "failure_fields", "first_entries", "forest_plot", "grouped_bars",
           "interaction_plot", "join", "line_plot", "panels_with_ci", "scatter", "tag"]
