"""The runs layer: the harness every lens plugs into, and run directories that resume after any
crash and never lose a record."""

from personalens.runs.atomic import write_atomic
from personalens.runs.failures import Failure, ItemFailure, RecordedFailure
from personalens.runs.harness import Outcome, run_lens
from personalens.runs.item_records import ItemRecords
from personalens.runs.lens import Lens, Metrics, RunContext, RunIdentity, Tally
from personalens.runs.manifest import Manifest
from personalens.runs.options import (
    CommaList,
    IntList,
    LensOptions,
    UserPath,
    not_identity,
    option,
    user_path,
)
from personalens.runs.provenance import fingerprint, package_versions
from personalens.runs.records import LensRecord
from personalens.runs.run_directory import METRICS, RECORDS, REPORT, RunDirectory
from personalens.runs.step_store import StepFailed, StepStore

__all__ = ["METRICS", "RECORDS", "REPORT", "CommaList", "Failure", "IntList", "ItemFailure",
           "ItemRecords", "Lens", "LensOptions", "LensRecord", "Manifest", "Metrics", "Outcome",
           "RecordedFailure", "RunContext", "RunDirectory", "RunIdentity", "StepFailed",
           "StepStore", "Tally", "UserPath", "fingerprint", "not_identity", "option",
           "package_versions", "run_lens", "user_path", "write_atomic"]
