"""The Inspect tasks' parameters are generated from the lenses' options models, as the CLI's
flags are: names, defaults and help are the options'; a task's own default and an old name are
the lens's declaration."""

import inspect

import pytest

from personalens.errors import InputError
from personalens.inspect_tasks.parameters import (
    REQUIRED,
    declaration,
    task_arguments,
    task_parameters,
)
from personalens.lenses.prisk.options import EvalOptions


def _parameters(lens: str):
    return task_parameters(*declaration(lens))


def test_a_parameter_is_its_option_with_its_default_and_help():
    by_name = {p.name: p for p in _parameters("prisk")}
    assert list(by_name) == ["data", "conditions", "risks", "retriever", "k", "max_tokens",
                             "limit", "seed", "condition"]
    assert by_name["data"].default is REQUIRED
    fields = EvalOptions.model_fields
    assert by_name["conditions"].default == ",".join(fields["conditions"].default)
    assert by_name["risks"].default == "irp,sycophancy"  # the task's own: narrowing cannot run
    for name in ("k", "max_tokens", "limit", "seed"):
        assert by_name[name].default == fields[name].default
        assert by_name[name].help == fields[name].description
    assert by_name["limit"].annotation == int | None


def test_the_old_name_condition_still_sets_conditions():
    parameters = _parameters("prefdisco")
    arguments = task_arguments(parameters, (), {"data": "d", "condition": "baseline"})
    assert arguments["conditions"] == "baseline" and "condition" not in arguments
    assert task_arguments(parameters, (), {"data": "d"})["conditions"] == \
        "baseline,discovery,oracle"
    with pytest.raises(InputError, match="give conditions or its old name condition"):
        task_arguments(parameters, (), {"data": "d", "condition": "baseline",
                                        "conditions": "oracle"})


def test_a_comma_list_given_as_a_number_is_read_as_its_text():
    arguments = task_arguments(_parameters("personabench"), ("d",), {"noise": 0.5})
    assert arguments == {"data": "d", "noise": "0.5", "retriever": "minilm", "k": 5,
                         "no_answer": False}


def test_every_registered_task_has_its_declared_parameters_in_its_signature():
    from personalens.inspect_tasks.registry import TASKS

    for lens, task in TASKS.items():
        assert list(inspect.signature(task).parameters) == [p.name for p in _parameters(lens)]
