"""How PQB's default selection gates behave on varied, human-like writing.

The synthetic review users of the tests are so regular that their style Gaussians are tight,
and the tests widen --region. Here the writers are the people of the PersonaBench anchor
community_0 (GPT-4o-written conversations, every speaker's own turns as their history), the
items are the 15-item meta fixture, the candidates are the eight template frames, and the gates
are the paper's: chi2(16) 95% region 26.30 and margin 1 (then margin 0, the released code's).

Prints, from one run: the profiled writers, the share of (candidate, writer) pairs inside the
writer's region, how many items get a pair under each gate setting, and each build's time.

    python bench/pqb_default_gates.py
"""

import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from personalens.lenses.pqb.build import run_build
from personalens.lenses.pqb.build_source import BuildSource, product_from_meta
from personalens.lenses.pqb.options import BuildOptions
from personalens.lenses.pqb.release_format import meta_items
from personalens.lenses.pqb.spacy_pipeline import load_pipeline
from personalens.lenses.pqb.style_profiles import load_profiles
from personalens.lenses.pqb.user_gaussians import CHI2_95_16

REPO = Path(__file__).resolve().parent.parent
ANCHOR = (REPO.parent / "shared/anchors/personabench/eval_data/eval_data_v1/synthetic_data"
          "/community_0/private_data/noise_0.7/conversation_data_all.json")
META = REPO / "tests/fixtures/pqb/meta_Musical_Instruments.jsonl"


def histories() -> dict[str, list[str]]:
    """Every speaker's own turns, one text per conversation session."""
    by_speaker: dict[str, list[str]] = defaultdict(list)
    for entry in json.loads(ANCHOR.read_text()):
        for partner in entry["Data"]:
            for session in partner["Conversations"]:
                turns: dict[str, list[str]] = defaultdict(list)
                for turn in session["conversation"]:
                    turns[turn["role"]].append(turn["content"])
                for speaker, lines in turns.items():
                    by_speaker[speaker].append("\n".join(lines))
    return dict(by_speaker)


def build(out: Path, margin: float) -> dict:
    products = [product_from_meta(item, ()) for _, _, item in meta_items(META)]
    source = BuildSource(products, histories(), origin="PersonaBench anchor community_0")
    return run_build(BuildOptions(out=out, candidates="templates", pair_users="all",
                                  min_sentences=30, region=CHI2_95_16, margin=margin),
                     source=source).metrics.to_json()


def inside_share(out: Path) -> tuple[float, int]:
    """Share of (kept candidate, profiled writer) pairs inside the writer's 26.30 region."""
    profiles, nlp = load_profiles(out / "style"), load_pipeline()
    records = map(json.loads, (out / "records.jsonl").read_text().splitlines())
    kept = [q for r in records if r["key"].startswith("item/") and r["status"] == "ok"
            for q in r.get("kept", [])]
    vectors = profiles.vectors(kept, nlp)
    distances = np.stack([g.mahalanobis_sq(vectors) for g in profiles.gaussians.values()])
    return float((distances <= CHI2_95_16).mean()), distances.size


def main() -> None:
    if not ANCHOR.exists():
        sys.exit(f"needs the PersonaBench anchor at {ANCHOR}")
    with tempfile.TemporaryDirectory() as tmp:
        for margin in (1.0, 0.0):
            started = time.perf_counter()
            summary = build(Path(tmp) / f"m{margin}", margin)
            seconds = time.perf_counter() - started
            share, n = inside_share(Path(tmp) / f"m{margin}")
            print(f"margin {margin}: {summary['profiled_users']} of {summary['users']} writers "
                  f"profiled (sentences {sorted(summary['sentences'].values())}); "
                  f"{share:.1%} of {n} (candidate, writer) pairs inside the writer's region; "
                  f"{summary['items_by_status']} of {summary['items']} items; "
                  f"{summary['queries']} queries; build {seconds:.0f} s")


if __name__ == "__main__":
    main()
