"""`personalens prisk stats` on a scored table: metrics keys, corrections, bad input."""

import json

import numpy as np
import pandas as pd
import pytest

from personalens.lenses.prisk.attribution import analyse_group, corrected_lmm
from personalens.lenses.prisk.score_table import read_scores
from personalens.stats.fits import Attribution
from tests.cli_runner import personalens


def _statsmodels_mixedlm(frame: pd.DataFrame, coding: str = "treatment"):
    """The reference: statsmodels MixedLM by REML, called here directly, not through the lens."""
    import statsmodels.formula.api as smf

    shift = 0.5 if coding == "effect" else 0.0
    data = frame.assign(P=frame["profile"] - shift, M=frame["memory"] - shift)
    model = smf.mixedlm("score ~ P * M", data, groups=data["record"])
    try:
        return model.fit(reml=True, method=["lbfgs", "powell"])
    except np.linalg.LinAlgError:  # statsmodels #10239: a near-zero record variance
        return model.fit(reml=True, method="powell")


def _benjamini_hochberg(p: list[float]) -> list[float]:
    """By hand: the i-th smallest of m p-values times m / i, then the running minimum from the
    largest down, capped at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted, running = [0.0] * m, 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        adjusted[i] = running
    return adjusted


def _table(path, risks=("irp", "sycophancy"), records=20, model=None):
    rng = np.random.default_rng(2)
    rows = []
    for record in range(records):
        intercept = rng.normal()
        for risk in risks:
            for p in (0, 1):
                for m in (0, 1):
                    row = {"record": f"r{record}", "profile": p, "memory": m, "risk": risk,
                           "score": 3 + intercept + 0.5 * p + rng.normal(0, 0.5)}
                    if model:
                        row["model"] = model
                    rows.append(row)
    frame = pd.DataFrame(rows)
    frame.to_csv(path, index=False)
    return frame


def test_stats_writes_the_documented_keys(tmp_path):
    frame = _table(tmp_path / "scores.csv")
    result = personalens("prisk", "stats", "--scores", tmp_path / "scores.csv", "--out",
                         tmp_path / "run", "--correction", "bh")
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert set(metrics["lmm"]) == {"irp", "sycophancy"}
    irp = metrics["lmm"]["irp"]
    assert set(irp) == {"profile", "memory", "interaction", "variance"}
    assert set(irp["profile"]) == {"beta", "se", "p", "ci_low", "ci_high", "eta_p2", "p_adj"}
    # Balanced and saturated: the treatment-coded profile effect is the difference of the
    # profile-only and base cell means, and the interaction the double difference.
    irp_rows = frame[frame["risk"] == "irp"]
    cell = irp_rows.groupby(["profile", "memory"])["score"].mean()
    assert irp["profile"]["beta"] == pytest.approx(cell[1, 0] - cell[0, 0])
    assert irp["memory"]["beta"] == pytest.approx(cell[0, 1] - cell[0, 0])
    assert irp["interaction"]["beta"] == pytest.approx(
        cell[1, 1] - cell[1, 0] - cell[0, 1] + cell[0, 0])
    # BH across 2 risks x 3 effects, in that order.
    p = [metrics["lmm"][r][e]["p"] for r in ("irp", "sycophancy")
         for e in ("profile", "memory", "interaction")]
    p_adj = [metrics["lmm"][r][e]["p_adj"] for r in ("irp", "sycophancy")
             for e in ("profile", "memory", "interaction")]
    assert p_adj == pytest.approx(_benjamini_hochberg(p))
    assert p_adj != pytest.approx(p)  # the correction did something on this table
    cells = metrics["cell_means"]["irp"]
    assert set(cells) == {"base", "profile", "retrieval", "profile_retrieval"}
    base = frame[(frame["risk"] == "irp") & (frame["profile"] == 0) & (frame["memory"] == 0)]
    assert cells["base"]["mean"] == pytest.approx(base["score"].mean())
    assert cells["base"]["n"] == 20 and cells["base"]["ci_low"] < cells["base"]["mean"]
    assert metrics["permutation"]["irp"]["profile"]["n"] == 20
    assert metrics["n_records"] == 20 and metrics["n_rows"] == 160


def test_without_a_risk_column_the_group_is_score(tmp_path):
    frame = _table(tmp_path / "s.csv", risks=("x",))
    frame.drop(columns=["risk"]).to_csv(tmp_path / "s.csv", index=False)
    result = personalens("prisk", "stats", "--scores", tmp_path / "s.csv", "--out",
                         tmp_path / "run")
    assert result.returncode == 0, result.stderr
    assert set(json.loads((tmp_path / "run" / "metrics.json").read_text())["lmm"]) == {"score"}


@pytest.mark.parametrize("change, message", [
    (lambda f: f.drop(columns=["memory"]), "missing column(s) memory"),
    (lambda f: f.assign(profile=f["profile"].replace(1, 2)), "row 4: column profile must be 0 "
                                                             "or 1 (got 2)"),
    (lambda f: f.assign(score=f["score"].astype(object).where(f.index != 4, "high")),
     "row 6: column score must be a number (got high)"),
    (lambda f: f.assign(risk=f["risk"].astype(object).where(f.index != 2, None)),
     "row 4: column risk is empty"),
])
def test_bad_tables_are_one_line_exit_2_and_write_nothing(tmp_path, change, message):
    frame = _table(tmp_path / "s.csv", risks=("irp",), records=3)
    change(frame).to_csv(tmp_path / "s.csv", index=False)
    result = personalens("prisk", "stats", "--scores", tmp_path / "s.csv", "--out",
                         tmp_path / "run")
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_the_lens_is_analyse_group_then_corrected_lmm(tmp_path):
    _table(tmp_path / "scores.csv", records=30)
    result = personalens("prisk", "stats", "--scores", tmp_path / "scores.csv", "--out",
                         tmp_path / "run", "--coding", "effect", "--seed", "5")
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    table = read_scores(tmp_path / "scores.csv")
    groups = {risk: analyse_group(table[table["risk"] == risk], coding="effect", seed=5)
              for risk in ("irp", "sycophancy")}
    assert set(groups["irp"]) == {"lmm", "cell_means", "permutation", "n_records", "n_rows"}
    assert metrics["lmm"] == _json(corrected_lmm({r: g["lmm"] for r, g in groups.items()},
                                                 "holm"))
    for risk, group in groups.items():
        assert metrics["cell_means"][risk] == _json(group["cell_means"])
        assert metrics["permutation"][risk] == _json(group["permutation"])
        assert (group["n_records"], group["n_rows"]) == (30, 120)
    # The closed form the lens takes on this balanced table is statsmodels MixedLM's fit.
    mixedlm = _statsmodels_mixedlm(table[table["risk"] == "irp"], coding="effect")
    ci = mixedlm.conf_int(alpha=0.05)
    for effect, term in (("profile", "P"), ("memory", "M"), ("interaction", "P:M")):
        expected = {"beta": mixedlm.params[term], "se": mixedlm.bse[term],
                    "ci_low": ci.loc[term, 0], "ci_high": ci.loc[term, 1]}
        for key, value in expected.items():
            assert metrics["lmm"]["irp"][effect][key] == pytest.approx(
                value, rel=5e-5, abs=5e-5 * mixedlm.bse[term])


def _json(models: dict) -> dict:
    """Models as metrics.json holds them."""
    return {name: m.model_dump(mode="json", exclude_unset=True) for name, m in models.items()}


def test_corrected_lmm_adjusts_across_every_group_and_effect():
    def result(p_profile, p_memory, p_interaction):
        lmm = {effect: {"beta": 1.0, "se": 0.5, "p": p} for effect, p in
               (("profile", p_profile), ("memory", p_memory), ("interaction", p_interaction))}
        return Attribution.model_validate({**lmm, "variance": {"record": 0.5, "residual": 1.0}})

    corrected = _json(corrected_lmm({"a": result(0.01, 0.04, 0.5),
                                     "b": result(0.03, 0.005, 0.2)}, "holm"))
    # Holm over six p: sorted 0.005, 0.01, 0.03, 0.04, 0.2, 0.5 times 6, 5, 4, 3, 2, 1 =
    # 0.03, 0.05, 0.12, 0.12, 0.4, 0.5 (each at least its predecessor's).
    assert corrected["a"]["profile"]["p_adj"] == pytest.approx(0.05)
    assert corrected["b"]["memory"]["p_adj"] == pytest.approx(0.03)
    assert corrected["b"]["profile"]["p_adj"] == pytest.approx(0.12)
    assert corrected["a"]["memory"]["p_adj"] == pytest.approx(0.12)
    assert corrected["b"]["interaction"]["p_adj"] == pytest.approx(0.4)
    assert corrected["a"]["interaction"]["p_adj"] == pytest.approx(0.5)
    assert corrected["a"]["variance"] == {"record": 0.5, "residual": 1.0}
    assert corrected["a"]["profile"] == {"beta": 1.0, "se": 0.5, "p": 0.01,
                                         "p_adj": pytest.approx(0.05)}


def test_a_record_missing_a_cell_is_fitted_by_mixedlm_and_left_out_of_its_tests(tmp_path):
    frame = _table(tmp_path / "s.csv", risks=("irp",), records=12)
    # r3 loses its profile-only score: 12 records still, 11 pairs for that condition.
    gone = (frame["record"] == "r3") & (frame["profile"] == 1) & (frame["memory"] == 0)
    frame[~gone].to_csv(tmp_path / "s.csv", index=False)
    result = personalens("prisk", "stats", "--scores", tmp_path / "s.csv", "--out",
                         tmp_path / "run")
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    expected = _statsmodels_mixedlm(frame[~gone])
    for effect, term in (("profile", "P"), ("memory", "M"), ("interaction", "P:M")):
        assert metrics["lmm"]["irp"][effect]["beta"] == pytest.approx(
            expected.params[term], rel=1e-4)
        assert metrics["lmm"]["irp"][effect]["se"] == pytest.approx(expected.bse[term], rel=1e-3)
    # Unbalanced: the fit is not the difference of cell means any more.
    cell = frame[~gone].groupby(["profile", "memory"])["score"].mean()
    assert metrics["lmm"]["irp"]["profile"]["beta"] != pytest.approx(cell[1, 0] - cell[0, 0])
    assert metrics["permutation"]["irp"]["profile"]["n"] == 11
    assert metrics["permutation"]["irp"]["retrieval"]["n"] == 12
    assert metrics["cell_means"]["irp"]["profile"]["n"] == 11
