"""The one smoke test that runs the bundled GGUF model in-process."""

import asyncio

import pytest

from personalens.models import load_model


@pytest.mark.slow
def test_bundled_smollm2_answers_one_question():
    model = load_model("local/smollm2-135m", use_cache=False)
    ask = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    completion = asyncio.run(model.complete(ask, temperature=0.0, max_tokens=16, seed=0))
    assert "Paris" in completion.text
    assert completion.usage.prompt_tokens > 10 and 0 < completion.usage.completion_tokens <= 16
    assert model.ledger.as_dict()["target"]["requests"] == 1


@pytest.mark.parametrize(("value", "threads"), [(None, 2), ("", 2), ("1", 1), (" 4 ", 4)])
def test_local_threads_come_from_the_environment(monkeypatch, value, threads):
    from personalens.models.providers.local_gguf import LocalGGUFProvider, resolve_gguf
    if value is None:
        monkeypatch.delenv("PERSONALENS_LOCAL_THREADS", raising=False)
    else:
        monkeypatch.setenv("PERSONALENS_LOCAL_THREADS", value)
    assert LocalGGUFProvider(resolve_gguf("smollm2-135m"))._threads == threads
    assert LocalGGUFProvider(resolve_gguf("smollm2-135m"), threads=3)._threads == 3


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5", "\u00b2"])
def test_a_bad_thread_count_is_bad_input_naming_the_variable(monkeypatch, value):
    from personalens.errors import InputError
    monkeypatch.setenv("PERSONALENS_LOCAL_THREADS", value)
    with pytest.raises(InputError, match="PERSONALENS_LOCAL_THREADS"):
        load_model("local/smollm2-135m", use_cache=False)
