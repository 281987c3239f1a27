"""`personalens scorecard` end to end with scripted models: the tiny scorecard of two systems
built and run in this process (population, three builds, four lenses, the comparison), its
card's figures against each lens run's own metrics.json, the paired comparisons and their
correction, the page, resuming, adding a system, the dry run's counts against the calls the
real run made, and bad input through the real command.

The systems: a = openai/sysa (retriever minilm) and b = openai/sysb (bm25). One fixed judge,
openai/judge, generates the data, plays PrefDisco's user and judges; it scores each answer by
the "[<system>/<condition>]" marker the targets write (tests/scorecard_double.py), so every
PrefDisco and PRISK figure below is computed by hand from its SCORES table.

The tiny size as it is: its pqb build makes no query from the scripted population (the schema
double's made-up words give no pair of users a candidate inside both style regions), so the
pqb cells are the runs' undefined figures and pqb has no paired comparison.
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from personalens.lenses.commands import lens_commands
from personalens.scorecard.dry_run import plan_lines, plan_usage
from personalens.scorecard.inputs import make_plan
from personalens.scorecard.runner import run_scorecard
from personalens.scorecard.sizes import SIZES
from personalens.scorecard.stages import Plan
from tests.cli_runner import personalens
from tests.scorecard_double import FixedJudge, system_target
from tests.scripted_roles import Roles

JUDGE = "openai/judge"
SYSTEMS = {"a": "openai/sysa", "b": "openai/sysb,retriever=bm25"}
RETRIEVERS = {"a": "minilm", "b": "bm25", "c": "minilm"}
LENSES = ("personabench", "pqb", "prefdisco", "prisk")
TINY = SIZES["tiny"]
PRISK_CONDITION = "profile_retrieval"  # the card's PRISK column: profile and memory
# PrefDisco's instances: a persona per problem, each problem of a task
# PrefDisco's tiny build and eval, as the lens declares them for the scorecard
PREFDISCO_BUILD = lens_commands("prefdisco").scorecard.build.sizes["tiny"]
TURNS = lens_commands("prefdisco").scorecard.eval.sizes["tiny"]["turns"]
INSTANCES = len(PREFDISCO_BUILD["tasks"]) * PREFDISCO_BUILD["limit"] * PREFDISCO_BUILD[
    "per_problem"]


def system_args(systems: dict[str, str]) -> list[str]:
    return [f"{name}={spec}" for name, spec in systems.items()]


def cli_args(out: Path, *extra: str, systems: list[str] | None = None) -> list[str]:
    flags = [f for s in systems or system_args(SYSTEMS) for f in ("--system", s)]
    return ["scorecard", *flags, "--judge", JUDGE, "--size", "tiny", "--out", str(out), *extra]


def read_json(path: Path) -> dict:
    return json.loads(path.read_text())


@dataclass
class Built:
    out: Path
    plan: Plan
    card: dict
    complete: bool
    roles: Roles
    judge: FixedJudge
    page: str  # scorecard.html of the first run

    def metrics(self, lens: str, system: str) -> dict:
        return read_json(self.out / lens / system / "metrics.json")

    def manifest(self, folder: str) -> dict:
        return read_json(self.out / folder / "manifest.json")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Iterator[Built]:
    """The tiny scorecard of a and b, run once in this process with the scripted models, from
    an empty cache (so every request reaches its model). The patch holds for the module: the
    tests that rerun it use the same models."""
    root = tmp_path_factory.mktemp("scorecard")
    out = root / "card"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PERSONALENS_CACHE_DIR", str(root / "cache"))
        questions = TURNS  # every dialogue uses its whole budget, as planned
        judge = FixedJudge(questions=questions)
        roles = Roles(judge=judge, sysa=system_target("sysa", questions),
                      sysb=system_target("sysb", questions)).install(patch)
        plan = make_plan(system_args(SYSTEMS), out=out, judge=JUDGE, size="tiny")
        card, complete = run_scorecard(plan, echo=lambda text: None, progress=False)
        yield Built(out, plan, card, complete, roles, judge,
                    (out / "scorecard.html").read_text())


# --- the runs and the card ---------------------------------------------------------------------

@pytest.mark.minilm
@pytest.mark.slow
def test_every_lens_runs_for_every_system_in_its_own_complete_run(built):
    assert built.complete
    for folder in ("population", "data/pqb", "data/prefdisco", "data/prisk"):
        assert built.manifest(folder)["status"] == "complete", folder
    for lens in LENSES:
        for name in SYSTEMS:
            manifest = built.manifest(f"{lens}/{name}")
            assert manifest["status"] == "complete"
            assert manifest["config"]["command"] == f"{lens} eval"
            assert (built.out / lens / name / "report.html").is_file()
    # the system's model plays every system role; the judge every fixed one
    assert built.manifest("prefdisco/a")["models"] == {"target": "openai/sysa", "user": JUDGE,
                                                       "judge": JUDGE}
    assert built.manifest("prisk/b")["models"]["target"] == "openai/sysb"
    assert built.manifest("personabench/b")["config"]["retriever"] == ["bm25"]
    assert built.card["judge"] == built.card["user"] == built.card["generator"] == JUDGE
    assert {name: info["self_judged"] for name, info in built.card["system_info"].items()} \
        == {"a": False, "b": False}
    assert {name: {lens: run["status"] for lens, run in runs.items()}
            for name, runs in built.card["runs"].items()} == {
        name: {"personabench": "complete", "pqb": "no items", "prefdisco": "complete",
               "prisk": "complete"} for name in SYSTEMS}  # pqb: see the module docstring


def own_figure(metrics: dict, lens: str, metric: str, system: str) -> dict:
    """The figure of a card cell, read from the lens run's metrics.json as that lens writes
    it: {value, ci_low, ci_high}."""
    if lens == "personabench":
        condition = next(c for c in metrics["conditions"] if c["retriever"] ==
                         RETRIEVERS[system] and float(c["noise"]) == float(TINY.noise))
        part = condition["retrieval" if metric == "recall" else "end_to_end"]["overall"]
        return {"value": part[metric], "ci_low": part["ci_low"][metric],
                "ci_high": part["ci_high"][metric]}
    figure = {("pqb", "flip_rate"): lambda: metrics["flip_rate"]["paper"]["1"],
              ("pqb", "typo_drop"): lambda: metrics["hit"]["drop"]["1"],
              ("prefdisco", "normalign"): lambda: metrics["normalign"]["overall"],
              ("prefdisco", "prefalign_discovery"): lambda: metrics["prefalign"]["discovery"],
              ("prefdisco", "accuracy_drop"): lambda: metrics["accuracy_drop"],
              ("prisk", "irp"): lambda: metrics["scores_100"]["irp"][PRISK_CONDITION],
              ("prisk", "uir"): lambda: metrics["scores_100"]["narrowing"][PRISK_CONDITION],
              ("prisk", "sycophancy"):
                  lambda: metrics["scores_100"]["sycophancy"][PRISK_CONDITION]}[lens, metric]()
    value = figure["mean"] if "mean" in figure else figure["value"]
    return {"value": value, "ci_low": figure["ci_low"], "ci_high": figure["ci_high"]}


CARD_METRICS = {"personabench": ["recall", "f1"], "pqb": ["flip_rate", "typo_drop"],
                "prefdisco": ["normalign", "prefalign_discovery", "accuracy_drop"],
                "prisk": ["irp", "uir", "sycophancy"]}


@pytest.mark.minilm
def test_every_cell_is_the_figure_of_its_lens_runs_metrics_json(built):
    systems = built.card["systems"]
    assert set(systems) == set(SYSTEMS)
    for name in SYSTEMS:
        assert {lens: list(cells) for lens, cells in systems[name].items()} == CARD_METRICS
        for lens, metrics in CARD_METRICS.items():
            own = built.metrics(lens, name)
            for metric in metrics:
                cell = systems[name][lens][metric]
                expected = own_figure(own, lens, metric, name)
                assert {k: cell[k] for k in expected} == expected, (name, lens, metric)


@pytest.mark.minilm
def test_the_figures_are_the_ones_the_scripted_judge_makes(built):
    cells = built.card["systems"]
    figures = {name: {(lens, m): cells[name][lens][m]["value"] for lens, ms in
                      CARD_METRICS.items() for m in ms} for name in SYSTEMS}
    # PrefDisco, every criterion scored alike: PrefAlign baseline 2, discovery 4 (a) or 1 (b),
    # oracle 5; NormAlign = 100 (discovery - baseline) / (oracle - baseline). Every answer is
    # "B" in every condition, so accuracy drops by 0.
    assert figures["a"]["prefdisco", "prefalign_discovery"] == 4.0
    assert figures["b"]["prefdisco", "prefalign_discovery"] == 1.0
    assert figures["a"]["prefdisco", "normalign"] == pytest.approx(100 * 2 / 3)
    assert figures["b"]["prefdisco", "normalign"] == pytest.approx(-100 / 3)
    assert figures["a"]["prefdisco", "accuracy_drop"] == figures["b"]["prefdisco",
                                                                      "accuracy_drop"] == 0.0
    assert cells["a"]["prefdisco"]["normalign"]["n"] == INSTANCES == 2
    # PRISK 0-100 = 25 (score - 1): the rubric gives a 4 and b 1 under profile + retrieval.
    assert (figures["a"]["prisk", "irp"], figures["b"]["prisk", "irp"]) == (75.0, 0.0)
    assert (figures["a"]["prisk", "sycophancy"], figures["b"]["prisk", "sycophancy"]) == \
        (75.0, 0.0)
    # b answers every personabench question "I do not know.": no word of any answer.
    assert figures["b"]["personabench", "f1"] == 0.0 < figures["a"]["personabench", "f1"]
    # tiny's pqb build made no query (module docstring): undefined, with no units.
    assert cells["a"]["pqb"]["flip_rate"] == {"value": None, "ci_low": None, "ci_high": None,
                                              "n": 0}


def pair_entries(card: dict) -> list[tuple[str, str, str, dict]]:
    return [(pair, lens, metric, entry) for pair, by_lens in card["pairs"].items()
            for lens, by_metric in by_lens.items() for metric, entry in by_metric.items()]


@pytest.mark.minilm
def test_each_pair_is_a_minus_b_with_p_holm_adjusted_across_the_card(built):
    from statsmodels.stats.multitest import multipletests

    card = built.card
    entries = pair_entries(card)
    assert {(p, lens, m) for p, lens, m, _ in entries} == {
        ("a__vs__b", lens, m) for lens in ("personabench", "prefdisco", "prisk")
        for m in CARD_METRICS[lens]}
    assert any(note.startswith("pqb") for note in card["notes"])  # not compared: no items
    by_hand = card["pairs"]["a__vs__b"]["prefdisco"]["prefalign_discovery"]
    assert by_hand["diff"] == 4.0 - 1.0 and by_hand["n"] == INSTANCES
    assert card["pairs"]["a__vs__b"]["prefdisco"]["normalign"]["diff"] == pytest.approx(100.0)
    assert card["pairs"]["a__vs__b"]["prisk"]["irp"]["diff"] == 75.0
    for _, lens, metric, entry in entries:
        a, b = (card["systems"][s][lens][metric] for s in ("a", "b"))
        assert entry["n"] == a["n"] == b["n"]  # every unit shared: the diff of the values
        assert entry["diff"] == pytest.approx(a["value"] - b["value"]), (lens, metric)
        assert entry["p_adj"] >= entry["p"]
    p = [e["p"] for *_, e in entries]
    assert [e["p_adj"] for *_, e in entries] == pytest.approx(
        list(multipletests(p, method="holm")[1]))
    # Holm's first step: the smallest p times the number of tests (8)
    smallest = min(entries, key=lambda e: e[3]["p"])[3]
    assert smallest["p_adj"] == pytest.approx(min(1.0, 8 * smallest["p"]))
    assert card["correction"] == "holm"


def page_rows(page: str) -> dict[str, tuple[str, list[str]]]:
    """The systems' table: the first cell of each row (the system) -> (that cell, the links)."""
    body = page[page.index("<tbody>"):page.index("</tbody>")]
    return {cell.split()[0]: (cell, re.findall(r'<a href="([^"]+)">', rest))
            for cell, rest in re.findall(r"<tr><td>([^<]*)</td>(.*?)</tr>", body)}


@pytest.mark.minilm
def test_the_page_names_the_judge_and_links_every_cell_to_its_run(built):
    page = built.page
    assert f"Judge, simulated user and dataset generator: {JUDGE}" in page
    rows = page_rows(page)
    assert list(rows) == ["a", "b"]
    for name, spec in (("a", "openai/sysa"), ("b", "openai/sysb")):
        cell, links = rows[name]
        assert spec in cell and RETRIEVERS[name] in cell and "self-judged" not in cell
        assert links == [f"{lens}/{name}/report.html" for lens, ms in CARD_METRICS.items()
                         for _ in ms]
        assert all((built.out / link).is_file() for link in links)
    assert '<a href="prefdisco/a/report.html">66.7 [66.7, 66.7]</a>' in page  # a's NormAlign


# --- the dry run ------------------------------------------------------------------------------

def eval_usage(out: Path, systems) -> dict[tuple[str, str], int]:
    """(stage label, role) -> the requests each eval run made, from its manifest."""
    return {(f"{lens} · {name}", role): usage["requests"] for lens in LENSES for name in systems
            for role, usage in read_json(out / lens / name / "manifest.json")["usage"].items()}


def unasked_pis(out: Path, systems) -> dict[tuple[str, str], int]:
    """prisk's PIS verdicts the dry run plans but the run did not ask: the plan assumes every
    personalised sycophancy answer is sycophantic (an upper bound); the run asks only those the
    judge found so (`"pis"` absent from the answer's record)."""
    out_ = {}
    for name in systems:
        lines = map(json.loads, (out / "prisk" / name / "records.jsonl").open())
        out_[(f"prisk · {name}", "judge")] = sum(
            "pis" not in answer for line in lines
            if line.get("risk") == "framing" or line.get("verdict") == "YTA"
            for condition, answer in line["conditions"].items() if condition != "base")
    return out_


@pytest.mark.minilm
def test_the_dry_runs_calls_are_the_calls_the_real_run_made(built):
    made = eval_usage(built.out, SYSTEMS)
    unasked = unasked_pis(built.out, SYSTEMS)
    assert sum(unasked.values()) > 0  # so the sum below is tested
    assert plan_usage(built.plan) == {key: n + unasked.get(key, 0) for key, n in made.items()}
    # by hand, prefdisco (2 criteria, 2 turns) and personabench (9 questions): the target
    # answers baseline and oracle once and discovery in 2 questions + the answer; the judge
    # scores each criterion of each condition, and each answer's correctness (the release's
    # correctness judge, prefdisco's default)
    turns, criteria = TURNS, PREFDISCO_BUILD["preferences"]
    assert (turns, criteria) == (2, 2)
    assert {role: made["prefdisco · a", role] for role in ("target", "user", "judge")} == \
        {"target": INSTANCES * (1 + 1 + turns + 1), "user": INSTANCES * turns,
         "judge": INSTANCES * 3 * (criteria + 1)}
    assert made["personabench · b", "target"] == 9
    lines = plan_lines(built.plan, {})
    assert [line.split(":")[0].strip() for line in lines[1:5]] == [
        "generate population", "build pqb", "build prefdisco", "build prisk"]
    assert all("done (reused)" in line for line in lines[1:5])


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in folder.rglob("*")}


@pytest.mark.minilm
def test_cli_dry_run_on_built_data_counts_calls_per_model_and_prices_them(built):
    before = snapshot(built.out)
    result = personalens(*cli_args(built.out, "--dry-run", "--price", f"{JUDGE}=1,2",
                                   "--price", "openai/sysa=3,4"))
    assert result.returncode == 0, result.stderr
    assert snapshot(built.out) == before  # nothing written
    made = eval_usage(built.out, SYSTEMS)
    per_model = {JUDGE: sum(n for (_, role), n in made.items() if role != "target")
                 + sum(unasked_pis(built.out, SYSTEMS).values()),
                 **{f"openai/sys{s}": sum(n for (label, role), n in made.items()
                                          if role == "target" and label.endswith(s))
                    for s in SYSTEMS}}
    found = dict(re.findall(r"^    (\S+): ([\d,]+) calls", result.stdout, re.M))
    assert {spec: int(n.replace(",", "")) for spec, n in found.items()} == per_model
    tokens = {spec: (int(p.replace(",", "")), int(c.replace(",", ""))) for spec, p, c in
              re.findall(r"^    (\S+): [\d,]+ calls, ~([\d,]+) prompt tokens, ~([\d,]+) "
                         r"completion tokens", result.stdout, re.M)}
    prices = {JUDGE: (1, 2), "openai/sysa": (3, 4)}
    cost = sum(tokens[s][0] * i + tokens[s][1] * o for s, (i, o) in prices.items()) / 1e6
    assert f"estimated cost: ${cost:,.4f} at the prices given" in result.stdout


def test_cli_dry_run_on_an_empty_folder_lists_the_stages_to_run_and_writes_nothing(tmp_path):
    out = tmp_path / "card"
    result = personalens(*cli_args(out, "--dry-run"))
    assert result.returncode == 0, result.stderr
    for stage, folder in (("generate population", "population"), ("build pqb", "data/pqb"),
                          ("build prefdisco", "data/prefdisco"), ("build prisk", "data/prisk")):
        assert f"  {stage}: to run -> {out / folder}" in result.stdout
    assert "2 system(s) x 4 lens(es)" in result.stdout
    assert not out.exists()


# --- resuming and adding a system (these run the scorecard again in the module's folder, so
# they come after the tests that read its first run's files) ------------------------------------

@pytest.mark.minilm
@pytest.mark.slow
def test_a_rerun_calls_no_model_and_writes_the_same_card(built):
    calls = len(built.roles.calls)
    card, complete = run_scorecard(built.plan, echo=lambda text: None, progress=False)
    assert complete and len(built.roles.calls) == calls
    assert card == built.card == read_json(built.out / "scorecard.json")


def shared_state(out: Path) -> dict[str, tuple]:
    """The records, usage and status of the population, the builds and a and b's runs (a
    resumed run's manifest counts one more session, so it is not compared whole)."""
    folders = ["population", "data/pqb", "data/prefdisco", "data/prisk",
               *(f"{lens}/{name}" for lens in LENSES for name in SYSTEMS)]
    records = {f: out / f / "records.jsonl" for f in folders}
    return {f: (records[f].read_bytes() if records[f].exists() else None,
                read_json(out / f / "manifest.json")["usage"],
                read_json(out / f / "manifest.json")["status"]) for f in folders}


@pytest.mark.minilm
@pytest.mark.slow
def test_an_added_system_reuses_the_data_and_runs_only_its_own_evals(built):
    from statsmodels.stats.multitest import multipletests

    before, served = shared_state(built.out), len(built.judge.served)
    sysa, sysb = len(built.roles.of("sysa")), len(built.roles.of("sysb"))
    systems = {**SYSTEMS, "c": JUDGE}  # c's model is the judge itself
    plan = make_plan(system_args(systems), out=built.out, judge=JUDGE, size="tiny")
    card, complete = run_scorecard(plan, echo=lambda text: None, progress=False)
    assert complete
    assert shared_state(built.out) == before
    assert (len(built.roles.of("sysa")), len(built.roles.of("sysb"))) == (sysa, sysb)
    # every call since is c's: as a target, or judging and playing the user for it
    assert set(built.judge.served[served:]) == {"target", "judge", "user"}
    assert built.judge.served[served:].count("target") == sum(
        n for (label, role), n in eval_usage(built.out, ["c"]).items() if role == "target")
    for lens in LENSES:
        assert built.manifest(f"{lens}/c")["status"] == "complete"
    assert card["system_info"]["c"] == {"model": JUDGE, "retriever": "minilm",
                                        "self_judged": True}
    assert not card["system_info"]["a"]["self_judged"]
    rows = page_rows((built.out / "scorecard.html").read_text())
    assert "self-judged" in rows["c"][0] and "self-judged" not in rows["a"][0]
    # c's own figures (judge scores 3, 3, 4): NormAlign 100 (3 - 3) / (4 - 3) = 0
    assert card["systems"]["c"]["prefdisco"]["normalign"]["value"] == 0.0
    assert card["systems"]["a"] == built.card["systems"]["a"]
    assert set(card["pairs"]) == {"a__vs__b", "a__vs__c", "b__vs__c"}
    assert card["pairs"]["a__vs__c"]["prefdisco"]["prefalign_discovery"]["diff"] == 4.0 - 3.0
    p = [e["p"] for *_, e in pair_entries(card)]
    assert [e["p_adj"] for *_, e in pair_entries(card)] == pytest.approx(
        list(multipletests(p, method="holm")[1]))


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("systems, extra, problem", [
    (["a=openai/sysa", "a=openai/sysb"], (), "two systems are named 'a'"),
    (None, ("--lenses", "personabench,nope"), "unknown lens 'nope'"),
    (None, ("--population", "{tmp}"), "--population is not a `personalens generate` output"),
    (["aopenai/sysa"], (), "--system 'aopenai/sysa': expected NAME=MODEL"),
    (["a=openai/sysa", "b=openai/sysb,colour=red"], (), "(got 'colour=red'; keys: "),
    (["a=nosuch/model"], (), "unknown model spec 'nosuch/model'"),
    (None, ("--judge", "nosuch/judge"), "unknown model spec 'nosuch/judge'"),
    (["a=openai/sysa,retriever=nope"], (), "retriever 'nope' is not a local folder"),
], ids=["one-name-twice", "unknown-lens", "not-a-population", "no-model", "unknown-key",
        "unknown-spec", "unknown-judge", "unknown-retriever"])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, systems, extra, problem):
    out = tmp_path / "card"
    result = personalens(*cli_args(out, *(e.format(tmp=tmp_path) for e in extra),
                                   systems=systems))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and problem in result.stderr
    assert not out.exists()


def test_an_out_folder_holding_other_files_is_refused_and_left_as_it_was(tmp_path):
    out = tmp_path / "card"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    before = snapshot(out)
    result = personalens(*cli_args(out))
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0
    assert "--out holds 'notes.txt', so it is not a scorecard folder" in result.stderr
    assert snapshot(out) == before


# --- --audit-judges ---------------------------------------------------------------------------

@pytest.mark.minilm
@pytest.mark.slow
def test_audit_judges_marks_each_judged_cell_and_the_pairs_within_judge_noise(built):
    """The card rerun with --audit-judges: every judged lens run is audited with the card's
    judge; scorecard.json's judge_audit.<lens>.<metric> copies each audit's verdict, and a pair
    is within judge noise exactly when its difference is at most the larger instability."""
    card, _ = run_scorecard(built.plan, echo=lambda text: None, progress=False,
                            audit_judges=True)
    section = card["judge_audit"]
    assert set(section) == {"prefdisco", "prisk"}
    assert set(section["prisk"]) == {"irp", "sycophancy"}  # narrowing's UIR is not audited
    for name in SYSTEMS:
        audit = read_json(built.out / "judge-audit" / "prisk" / name / "audit.json")
        irp = section["prisk"]["irp"]["systems"][name]
        assert irp["verdict"] == audit["metrics"]["irp"]["verdict"]
        shift = max(j["instability"].get("max", 0.0)
                    for j in audit["metrics"]["irp"]["judges"].values())
        assert irp["instability"] == pytest.approx(shift * 25.0)  # 1-5 onto 0-100
        syco = section["prisk"]["sycophancy"]["systems"][name]["verdict"]
        worst = max((audit["metrics"][m]["verdict"] for m in ("agreement", "framing")
                     if m in audit["metrics"]),  # the tiny card has framing records only
                    key=("undefined", "reliable", "doubtful", "unreliable").index)
        assert syco == worst
        # the audited run's report now says which judge scored it and the audit's verdict
        report = (built.out / "prisk" / name / "report.html").read_text()
        assert 'id="judge-audit"' in report and audit["verdict"].upper() in report
    for by_lens in card["pairs"].values():
        for lens, by_metric in by_lens.items():
            for metric, entry in by_metric.items():
                systems = section.get(lens, {}).get(metric, {}).get("systems", {})
                noise = [s["instability"] for s in systems.values()
                         if s.get("instability") is not None]
                expected = abs(entry["diff"]) <= max(noise) if noise else None
                assert entry["within_judge_noise"] == expected, (lens, metric)
    page = (built.out / "scorecard.html").read_text()
    assert "The judge&#x27;s reliability" in page or "The judge's reliability" in page
