"""What a new user meets first: --version, every command's help ending with an example, and
`--model scripted` writing a tiny valid population for free."""

import importlib.metadata
import json

import typer
from typer.testing import CliRunner

from personalens.cli.app import app
from personalens.cli.lazy_group import leaf_commands
from personalens.models.providers.schema_instance import schema_instance, word_strings
from personalens.models.settings import load_model
from tests.cli_runner import personalens


def test_version_and_its_short_flag_print_the_installed_version():
    expected = f"personalens {importlib.metadata.version('personalens')}\n"
    for flag in ("--version", "-V"):
        result = CliRunner().invoke(app, [flag])
        assert (result.exit_code, result.output) == (0, expected)


def test_every_command_says_what_it_does_and_ends_its_help_with_an_example():
    root = typer.main.get_command(app)
    paths = [path for path, _ in leaf_commands(root)]
    assert len(paths) == 18 and ("prisk", "stats") in paths and ("scorecard",) in paths
    assert ("judge-audit", "run") in paths and ("judge-audit", "export") in paths
    for path, _ in leaf_commands(root):
        result = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
        assert result.exit_code == 0, path
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert lines[-2].strip() == "Example:", path
        assert lines[-1].strip().startswith("personalens " + " ".join(path) + " "), path
        summary = lines[1].strip()  # the first line after Usage
        assert len(summary.split()) >= 6, (path, summary)


def test_schema_instances_follow_refs_enums_bounds_and_lengths():
    schema = {"type": "object", "$defs": {"Pet": {"type": "object", "properties": {
        "kind": {"enum": ["cat", "dog"]}, "age": {"type": "integer", "minimum": 40}}}},
        "properties": {"name": {"type": "string", "maxLength": 4},
                       "pets": {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/Pet"}},
                       "nick": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                       "score": {"type": "number"}, "ok": {"type": "boolean"},
                       "fixed": {"const": 7}}}
    words = word_strings("a prompt")
    instance = schema_instance(schema, words)
    seed = instance["nick"][1:7]
    assert instance == {"name": f"w{seed}"[:4], "pets": [{"kind": "cat", "age": 40}] * 2,
                        "nick": f"w{seed}2", "score": 1.0, "ok": True, "fixed": 7}
    assert schema_instance(schema, word_strings("a prompt")) == instance  # deterministic


def test_the_bare_scripted_model_answers_text_with_i_dont_know_and_a_schema_with_an_object():
    import asyncio

    model = load_model("scripted", use_cache=False)
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    text = asyncio.run(model.complete([{"role": "user", "content": "Hi"}]))
    structured = asyncio.run(model.complete([{"role": "user", "content": "Where?"}],
                                            response_format=fmt))
    assert text.text == "I don't know."
    assert list(json.loads(structured.text)) == ["city"]


def test_generate_with_the_scripted_model_writes_a_valid_population(tmp_path):
    out = tmp_path / "pop"
    result = personalens("generate", "--model", "scripted", "--people", "3", "--out", out)
    assert result.returncode == 0, result.stderr
    assert "community_0: 3 people" in result.stdout
    checked = personalens("personabench", "validate", out / "synthetic_data" / "community_0")
    assert checked.returncode == 0 and "0 error(s)" in checked.stdout
