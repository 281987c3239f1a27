"""The character edits of PQB's released typo queries, by kind (the Musical Instruments excerpt).

    python bench/pqb_release_typo_kinds.py

Runs `personalens pqb eval --queries <shared anchor excerpt> --meta <test fixture meta>
--retriever bm25` and prints the queries, pairs and typo queries it read, and
`typo_edit_kinds.typo` from its metrics.json: every typo query aligned word by word with its
clean query, each character edit named by kind.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERIES = REPO.parent / "shared/anchors/pqb/dataset/Musical_Instruments.excerpt.json"
META = REPO / "tests/fixtures/pqb/meta_Musical_Instruments.jsonl"


def main() -> None:
    if not QUERIES.exists():
        sys.exit(f"needs the PQB anchor at {QUERIES}")
    exe = str(Path(sys.executable).with_name("personalens"))
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([exe, "pqb", "eval", "--queries", str(QUERIES), "--meta", str(META),
                        "--retriever", "bm25", "--out", f"{scratch}/run"],
                       check=True, stdout=subprocess.DEVNULL)
        metrics = json.loads(Path(f"{scratch}/run/metrics.json").read_text())
    kinds = {k: v for k, v in metrics["typo_edit_kinds"]["typo"].items() if v}
    print(f"queries {metrics['n_queries']}, pairs {metrics['n_pairs']}, "
          f"typo queries {metrics['n_typo']}")
    print("typo edits by kind: " + ", ".join(f"{k} {v}" for k, v in
                                             sorted(kinds.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
