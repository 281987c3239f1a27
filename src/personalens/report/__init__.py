"""The report layer: self-contained HTML reports with tables and embedded plots."""

from personalens.report.html_report import HtmlReport
from personalens.report.plots import grouped_bars, line_plot
from personalens.report.question_browser import BrowserEntry

__all__ = ["BrowserEntry", "HtmlReport", "grouped_bars", "line_plot"]
