"""prefdisco: time and tokens per instance and condition, and the runner's overhead.

Every role (target, simulated user, judge) is served by the same zero-latency OpenAI-compatible
stub on 127.0.0.1 (cache off), answering by model name: the target asks one question in
discovery and then answers, the user replies in a sentence, the judge returns a verdict.

1. Per condition: a fresh eval of that condition alone; wall time per instance and prompt /
   completion tokens per instance (from the manifest's usage).
2. Overhead: the whole eval (harness, dialogue runner, judge, records, report) at concurrency
   32, against bare AsyncOpenAI calls that replay exactly the requests the eval sent, cut in
   order into as many sequential chains as the eval has items (32 chains at once), so the bare
   side has the same number of dependent steps without any of personalens. Rounds alternate the
   order. The timed rounds use a stub in its own process (as a real server is), so the server
   does not share the client's interpreter lock. Target: eval / bare <= 1.25.

   Two bare sides: the SDK's `chat.completions.create`, as a user would call it, and its
   documented low-level `client.post`, which personalens uses; against the second the ratio is
   the cost of the lens and harness alone.

    python bench/prefdisco_runner.py [--instances 200] [--rounds 3]
"""

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the stub server and data helpers live with the tests

import openai  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402
from tests.fault_server import FaultServer  # noqa: E402

from personalens.lenses.prefdisco.command import PrefdiscoEval  # noqa: E402
from personalens.lenses.prefdisco.options import EvalOptions  # noqa: E402
from personalens.models import ModelSettings  # noqa: E402
from personalens.runs import run_lens  # noqa: E402
from prefdisco_data import record, write  # noqa: E402

CONCURRENCY = 32
ROW = {"question": "2 + 2 = ?", "subject": "math", "choices": ["3", "4", "5", "6"], "answer": 1}


def reply(body: dict) -> str:
    messages = body["messages"]
    if body["model"] == "judge":
        return json.dumps({"score": 4, "justification": "fits"})
    if body["model"] == "user":
        return "I like short steps and a diagram."
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    if "###ACTION###" not in system:
        return "Two and two make four.\nANSWER: B"
    if not any(m["role"] == "assistant" for m in messages):
        return "###ACTION###: ask_question\n###RESPONSE###: How much detail do you want?"
    return "###ACTION###: final_answer\n###RESPONSE###: Four, shown in one step.\nANSWER: B"


def serve(queue, stop) -> None:
    """The stub in its own process, as a real server is: it does not share the client's GIL."""
    with FaultServer(reply=reply) as stub:
        queue.put(stub.base_url)
        stop.wait()


class RemoteStub:
    def __enter__(self) -> str:
        context = multiprocessing.get_context("spawn")
        queue, self.stop = context.Queue(), context.Event()
        self.process = context.Process(target=serve, args=(queue, self.stop), daemon=True)
        self.process.start()
        return queue.get(timeout=60)

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.process.join(timeout=10)


def dataset(folder: Path, n: int) -> Path:
    rows = [record(f"p{i}", ROW, {"visual": "diagrams", "brevity": "short steps"},
                   {"visual": 0.6, "brevity": 0.4}) for i in range(n)]
    return write(folder / "mmlu.jsonl", rows)


def options(data: Path, out: Path, base_url: str, conditions: list[str]) -> EvalOptions:
    def role(name: str) -> ModelSettings:
        return ModelSettings(spec=f"openai/{name}", base_url=base_url, use_cache=False,
                             concurrency=CONCURRENCY)
    # The rules check correctness, as when bench/RESULTS.md's figures were measured (the
    # default correctness judge adds one judge call per answer).
    return EvalOptions(data=data, out=out, conditions=conditions, correctness="rules",
                       models={r: role(r) for r in ("target", "user", "judge")})


def run_eval(data: Path, out: Path, base_url: str, conditions: list[str]) -> float:
    lens = PrefdiscoEval(options(data, out, base_url, conditions))
    lens.concurrency = CONCURRENCY
    start = time.perf_counter()
    outcome = run_lens(lens, out, progress=False)
    elapsed = time.perf_counter() - start
    assert outcome.complete, outcome.tally
    return elapsed


async def bare(base_url: str, chains: list[list[dict]], low_level: bool) -> float:
    """The same requests straight through the SDK: `create`, or the low-level `post` that
    personalens itself uses (which skips the SDK's type transform of the body)."""
    client = openai.AsyncOpenAI(api_key="x", base_url=base_url, max_retries=0)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def send(body: dict) -> ChatCompletion:
        if low_level:
            return await client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        return await client.chat.completions.create(**body)

    async def chain(requests: list[dict]) -> None:
        async with gate:
            for body in requests:
                response = await send(body)
                assert response.choices[0].message.content

    start = time.perf_counter()
    await asyncio.gather(*(chain(c) for c in chains))
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


def chains_of(requests: list[dict], items: int) -> list[list[dict]]:
    """The eval's requests split into `items` equal sequential chains, in the order sent."""
    size = max(len(requests) // items, 1)
    return [requests[i:i + size] for i in range(0, len(requests), size)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FaultServer(reply=reply) as stub:
        root = Path(tmp)
        data = dataset(root, args.instances)
        print(f"{args.instances} instances, 2 criteria each, zero-latency stub, "
              f"concurrency {CONCURRENCY}, cache off")
        print("condition  s/instance  prompt tok/instance  completion tok/instance  requests")
        for condition in ("baseline", "discovery", "oracle"):
            before = len(stub.requests)
            elapsed = run_eval(data, root / f"c-{condition}", stub.base_url, [condition])
            usage = json.loads((root / f"c-{condition}" / "manifest.json").read_text())["usage"]
            prompt = sum(u["prompt_tokens"] for u in usage.values())
            completion = sum(u["completion_tokens"] for u in usage.values())
            print(f"{condition:10} {elapsed / args.instances:10.4f}  "
                  f"{prompt / args.instances:19.1f}  {completion / args.instances:23.1f}  "
                  f"{len(stub.requests) - before}")
        conditions = ["baseline", "discovery", "oracle"]
        items = args.instances * len(conditions)
        start = len(stub.requests)
        run_eval(data, root / "recorded", stub.base_url, conditions)
        # Every field the eval sent (response_format, max_tokens, ...): the bare side pays for
        # the same request bodies.
        chains = chains_of([dict(b) for b in stub.requests[start:]], items)
    with tempfile.TemporaryDirectory() as tmp, RemoteStub() as base_url:
        root = Path(tmp)
        data = dataset(root, args.instances)
        times: dict[str, list[float]] = {"eval": [], "create": [], "post": []}
        sides = list(times)
        for round_number in range(args.rounds):
            shift = round_number % len(sides)  # each side takes each place in the order
            for side in sides[shift:] + sides[:shift]:
                if side == "eval":
                    elapsed = run_eval(data, root / f"round-{round_number}", base_url,
                                       conditions)
                else:
                    elapsed = asyncio.run(bare(base_url, chains, low_level=side == "post"))
                times[side].append(elapsed)
        median = {side: statistics.median(values) for side, values in times.items()}
        labels = {"eval": f"eval (whole lens, {items} items)",
                  "create": "bare chat.completions.create of the same bodies",
                  "post": "bare client.post of the same bodies (personalens's call)"}
        for side in sides:
            print(f"{labels[side]}: median {median[side]:.2f} s over {args.rounds} rounds "
                  f"{[round(t, 2) for t in times[side]]}")
        print(f"overhead ratio eval / bare create = {median['eval'] / median['create']:.3f} "
              "(target <= 1.25)")
        print(f"overhead ratio eval / bare post   = {median['eval'] / median['post']:.3f} "
              "(the lens and harness alone)")

if __name__ == "__main__":
    main()
