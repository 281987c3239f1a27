"""Model-stack overhead and local-model parallelism.

1. N completions through personalens's full stack (ChatModel: limiter, retries, usage; cache
   off) vs a bare openai.AsyncOpenAI loop at the same concurrency, both against the same
   zero-latency OpenAI-compatible stub on 127.0.0.1. Target ratio <= 1.25.
2. The bundled SmolLM2 GGUF: the same prompts with 2 parallel slots vs 1.
"""

import asyncio
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the test server lives with the tests

import openai  # noqa: E402
from tests.fault_server import FaultServer  # noqa: E402

from personalens.models import load_model  # noqa: E402

N = 1000
CONCURRENCY = 8


def messages(i: int) -> list[dict]:
    return [{"role": "user", "content": f"Question: request {i}"}]


async def bare(base_url: str) -> float:
    client = openai.AsyncOpenAI(api_key="x", base_url=base_url, max_retries=0)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(i):
        async with gate:
            r = await client.chat.completions.create(model="m", messages=messages(i))
            return r.choices[0].message.content

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(N)))
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


async def stack(base_url: str) -> float:
    model = load_model("openai/m", base_url=base_url, use_cache=False, concurrency=CONCURRENCY)
    start = time.perf_counter()
    await asyncio.gather(*(model.complete(messages(i)) for i in range(N)))
    elapsed = time.perf_counter() - start
    await model.aclose()
    return elapsed


async def local(slots: int, prompts: int = 8) -> float:
    model = load_model("local/smollm2-135m", use_cache=False, concurrency=slots)
    ask = [[{"role": "user", "content": f"Write one sentence about the number {i}."}]
           for i in range(prompts)]
    await model.complete(ask[0], max_tokens=4)  # load the model outside the timing
    start = time.perf_counter()
    await asyncio.gather(*(model.complete(m, max_tokens=48, temperature=0.0) for m in ask))
    return time.perf_counter() - start


def main() -> None:
    with FaultServer() as stub:
        asyncio.run(bare(stub.base_url))  # warm up both paths once
        t_bare = asyncio.run(bare(stub.base_url))
        t_stack = asyncio.run(stack(stub.base_url))
    print(f"{N} completions at concurrency {CONCURRENCY} against a zero-latency stub")
    print(f"bare AsyncOpenAI {t_bare:7.2f} s")
    print(f"personalens      {t_stack:7.2f} s   ratio = {t_stack / t_bare:.3f} (target <= 1.25)")
    one = asyncio.run(local(1))
    two = asyncio.run(local(2))
    print(f"local SmolLM2, 8 prompts: 1 slot {one:.2f} s, 2 slots {two:.2f} s, "
          f"speed-up {one / two:.2f}x")


if __name__ == "__main__":
    main()
