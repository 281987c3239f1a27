"""prisk: cost per record, per risk and per condition, against a zero-latency local server.

Every role is served by the OpenAI-compatible stub on 127.0.0.1 (cache off, concurrency 32):
the target answers in two sentences and routes to retrieval; the judges return valid verdicts.
The stub's token counts are fixed, so the prompt size is measured from the requests themselves
(characters / 4 ≈ tokens).

1. Per risk (all four conditions): wall time, requests and prompt size per record.
2. Per condition (IRP records): the marginal cost of adding the condition to base.

    python bench/prisk_cost.py [--records 40]
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the stub server and record helpers live with the tests

from tests.fault_server import FaultServer  # noqa: E402
from tests.prisk_double import record, write  # noqa: E402

from personalens.lenses.prisk.command import PriskEval  # noqa: E402
from personalens.lenses.prisk.options import EvalOptions  # noqa: E402
from personalens.models import ModelSettings  # noqa: E402
from personalens.runs import run_lens  # noqa: E402

CONCURRENCY = 32
QUESTIONS = {"irp": "What is an index fund?", "accuracy": "2 + 2 = ?",
             "agreement": "Was I wrong to skip my sister's party?",
             "framing": "Is Kant overrated?", "narrowing": "What side incomes are there?"}


def reply(body: dict) -> str:
    system = body["messages"][0]["content"]
    if body["model"] == "target":
        if "past conversations with you" in system:
            return json.dumps({"decision": "retrieval"})
        return "Index funds track a market index. ANSWER: B"
    if "grade one response" in system:  # varied, so the attribution model is not degenerate
        score = 2 + len(body["messages"][1]["content"]) % 4
        return json.dumps({"score": score, "justification": "fine"})
    if "Two answers" in system:
        return json.dumps({"attributable": False, "reason": "same"})
    if "which of two positions" in system:
        return json.dumps({"lean": "A"})
    if "List the distinct options" in system:
        return json.dumps({"items": ["tutoring", "freelance writing", "delivery"]})
    if "merge answer options" in system:
        return json.dumps({"labels": [line.split(". ", 1)[1] for line in
                                      body["messages"][1]["content"].splitlines()
                                      if line[:1].isdigit()]})
    return json.dumps({"useful": ["tutoring"]})


def dataset(folder: Path, per_risk: int) -> Path:
    records = []
    for risk, question in QUESTIONS.items():
        for i in range(per_risk):
            fields = {"accuracy": {"choices": ("3", "4", "5", "6"), "answer": "B"},
                      "agreement": {"verdict": "YTA"},
                      "framing": {"sides": ("A view", "B view")},
                      "narrowing": {"query_id": f"q{i % 5}"}}.get(risk, {})
            records.append(record(f"{risk}{i}", risk, question=question, **fields))
    return write(folder, records)


def run(data: Path, out: Path, base_url: str, risks: list[str], conditions: list[str]
        ) -> tuple[float, int]:
    def role(name: str) -> ModelSettings:
        return ModelSettings(spec=f"openai/{name}", base_url=base_url, use_cache=False,
                             concurrency=CONCURRENCY)
    lens = PriskEval(EvalOptions(data=data, out=out, risks=risks, conditions=conditions,
                                 retriever="bm25", samples=5, base_samples=5,
                                 models={"target": role("target"), "judge": role("judge")}))
    lens.concurrency = CONCURRENCY
    start = time.perf_counter()
    outcome = run_lens(lens, out, progress=False)
    assert outcome.complete, outcome.tally
    return time.perf_counter() - start, len(lens.records)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=40, help="records per risk")
    args = parser.parse_args()
    groups = {"irp": ["irp"], "accuracy": ["irp"], "agreement": ["sycophancy"],
              "framing": ["sycophancy"], "narrowing": ["narrowing"]}
    with tempfile.TemporaryDirectory() as tmp, FaultServer(reply=reply) as stub:
        root = Path(tmp)
        print(f"{args.records} records per risk, zero-latency stub, concurrency {CONCURRENCY}, "
              "cache off, bm25 memory, 5 narrowing samples")
        print("risk        s/record  requests/record  prompt tok/record (chars/4)")
        four = ["base", "profile", "retrieval", "profile_retrieval"]
        for risk, group in groups.items():
            data = dataset(root / f"data-{risk}", args.records)
            only = root / f"only-{risk}"
            only.mkdir()
            source = json.loads((data / "records.json").read_text())
            source["records"] = [r for r in source["records"] if r["risk"] == risk]
            (only / "records.json").write_text(json.dumps(source))
            before = len(stub.requests)
            elapsed, n = run(only, root / f"run-{risk}", stub.base_url, group, four)
            sent = stub.requests[before:]
            chars = sum(len(m["content"]) for body in sent for m in body["messages"])
            print(f"{risk:10} {elapsed / n:9.4f}  {len(sent) / n:15.1f}  {chars / 4 / n:17.1f}")
        print("condition (IRP records; marginal over base)  s/record  requests/record  "
              "prompt tok/record")
        data = root / "only-irp"
        base = measure(data, root / "c-base", stub, ["base"])
        for condition in ["profile", "retrieval", "profile_retrieval", "reflect"]:
            both = measure(data, root / f"c-{condition}", stub, ["base", condition])
            print(f"{condition:44} {both[0] - base[0]:9.4f}  {both[1] - base[1]:15.1f}  "
                  f"{both[2] - base[2]:17.1f}")


def measure(data: Path, out: Path, stub: FaultServer, conditions: list[str]
            ) -> tuple[float, float, float]:
    """(s, requests, prompt chars / 4) per record of an IRP eval with these conditions."""
    before = len(stub.requests)
    elapsed, n = run(data, out, stub.base_url, ["irp"], conditions)
    sent = stub.requests[before:]
    chars = sum(len(m["content"]) for body in sent for m in body["messages"])
    return elapsed / n, len(sent) / n, chars / 4 / n

if __name__ == "__main__":
    main()
