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
