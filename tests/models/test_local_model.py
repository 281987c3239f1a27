"""The one smoke test that runs the bundled GGUF model in-process."""

import asyncio

import pytest

from personalens.models import load_model
from personalens.models.cpu_load import CoreUse, measure
from personalens.models.providers.local_gguf import choose_threads


@pytest.mark.bundled_model
@pytest.mark.slow
def test_bundled_smollm2_answers_one_question():
    model = load_model("local/smollm2-135m", use_cache=False)
    ask = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    completion = asyncio.run(model.complete(ask, temperature=0.0, max_tokens=16, seed=0))
    assert "Paris" in completion.text
    assert completion.usage.prompt_tokens > 10 and 0 < completion.usage.completion_tokens <= 16
    assert model.ledger.as_dict()["target"]["requests"] == 1
    assert completion.finish_reason == "stop" and not completion.truncated
    story = [{"role": "user", "content": "Tell me a long story about a dragon."}]
    cut = asyncio.run(model.complete(story, temperature=0.0, max_tokens=4, seed=0))
    assert cut.truncated and cut.usage.completion_tokens == 4


@pytest.mark.parametrize(("value", "threads"), [(None, 2), ("", 2), ("1", 1), (" 4 ", 4)])
def test_local_threads_come_from_the_environment(monkeypatch, value, threads):
    from personalens.models.providers.local_gguf import LocalGGUFProvider, resolve_gguf
    if value is None:
        monkeypatch.delenv("PERSONALENS_LOCAL_THREADS", raising=False)
    else:
        monkeypatch.setenv("PERSONALENS_LOCAL_THREADS", value)
    provider = LocalGGUFProvider(resolve_gguf("smollm2-135m"))
    assert provider.threads == threads
    # The count changes llama.cpp's replies, so cached replies are kept apart by it.
    assert provider.endpoint.endswith(f"#threads={threads}")
    assert LocalGGUFProvider(resolve_gguf("smollm2-135m"), threads=3).threads == 3


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5", "\u00b2"])
def test_a_bad_thread_count_is_bad_input_naming_the_variable(monkeypatch, value):
    from personalens.errors import InputError
    monkeypatch.setenv("PERSONALENS_LOCAL_THREADS", value)
    with pytest.raises(InputError, match="PERSONALENS_LOCAL_THREADS"):
        load_model("local/smollm2-135m", use_cache=False)


@pytest.mark.parametrize(("cores", "busy", "threads"), [
    (2, 0.0, 2), (2, 0.4, 2),  # a quiet machine: the default, 2
    (2, 0.5, 1), (2, 1.0, 1), (2, 1.49, 1),  # one core taken: 1 thread, not 2 at a barrier
    (2, 2.0, 1), (2, 7.0, 1),  # everything taken: still 1
    (1, 0.0, 1),  # one usable core
    (16, 3.0, 2),  # plenty free: never above the default
])
def test_threads_take_the_cores_other_processes_leave_free(cores, busy, threads):
    assert choose_threads(CoreUse(cores=cores, busy_elsewhere=busy)) == threads


def test_threads_fall_back_to_the_default_when_the_load_cannot_be_read():
    assert choose_threads(None) == 2 and choose_threads(None, default=3) == 3


def test_a_slowed_local_model_says_why_and_what_to_set(monkeypatch, capsys):
    """The thread count stays as set (it changes the replies); the load only brings advice."""
    from personalens.models.providers import local_gguf
    local_gguf.warn_if_slowed.cache_clear()
    monkeypatch.delenv("PERSONALENS_LOCAL_THREADS", raising=False)
    monkeypatch.setattr(local_gguf, "measure", lambda: CoreUse(cores=2, busy_elsewhere=1.0))
    try:
        provider = local_gguf.LocalGGUFProvider(local_gguf.resolve_gguf("smollm2-135m"))
        assert capsys.readouterr().err == ""  # nothing while a command checks its input
        assert provider.threads == 2
        line = local_gguf.warn_if_slowed(2)
        assert local_gguf.warn_if_slowed(2) == line  # once per process: one line
        monkeypatch.setattr(local_gguf, "measure", lambda: CoreUse(cores=2, busy_elsewhere=0.2))
        assert local_gguf.warn_if_slowed(1) is None  # room for one thread: nothing to say
    finally:
        local_gguf.warn_if_slowed.cache_clear()
    assert capsys.readouterr().err == (
        "personalens: other processes keep 1.0 of 2 cores busy, so the local model's 2 threads "
        "will wait for each other and run several times slower; PERSONALENS_LOCAL_THREADS=1 "
        "runs faster here (llama.cpp's replies differ slightly between thread counts: keep one "
        "setting across runs you compare)\n")


def test_a_busy_process_is_measured_as_busy_elsewhere():
    import subprocess
    import sys
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        import time
        time.sleep(0.3)
        use = measure(window=0.5)
    finally:
        spinner.kill()
        spinner.wait()
    assert use is not None and use.cores >= 1
    assert use.busy_elsewhere >= 0.6  # the spinner holds one core; this process is idle
