"""A table of scored records for the attribution statistics: one row per (record, condition).

Columns: record, profile (0/1), memory (0/1), score; optional risk and model. Any table in this
shape works, including the release's scored outputs once flattened to it. Every problem is
bad input naming the file, the row and the column.
"""

from pathlib import Path

import pandas as pd

from personalens.errors import InputError

REQUIRED = ("record", "profile", "memory", "score")
CONDITIONS = {(0, 0): "base", (1, 0): "profile", (0, 1): "retrieval", (1, 1): "profile_retrieval"}


def read_scores(path: Path) -> pd.DataFrame:
    where = str(path)
    try:
        table = pd.read_csv(path, dtype={"record": str, "risk": str, "model": str})
    except FileNotFoundError:
        raise InputError("scores file not found", where=where) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InputError(f"not a readable CSV ({str(exc).splitlines()[0]})",
                         where=where) from None
    missing = [c for c in REQUIRED if c not in table.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; expected "
                         f"{', '.join(REQUIRED)} (+ optional risk, model)", where=where)
    for column in ("profile", "memory"):
        bad = ~table[column].isin([0, 1])
        if bad.any():
            row = int(bad.idxmax())
            raise InputError(f"column {column} must be 0 or 1 (got {table[column][row]})",
                             where=f"{where} row {row + 2}")
        table[column] = table[column].astype(int)
    scores = pd.to_numeric(table["score"], errors="coerce")
    if scores.isna().any():
        row = int(scores.isna().idxmax())
        raise InputError(f"column score must be a number (got {table['score'][row]})",
                         where=f"{where} row {row + 2}")
    table["score"] = scores.astype(float)
    for column, default in (("risk", "score"), ("model", "")):
        if column not in table.columns:
            table[column] = default
        # A blank cell would silently leave its row out of every group.
        blank = table[column].isna()
        if blank.any():
            raise InputError(f"column {column} is empty (name the {column} of every row)",
                             where=f"{where} row {int(blank.idxmax()) + 2}")
    return table


def groups(table: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(name, rows) per model and risk: the risk alone with one model, `<model>:<risk>` else."""
    several = table["model"].nunique() > 1
    return [(f"{model}:{risk}" if several else str(risk), rows)
            for (model, risk), rows in table.groupby(["model", "risk"], sort=True)]
