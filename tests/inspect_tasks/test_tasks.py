"""The lenses as Inspect tasks agree with the lenses' own commands: the same small data and the
same scripted roles give the same figures (to 1e-9), through Inspect's model roles."""

import json
from pathlib import Path

import pytest

from personalens.population.release_reader import load_community
from tests import prefdisco_data as data
from tests.conftest import EXAMPLE, SHARED
from tests.prefdisco_double import Roles, judge_table, scripted_target, user_by_problem

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
PQB_QUERIES = SHARED / "anchors/pqb/dataset/Musical_Instruments.excerpt.json"
PQB_META = Path(__file__).parents[1] / "fixtures/pqb/meta_Musical_Instruments.jsonl"


def run_inspect(task, tmp_path, model: str, **roles: str):
    """One Inspect eval in this process (`personalens/<spec>` models, fresh for each eval:
    Inspect keeps a model per name, and each test scripts its own); the log as Inspect's own
    reader reads it back."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    [log] = inspect_eval(task, model=fresh_model(model), log_dir=str(tmp_path / "logs"),
                         model_roles={r: fresh_model(m) for r, m in roles.items()} or None,
                         display="none")
    assert log.status == "success", log.error
    return read_eval_log(log.location)


def fresh_model(spec: str):
    from inspect_ai.model import get_model

    return get_model(f"personalens/{spec}", memoize=False)


def inspect_figures(log) -> dict[str, float]:
    [score] = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


# --- personabench ------------------------------------------------------------------------------

def _gold_answerer():
    """Answers with the gold answer's JSON for the question (the last person's, where two
    people share a question text), so F1 is 1 for most questions and 0 for a few."""
    community = load_community(EXAMPLE / "community_example", ["0.0"])
    gold = {q.question: q.answer for qs in community.questions.values() for q in qs}

    def reply(messages, params):
        return json.dumps(gold[messages[-1]["content"].rsplit("Question:", 1)[-1].strip()])
    return reply


def test_personabench_task_agrees_with_personabench_eval(tmp_path, monkeypatch):
    from personalens.inspect_tasks.registry import personabench
    from personalens.lenses.personabench.command import run_eval
    from personalens.lenses.personabench.options import EvalOptions

    Roles(target=_gold_answerer()).install(monkeypatch)
    run_eval(EvalOptions(data=EXAMPLE, out=tmp_path / "run", noise=["0.0", "0.5"],
                         retriever=["bm25"], models={"target": "openai/target"}),
             progress=False)
    own = json.loads((tmp_path / "run" / "metrics.json").read_text())
    log = run_inspect(personabench(data=str(EXAMPLE), noise="0.0,0.5", retriever="bm25"),
                      tmp_path, "openai/target")
    figures = inspect_figures(log)
    assert len(log.samples) == 54  # 27 scored questions x 2 noise levels, ids = item keys
    assert {s.id for s in log.samples} == {json.loads(line)["key"] for line in
                                           (tmp_path / "run" / "records.jsonl").read_text()
                                           .splitlines()}
    for condition in own["conditions"]:
        label = f"bm25@{condition['noise']:g}"
        assert figures[f"{label}/recall"] == pytest.approx(
            condition["retrieval"]["overall"]["recall"], abs=1e-9)
        assert figures[f"{label}/ndcg"] == pytest.approx(
            condition["retrieval"]["overall"]["ndcg"], abs=1e-9)
        assert figures[f"{label}/f1"] == pytest.approx(
            condition["end_to_end"]["overall"]["f1"], abs=1e-9)
    # 25 of 27 answers score F1 = 1 (two question texts are shared by two people).
    assert figures["bm25@0/f1"] == pytest.approx(25 / 27, abs=1e-9)


def test_two_tasks_of_one_lens_in_one_eval_keep_their_own_data(tmp_path):
    from inspect_ai import eval as inspect_eval

    from personalens.inspect_tasks.registry import personabench

    tasks = [personabench(data=str(EXAMPLE), noise=noise, retriever="bm25", no_answer=True)
             for noise in ("0.0", "0.5")]
    logs = inspect_eval(tasks, model=fresh_model("scripted"), log_dir=str(tmp_path),
                        display="none")
    by_noise = {log.eval.metadata["task_args"]["noise"]: inspect_figures(log) for log in logs}
    assert {noise: sorted(figures) for noise, figures in by_noise.items()} == {
        "0.0": ["bm25@0/ndcg", "bm25@0/recall"], "0.5": ["bm25@0.5/ndcg", "bm25@0.5/recall"]}
    assert all(log.status == "success" and len(log.samples) == 27 for log in logs)


# --- prefdisco ---------------------------------------------------------------------------------

W = {"visual": 0.75, "brevity": 0.25}
# (visual, brevity) per instance and condition; PrefAlign = 0.75 v + 0.25 b
HAND = {"p1": {"baseline": (1, 5), "discovery": (4, 2), "oracle": (5, 1)},  # 2.0, 3.5, 4.0
        "p2": {"baseline": (1, 1), "discovery": (4, 2), "oracle": (5, 5)}}  # 1.0, 3.5, 5.0
TABLE = {f"{pid}/{c}": {"visual": v, "brevity": b}
         for pid, by_condition in HAND.items() for c, (v, b) in by_condition.items()}


def _prefdisco_roles(monkeypatch) -> Roles:
    return Roles(target=scripted_target(questions={"p1": 1, "p2": 2}),
                 user=user_by_problem({"p1": "I like visual diagrams.", "p2": "Short steps."}),
                 judge=judge_table(TABLE)).install(monkeypatch)


def test_prefdisco_task_agrees_with_prefdisco_eval(tmp_path, monkeypatch):
    from personalens.inspect_tasks.registry import prefdisco
    from tests.prefdisco_double import evaluate

    folder = data.folder(tmp_path / "data", {"alpha": [data.weighted("p1", W),
                                                       data.weighted("p2", W)]})
    roles = _prefdisco_roles(monkeypatch)
    own, _, _ = evaluate(folder, tmp_path / "run", roles)
    own_calls = len(roles.calls)
    log = run_inspect(prefdisco(data=str(folder)), tmp_path, "openai/target",
                      user="openai/user", judge="openai/judge")
    figures = inspect_figures(log)
    # The same calls, role by role: the dialogue and the judging ran through Inspect's roles.
    assert sorted(c[0] for c in roles.calls[own_calls:]) == sorted(c[0] for c in
                                                                   roles.calls[:own_calls])
    for condition, pa in (("baseline", 1.5), ("discovery", 3.5), ("oracle", 4.5)):
        assert figures[f"{condition}/prefalign"] == pytest.approx(pa, abs=1e-9)
        assert own["prefalign"][condition]["mean"] == pytest.approx(pa, abs=1e-9)
        assert figures[f"{condition}/accuracy"] == pytest.approx(
            own["accuracy"][condition]["mean"], abs=1e-9)
    # NormAlign = 100 (PA_disc - PA_base) / (PA_oracle - PA_base) = 100 * 2.0 / 3.0.
    assert figures["normalign/alpha"] == pytest.approx(200 / 3, abs=1e-9)
    assert figures["normalign/overall"] == pytest.approx(own["normalign"]["overall"]["value"],
                                                         abs=1e-9)


def test_prefdisco_task_takes_the_correctness_method(tmp_path, monkeypatch):
    from personalens.inspect_tasks.registry import prefdisco
    from tests.prefdisco_double import is_correctness_request

    folder = data.folder(tmp_path / "data", {"alpha": [data.weighted("p1", W),
                                                       data.weighted("p2", W)]})
    roles = _prefdisco_roles(monkeypatch)
    run_inspect(prefdisco(data=str(folder), correctness="rules"), tmp_path, "openai/target",
                user="openai/user", judge="openai/judge")
    judged = [params for _, params in roles.of("judge")]
    # 2 instances x 3 conditions x 2 criteria: rubric verdicts only; the default (the
    # release's correctness judge) would add one correctness verdict per answer (6 more).
    assert len(judged) == 12 and not any(map(is_correctness_request, judged))


def test_a_model_that_decodes_under_a_grammar_gets_the_same_requests_through_inspect(
        tmp_path, monkeypatch):
    """personalens's own models behind Inspect (as `personalens/smollm2-135m` is) keep what
    the lens relies on: the grammar of each turn and verdict reaches them, request for request
    as in the lens's own run."""
    from personalens.inspect_tasks.registry import prefdisco
    from tests.prefdisco_double import ConstrainedRoles, evaluate

    folder = data.folder(tmp_path / "data", {"alpha": [data.weighted("p1", W)]})
    roles = ConstrainedRoles(target=scripted_target(questions={"p1": 1}),
                             user=user_by_problem({"p1": "I like visual diagrams."}),
                             judge=judge_table(TABLE)).install(monkeypatch)
    evaluate(folder, tmp_path / "run", roles)
    own = list(roles.calls)
    run_inspect(prefdisco(data=str(folder)), tmp_path, "openai/target", user="openai/user",
                judge="openai/judge")
    through_inspect = roles.calls[len(own):]
    assert any("grammar" in params for _, _, params in own)
    assert sorted(map(_canonical, through_inspect)) == sorted(map(_canonical, own))


def _canonical(call) -> str:
    return json.dumps(call, sort_keys=True)

# --- prisk -------------------------------------------------------------------------------------

def test_prisk_task_agrees_with_prisk_eval(tmp_path, monkeypatch):
    from personalens.inspect_tasks.registry import prisk
    from personalens.lenses.prisk.command import run_eval
    from personalens.lenses.prisk.options import EvalOptions
    from tests.prisk_double import CONDITIONS, behaviours, dataset

    Roles(**{f"scripted-{n}": b for n, b in behaviours().items()}).install(monkeypatch)
    folder = dataset(tmp_path / "data")
    run_eval(EvalOptions.parse(data=folder, out=tmp_path / "run", retriever="bm25",
                               risks=["irp", "sycophancy"],
                               models={"target": "openai/scripted-target",
                                       "judge": "openai/scripted-judge"}), progress=False)
    own = json.loads((tmp_path / "run" / "metrics.json").read_text())
    log = run_inspect(prisk(data=str(folder), retriever="bm25"), tmp_path,
                      "openai/scripted-target", judge="openai/scripted-judge")
    figures = inspect_figures(log)
    assert len(log.samples) == 5  # the two narrowing records are not Inspect samples
    # IRP by hand (prisk_double: i1 scores 5,3,4,2, i2 5,4,4,3 and the benchmark record a1's
    # answers 5,2,4,3): means 5, 3, 4, 8/3.
    for condition, mean in zip(CONDITIONS, (5.0, 3.0, 4.0, 8 / 3), strict=True):
        assert own["irp"][condition]["mean"] == pytest.approx(mean)
        assert figures[f"irp_normalised/{condition}"] == pytest.approx((mean - 1) / 4, abs=1e-9)
    for risk, by_condition in own["risk_means"].items():
        for condition, cell in by_condition.items():
            assert figures[f"{risk}/{condition}"] == pytest.approx(cell["value"], abs=1e-9)
    assert figures["inversion/full_flip_rate"] == own["inversion"]["full_flip_rate"] == 1.0


def test_prisk_task_refuses_narrowing_and_says_where_it_runs(tmp_path):
    from personalens.errors import InputError
    from personalens.inspect_tasks.registry import prisk

    with pytest.raises(InputError, match="personalens prisk eval --risks narrowing"):
        prisk(data=str(tmp_path), risks="irp,narrowing")


# --- pqb ---------------------------------------------------------------------------------------

def test_pqb_task_agrees_with_pqb_eval_without_a_model_call(tmp_path):
    from personalens.inspect_tasks.registry import pqb
    from personalens.lenses.pqb.command import run_eval
    from personalens.lenses.pqb.options import EvalOptions

    run_eval(EvalOptions.parse(queries=PQB_QUERIES, meta=PQB_META, retriever="bm25",
                               out=tmp_path / "run"), progress=False)
    own = json.loads((tmp_path / "run" / "metrics.json").read_text())
    # The scripted rules file is empty: a model call would get "I don't know." and no rule.
    log = run_inspect(pqb(queries=str(PQB_QUERIES), meta=str(PQB_META)), tmp_path, "scripted")
    figures = inspect_figures(log)
    assert len(log.samples) == 9 and all(not s.model_usage for s in log.samples)
    for k in ("1", "5", "10", "20"):
        for definition in ("paper", "all_pairs"):
            assert figures.get(f"flip_rate_{definition}@{k}") == pytest.approx(
                own["flip_rate"][definition][k]["value"], abs=1e-9)
        assert figures[f"hit_clean@{k}"] == pytest.approx(own["hit"]["clean"][k]["value"],
                                                          abs=1e-9)
    # MRR of the clean queries = the mean of the samples' reciprocal ranks.
    rr = [s.scores["lens_record"].value["rr_clean"] for s in log.samples]
    assert figures["mrr_clean"] == pytest.approx(sum(rr) / 9, abs=1e-9)
    assert figures["mrr_clean"] == pytest.approx(own["mrr"]["clean"]["value"], abs=1e-9)


# --- the bridge's request conversion -------------------------------------------------------------

def test_a_lens_request_crosses_inspect_and_comes_back_as_sent():
    from personalens.inspect_tasks.generation import to_chat, to_config, to_messages, to_params
    from personalens.lenses.prefdisco.evaluation import OpenVerdict
    from personalens.models.structured import response_format

    params = {"max_tokens": 48, "temperature": 0.0, "seed": 3, "stop": ["\n\n"],
              "response_format": response_format(OpenVerdict), "grammar": 'root ::= "B"'}
    config = to_config(params)
    assert (config.max_tokens, config.temperature, config.seed, config.stop_seqs) == (
        48, 0.0, 3, ["\n\n"])
    assert config.response_schema.name == "OpenVerdict"
    # Inspect's JSONSchema keeps every keyword that constrains a reply; only `title`s (names
    # for people) do not cross.
    schema = params["response_format"]["json_schema"]["schema"]
    assert to_params(config) == {**params, "response_format": {
        "type": "json_schema", "json_schema": {"name": "OpenVerdict",
                                               "schema": _untitled(schema)}}}
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello"}]
    assert to_messages(to_chat(messages)) == messages


def _untitled(schema):
    if isinstance(schema, dict):
        return {k: _untitled(v) for k, v in schema.items() if k != "title"}
    return schema


def test_a_param_inspect_cannot_carry_is_refused_not_dropped():
    from personalens.inspect_tasks.generation import to_config

    with pytest.raises(ValueError, match="logit_bias"):
        to_config({"max_tokens": 8, "logit_bias": {"1": 5}})


def test_a_second_epoch_is_refused_rather_than_replayed(tmp_path):
    from inspect_ai import eval as inspect_eval

    from personalens.inspect_tasks.registry import pqb

    [log] = inspect_eval(pqb(queries=str(PQB_QUERIES), meta=str(PQB_META)), epochs=2, limit=1,
                         model=fresh_model("scripted"), log_dir=str(tmp_path), display="none")
    assert log.status == "error" and "run one epoch" in log.error.message


def test_pqb_reports_no_typo_rank_for_a_record_without_a_typo_query():
    from personalens.lenses.pqb.inspect_task import figures

    line = {"rank_clean": 2, "syntax_query": "q", "rank_typo": None, "typo_query": None}
    assert figures(line) == {"rr_clean": 0.5}
    assert figures({**line, "typo_query": "qq"}) == {"rr_clean": 0.5, "rr_typo": 0.0}
