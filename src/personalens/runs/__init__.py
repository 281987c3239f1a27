"""The runs layer: run directories that resume after any crash and never lose a record."""

from personalens.runs.atomic import write_atomic
from personalens.runs.provenance import fingerprint, package_versions
from personalens.runs.run_directory import METRICS, RECORDS, REPORT, RunDirectory

__all__ = ["METRICS", "RECORDS", "REPORT", "RunDirectory", "fingerprint", "package_versions",
           "write_atomic"]
