"""Bad input: one line naming what and where, exit status 2, no run directory left behind."""

import json
import shutil

import pytest

from cli_runner import personalens
from conftest import EXAMPLE

COMMUNITY = "community_example"


def _copy(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(EXAMPLE, data)
    return data / COMMUNITY


def _edit_json(path, change):
    value = json.loads(path.read_text())
    change(value)
    path.write_text(json.dumps(value))


def broken_json(c):
    (c / "eval_info/eval_info_all.json").write_text('[{"Name": "x", ')
    return "eval_info_all.json: invalid JSON at line 1"


def wrong_answer_type(c):
    _edit_json(c / "eval_info/eval_info_all.json",
               lambda v: v[0]["Eval_Info"]["qa"][0].__setitem__("answer", 3.5))
    return "record 0 (Nadia Ferreira) question 0: field 'answer"


def missing_question_key(c):
    _edit_json(c / "eval_info/eval_info_all.json",
               lambda v: v[1]["Eval_Info"]["qa"][2].pop("type"))
    return "record 1 (Kwame Asante) question 2: field 'type': Field required"


def duplicate_q_id(c):
    def change(v):
        v[0]["Eval_Info"]["qa"][1]["q_id"] = v[0]["Eval_Info"]["qa"][0]["q_id"]
    _edit_json(c / "eval_info/eval_info_all.json", change)
    return "duplicate q_id 000000000"


def unresolved_ground_truth(c):
    def change(v):
        first = next(iter(v[0]["segment_id"]))
        v[0]["segment_id"][first] = ["999999999999"]
    _edit_json(c / "eval_info/qa_gt_context_all_noise_0.5.json", change)
    return "segment id 999999999999 is not among Nadia Ferreira's sessions"


def duplicate_segment_id(c):
    def change(v):
        v[0]["Data"][1]["segment_id"] = v[0]["Data"][0]["segment_id"]
    _edit_json(c / "private_data/noise_0.5/user_ai_interaction_data_all.json", change)
    return "(Nadia Ferreira): duplicate segment_id"


def non_utf8(c):
    (c / "private_data/noise_0.5/purchase_history_data_all.json").write_bytes(b'[{"Name": "\xff"}]')
    return "purchase_history_data_all.json: not UTF-8"


def not_a_list(c):
    (c / "eval_info/eval_info_all.json").write_text('{"Name": "x"}')
    return "eval_info_all.json: expected a JSON list, found dict"


def deeply_nested(c):
    (c / "eval_info/eval_info_all.json").write_text("[" * 100_000 + "]" * 100_000)
    return "eval_info_all.json: JSON is nested too deeply"


CASES = [broken_json, wrong_answer_type, missing_question_key, duplicate_q_id,
         unresolved_ground_truth, duplicate_segment_id, non_utf8, not_a_list, deeply_nested]


@pytest.mark.parametrize("corrupt", CASES, ids=[c.__name__ for c in CASES])
def test_malformed_data_is_one_line_and_exit_2(tmp_path, corrupt):
    community = _copy(tmp_path)
    expected = corrupt(community)
    out = tmp_path / "run"
    result = personalens("personabench", "eval", "--data", community, "--no-answer",
                         "--retriever", "bm25", "--out", out)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert expected in result.stderr, result.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, expected", [
    (["--k", "0"], "--k must be at least 1"),
    (["--noise", "0.3"], "noise level 0.3 is not in this dataset (present: 0.0, 0.5)"),
    (["--noise", "abc"], "--noise 'abc' is not a number"),
    (["--model", "gpt-4o"], "unknown model spec 'gpt-4o'"),
    (["--model", "local/nope.gguf"], "local model 'nope.gguf' is neither a bundled model"),
    (["--model", "openai/gpt-4o"], "openai models need an API key in $OPENAI_API_KEY"),
    (["--retriever", "./no-such-model"], "retriever './no-such-model' is not a local folder"),
])
def test_bad_options_are_one_line_and_exit_2(tmp_path, args, expected):
    out = tmp_path / "run"
    result = personalens("personabench", "eval", "--data", EXAMPLE, "--retriever", "bm25",
                         *args, "--out", out)
    assert result.returncode == 2
    assert expected in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert not out.exists()


def test_missing_data_directory(tmp_path):
    result = personalens("personabench", "eval", "--data", tmp_path / "nope", "--out",
                         tmp_path / "run")
    assert result.returncode == 2 and "data directory not found" in result.stderr
