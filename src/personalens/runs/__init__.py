"""The runs layer: the harness every lens plugs into, and run directories that resume after any
crash and never lose a record.

Names load on first use (lazy_loader), so importing one of them loads its module
only: `personalens --help` and the options models stay light.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "atomic": ["write_atomic"],
    "failures": ["Failure", "ItemFailure", "RecordedFailure"],
    "harness": ["Outcome", "run_lens"],
    "item_records": ["ItemRecords"],
    "lens": ["Lens", "Metrics", "RunContext", "RunIdentity", "Tally"],
    "manifest": ["Manifest"],
    "options": ["CommaList", "IntList", "LensOptions", "UserPath", "not_identity", "option",
                "user_path"],
    "provenance": ["fingerprint", "package_versions"],
    "records": ["LensRecord"],
    "run_directory": ["METRICS", "RECORDS", "REPORT", "RunDirectory"],
    "step_store": ["StepFailed", "StepStore"],
})
