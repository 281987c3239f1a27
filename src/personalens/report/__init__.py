"""The report layer: self-contained HTML reports with tables and embedded plots.

Names load on first use (lazy_loader), so importing one of them loads its module
only: `personalens --help` and the options models stay light.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "html_report": ["HtmlReport", "Link"],
    "markup": ["Markup", "join", "tag"],
    "plots": ["bars_with_ci", "forest_plot", "grouped_bars", "interaction_plot", "line_plot",
              "panels_with_ci", "scatter"],
    "question_browser": ["ENTRY_LIMIT", "BrowserEntry", "BrowserItems", "failure_fields",
                         "first_entries"],
})
