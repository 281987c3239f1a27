import asyncio
import random

import pydantic
import pytest

from personalens.errors import InputError
from personalens.models import (
    ChatModel,
    ModelCallFailed,
    PermanentModelError,
    RetryPolicy,
    TransientModelError,
    complete_structured,
    load_model,
    validate_spec,
)
from personalens.models.concurrency import AdaptiveLimiter
from personalens.models.providers.scripted import ScriptedProvider
from personalens.models.response_cache import ResponseCache
from personalens.models.retry import parse_retry_after

HELLO = [{"role": "user", "content": "hello"}]


class Flaky:
    """Fails with the given faults in order, then answers 'ok'."""

    def __init__(self, faults):
        self.faults = list(faults)

    def __call__(self, messages, params):
        if self.faults:
            raise self.faults.pop(0)
        return "ok"


def _model(reply, **kwargs) -> tuple[ChatModel, list[float]]:
    slept: list[float] = []

    async def fake_sleep(seconds):
        slept.append(seconds)

    model = ChatModel("scripted", ScriptedProvider(default=reply), sleep=fake_sleep, **kwargs)
    return model, slept


def test_transient_faults_are_retried_and_counted_by_kind():
    flaky = Flaky([TransientModelError("server_error", "500"),
                   TransientModelError("rate_limit", "429", retry_after=7.0)])
    model, slept = _model(flaky)
    completion = asyncio.run(model.complete(HELLO))
    assert completion.text == "ok"
    assert slept[1] == 7.0  # Retry-After honoured exactly
    assert 0.0 <= slept[0] <= 0.5  # full jitter under base_delay * 2**0
    usage = model.ledger.as_dict()["target"]
    assert usage["retries"] == {"rate_limit": 1, "server_error": 1}
    assert usage["requests"] == 1 and usage["failures"] == {}


def test_exhausted_retries_raise_a_recorded_failure():
    model, slept = _model(Flaky([TransientModelError("timeout", "t")] * 10),
                          retry=RetryPolicy(max_attempts=3))
    with pytest.raises(ModelCallFailed) as info:
        asyncio.run(model.complete(HELLO))
    assert info.value.kind == "timeout" and info.value.attempts == 3
    assert len(slept) == 2
    assert model.ledger.as_dict()["target"]["failures"] == {"timeout": 1}


def test_permanent_errors_are_not_retried():
    model, slept = _model(Flaky([PermanentModelError("http_401", "bad key")]))
    with pytest.raises(ModelCallFailed) as info:
        asyncio.run(model.complete(HELLO))
    assert info.value.kind == "http_401" and info.value.attempts == 1 and slept == []


def test_backoff_grows_exponentially_and_caps():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    rng = random.Random(0)
    draws = [policy.delay(a, None, rng) for a in range(6) for _ in range(50)]
    assert max(draws[:50]) <= 1.0 and max(draws[50:100]) <= 2.0
    assert max(draws) <= 5.0 and max(draws[250:]) > 2.0
    assert policy.delay(0, 100.0, rng) == 5.0  # Retry-After is capped at max_delay


def test_parse_retry_after_seconds_and_http_date():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


def test_cache_returns_the_stored_completion_without_calling(tmp_path):
    provider = ScriptedProvider(default="first")
    model = ChatModel("scripted", provider, cache=ResponseCache(tmp_path / "c.sqlite"))
    assert asyncio.run(model.complete(HELLO, temperature=0)).text == "first"
    provider.default = "second"
    again = asyncio.run(model.complete(HELLO, temperature=0))
    assert again.text == "first" and again.cached
    assert asyncio.run(model.complete(HELLO, temperature=1)).text == "second"  # params in key
    assert len(provider.calls) == 2
    assert model.ledger.as_dict()["target"]["cached_requests"] == 1


class Answer(pydantic.BaseModel):
    name: str
    age: int


def test_structured_output_accepts_fenced_json():
    model, _ = _model('```json\n{"name": "Ada", "age": 36}\n```')
    parsed, _ = asyncio.run(complete_structured(model, HELLO, Answer))
    assert parsed == Answer(name="Ada", age=36)
    sent = model.provider.calls[0]
    assert sent == HELLO


def test_structured_output_repairs_once_then_fails():
    replies = iter(['{"name": "Ada"}', '{"name": "Ada", "age": 36}'])
    model, _ = _model(lambda messages, params: next(replies))
    parsed, _ = asyncio.run(complete_structured(model, HELLO, Answer))
    assert parsed.age == 36
    repair_turn = model.provider.calls[1][-1]["content"]
    assert "age" in repair_turn and "not valid" in repair_turn

    bad, _ = _model("not json")
    with pytest.raises(ModelCallFailed) as info:
        asyncio.run(complete_structured(bad, HELLO, Answer))
    assert info.value.kind == "invalid_structured_output"
    assert len(bad.provider.calls) == 2


def test_limiter_halves_on_rate_limit_and_recovers_additively():
    async def scenario():
        limiter = AdaptiveLimiter(8)
        limiter.on_rate_limit()
        limiter.on_rate_limit()
        assert limiter.limit == 2
        for _ in range(2):
            await limiter.on_success()
        assert limiter.limit == 3
        for _ in range(3):
            await limiter.on_success()
        assert limiter.limit == 4
        for _ in range(100):
            await limiter.on_success()
        assert limiter.limit == 8

    asyncio.run(scenario())


def test_limiter_bounds_calls_in_flight():
    async def scenario():
        limiter = AdaptiveLimiter(3)
        peak = 0

        async def work():
            nonlocal peak
            async with limiter.slot():
                peak = max(peak, limiter.in_flight)
                await asyncio.sleep(0.01)

        await asyncio.gather(*(work() for _ in range(20)))
        return peak

    assert asyncio.run(scenario()) == 3


def test_limiter_hands_slots_over_in_order_and_obeys_a_lowered_limit():
    async def scenario():
        limiter = AdaptiveLimiter(2)
        order, peaks = [], []
        release = asyncio.Event()

        async def work(name):
            async with limiter.slot():
                order.append(name)
                peaks.append(limiter.in_flight)
                await release.wait()

        tasks = [asyncio.create_task(work(n)) for n in "abcde"]
        await asyncio.sleep(0)
        assert order == ["a", "b"] and limiter.in_flight == 2
        limiter.on_rate_limit()  # limit 1: the next slot opens only when both have finished
        release.set()
        await asyncio.gather(*tasks)
        return order, peaks, limiter.in_flight

    order, peaks, left = asyncio.run(scenario())
    assert order == list("abcde")
    assert peaks == [1, 2, 1, 1, 1]
    assert left == 0


@pytest.mark.parametrize("handed_over", [False, True])
def test_a_cancelled_waiter_does_not_keep_or_lose_a_slot(handed_over):
    async def scenario():
        limiter = AdaptiveLimiter(1)
        gate = asyncio.Event()

        async def hold():
            async with limiter.slot():
                await gate.wait()

        async def quick():
            async with limiter.slot():
                return limiter.in_flight

        holder = asyncio.create_task(hold())
        await asyncio.sleep(0)
        doomed = asyncio.create_task(quick())
        late = asyncio.create_task(quick())
        await asyncio.sleep(0)
        if handed_over:  # the slot reaches the waiter, which is cancelled before it runs
            limiter._release()
            limiter.in_flight += 1  # the holder still counts itself
        doomed.cancel()
        gate.set()
        in_flight = await asyncio.wait_for(late, 1)
        await holder
        with pytest.raises(asyncio.CancelledError):
            await doomed
        return in_flight, limiter.in_flight, len(limiter._waiters)

    assert asyncio.run(scenario()) == (1, 0, 0)


@pytest.mark.parametrize("spec", ["gpt-4o", "local/", "openai/", "anthropic/claude", ""])
def test_unknown_specs_are_input_errors(spec):
    with pytest.raises(InputError, match="unknown model spec"):
        validate_spec(spec)


def test_local_spec_must_name_a_bundled_model_or_gguf(tmp_path):
    with pytest.raises(InputError, match="neither a bundled model"):
        validate_spec(f"local/{tmp_path / 'missing.gguf'}")
    validate_spec("local/smollm2-135m")


def test_openai_spec_needs_a_key_unless_the_server_is_local(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InputError, match=r"\$OPENAI_API_KEY"):
        load_model("openai/gpt-4o-mini", use_cache=False)
    model = load_model("openai/m", base_url="http://127.0.0.1:9/v1", use_cache=False)
    assert model.provider.endpoint == "http://127.0.0.1:9/v1"


def test_scripted_rules_file(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text('{"rules": [{"pattern": "school", "reply": "Harvard"}], "default": "?"}')
    model = load_model(f"scripted:{rules}", use_cache=False)
    ask = [{"role": "user", "content": "Where did I go to school?"}]
    assert asyncio.run(model.complete(ask)).text == "Harvard"
    assert asyncio.run(model.complete(HELLO)).text == "?"
    rules.write_text('{"rules": [{"pattern": "(", "reply": "x"}]}')
    with pytest.raises(InputError, match="rule 0 field 'pattern'"):
        load_model(f"scripted:{rules}")


def test_a_reply_that_fails_validation_is_never_cached(tmp_path):
    replies = iter(["not json", "still not json", '{"name": "Ada", "age": 36}'])
    provider = ScriptedProvider(default=lambda messages, params: next(replies))
    cache = ResponseCache(tmp_path / "c.sqlite")
    model = ChatModel("scripted", provider, cache=cache)
    with pytest.raises(ModelCallFailed):
        asyncio.run(complete_structured(model, HELLO, Answer))
    # A rerun asks the model again instead of replaying the invalid reply from the cache.
    parsed, completion = asyncio.run(complete_structured(model, HELLO, Answer))
    assert parsed.age == 36 and not completion.cached and len(provider.calls) == 3
    again, completion = asyncio.run(complete_structured(model, HELLO, Answer))
    assert again.age == 36 and completion.cached and len(provider.calls) == 3


def test_usage_of_earlier_sessions_adds_up():
    from personalens.runs.usage import merge_usage

    earlier = {"target": {"requests": 3, "prompt_tokens": 30, "retries": {"timeout": 1}}}
    now = {"target": {"requests": 2, "prompt_tokens": 5, "retries": {"timeout": 2,
                                                                      "rate_limit": 1}},
           "judge": {"requests": 1, "prompt_tokens": 7, "retries": {}}}
    assert merge_usage(earlier, now) == {
        "judge": {"requests": 1, "prompt_tokens": 7, "retries": {}},
        "target": {"requests": 5, "prompt_tokens": 35,
                   "retries": {"rate_limit": 1, "timeout": 3}}}


def test_a_scripted_model_loaded_by_spec_keeps_no_calls_and_a_test_double_does(tmp_path):
    # A CLI run of --model scripted makes one call per item: a kept log would grow with the run.
    model = load_model("scripted", use_cache=False)
    asyncio.run(model.complete([{"role": "user", "content": "hi"}]))
    assert model.provider.calls == []
    provider = ScriptedProvider()
    asyncio.run(provider.send([{"role": "user", "content": "hi"}], {}))
    assert provider.calls == [[{"role": "user", "content": "hi"}]]


def test_a_grammar_reaches_only_providers_that_decode_under_one(tmp_path):
    seen: list[dict] = []

    def reply(messages, params):
        seen.append(params)
        return "ok"

    constrained = ChatModel("scripted", ScriptedProvider(default=reply, constrains_output=True))
    free = ChatModel("scripted", ScriptedProvider(default=reply),
                     cache=ResponseCache(tmp_path / "c.sqlite"))
    asyncio.run(constrained.complete(HELLO, grammar='root ::= "ok"', temperature=0))
    asyncio.run(free.complete(HELLO, grammar='root ::= "ok"', temperature=0))
    assert seen == [{"grammar": 'root ::= "ok"', "temperature": 0}, {"temperature": 0}]
    # An API model's cache key is the one it had before grammars existed: a hit without one.
    again = asyncio.run(free.complete(HELLO, temperature=0))
    assert again.cached and len(seen) == 2


def test_an_invalid_reply_of_a_deterministic_model_is_a_final_failure():
    """A rerun asks a deterministic model (llama.cpp with a seed, a script) the same thing and
    gets the same invalid reply; an API model may answer differently."""
    bad, _ = _model("not json")
    with pytest.raises(ModelCallFailed) as info:
        asyncio.run(complete_structured(bad, HELLO, Answer))
    assert bad.deterministic and info.value.failure.final

    class Sampled(ScriptedProvider):
        deterministic = False

    api_like = ChatModel("openai/m", Sampled(default="not json"))
    with pytest.raises(ModelCallFailed) as info:
        asyncio.run(complete_structured(api_like, HELLO, Answer))
    assert not info.value.failure.final
    assert "final" not in info.value.failure.model_dump()


def test_the_cache_keeps_the_finish_reason_and_upgrades_an_old_table(tmp_path):
    import sqlite3

    from personalens.models.completion import Completion, Usage

    path = tmp_path / "c.sqlite"
    old = sqlite3.connect(path)  # the table as caches were written before finish reasons
    old.execute("CREATE TABLE completions (key TEXT PRIMARY KEY, text TEXT NOT NULL, "
                "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL)")
    old.execute("INSERT INTO completions VALUES ('old', 'kept', 3, 1)")
    old.commit()
    old.close()
    cache = ResponseCache(path)
    kept = cache.get("old")
    assert (kept.text, kept.usage, kept.finish_reason) == ("kept", Usage(3, 1), None)
    cache.put("cut", Completion("half an ans", Usage(5, 3), finish_reason="length"))
    cache.close()
    again = ResponseCache(path).get("cut")  # reopening an upgraded table changes nothing
    assert again.finish_reason == "length" and again.truncated and not kept.truncated


def test_an_openai_compatible_server_says_when_it_cut_a_reply():
    from tests.fault_server import FaultServer

    with FaultServer(reply=lambda body: "one two three four five") as server:
        model = load_model("openai/m", base_url=server.base_url, use_cache=False)

        async def ask_twice():
            try:
                return (await model.complete(HELLO, max_tokens=8),
                        await model.complete(HELLO, max_tokens=2))
            finally:
                await model.aclose()

        whole, cut = asyncio.run(ask_twice())
    assert (whole.text, whole.finish_reason, whole.truncated) == (
        "one two three four five", "stop", False)
    assert (cut.text, cut.finish_reason, cut.truncated) == ("one two", "length", True)


def test_a_scripted_reply_can_script_a_cut_off_answer():
    from personalens.models.completion import Completion

    provider = ScriptedProvider(default=lambda messages, params: Completion(
        "ANSWER", finish_reason="length"))
    cut = asyncio.run(ChatModel("scripted", provider).complete(HELLO))
    assert cut.truncated
    assert asyncio.run(load_model("scripted", use_cache=False).complete(HELLO)).finish_reason \
        == "stop"
