"""`personalens personabench eval`: validate everything, then run, resume, score and report."""

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

from personalens.errors import InputError
from personalens.lenses.personabench.analysis import summarise
from personalens.lenses.personabench.evaluation import GT_CONTEXT, Evaluation, plan
from personalens.lenses.personabench.report_page import build_report
from personalens.models import RetryPolicy, UsageLedger, load_model, merge_usage, validate_spec
from personalens.population.release_reader import load_communities
from personalens.retrieval import DenseRetriever, get_retriever
from personalens.retrieval.dense import BUNDLED_MINILM
from personalens.runs import RunDirectory, fingerprint, package_versions


@dataclass(frozen=True)
class EvalOptions:
    data: Path
    out: Path
    noises: list[str]
    retrievers: list[str]
    k: int
    model: str | None  # None: retrieval only
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    use_cache: bool = True
    concurrency: int | None = None
    max_attempts: int = 6
    timeout: float = 120.0

    def config(self) -> dict:
        """What identifies the run: resuming with anything different is refused.

        The endpoint is not part of it: the same model may be served from another host later.
        """
        return {"lens": "personabench", "data": str(self.data.resolve()), "noises": self.noises,
                "retrievers": self.retrievers, "k": self.k, "model": self.model}


def normalise_noise(value: str) -> str:
    """'0.5', '.5' and '0.50' all name the release's folder noise_0.5."""
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"--noise {value!r} is not a number") from None
    if not 0.0 <= number < 1.0:
        raise InputError(f"--noise {value} must be in [0, 1)")
    return f"{number:.1f}" if round(number, 1) == number else f"{number:g}"


@dataclass
class Outcome:
    metrics: dict
    run_dir: Path


def run_eval(options: EvalOptions, progress=None) -> Outcome:
    """Validate inputs (nothing is written if any is bad), then evaluate into options.out."""
    if options.k < 1:
        raise InputError(f"--k must be at least 1 (got {options.k})")
    if options.max_attempts < 1:
        raise InputError(f"--max-attempts must be at least 1 (got {options.max_attempts})")
    if options.model is not None:
        validate_spec(options.model)
    data = options.data.resolve()
    communities = load_communities(data, options.noises)
    retrievers = {name: None if name == GT_CONTEXT else get_retriever(name)
                  for name in options.retrievers}
    for retriever in retrievers.values():
        # A model that cannot load must fail before the run directory exists. The bundled
        # MiniLM always loads, and skipping it keeps warm-cache runs from loading it at all.
        if isinstance(retriever, DenseRetriever) and retriever.name != BUNDLED_MINILM:
            retriever.load()
    ledger = UsageLedger()
    model = None if options.model is None else load_model(
        options.model, role="target", ledger=ledger, base_url=options.base_url,
        api_key_env=options.api_key_env, use_cache=options.use_cache,
        concurrency=options.concurrency, retry=RetryPolicy(max_attempts=options.max_attempts),
        timeout=options.timeout)
    items = plan(communities, options.noises, options.retrievers)
    files = [f for c in communities for f in c.files]
    dataset_hash = fingerprint(files, data)
    run = RunDirectory.open(options.out, {
        "command": " ".join(["personalens", *sys.argv[1:]]),
        # The data's hash is part of the identity: resuming over changed files is refused.
        "config": {**options.config(), "dataset_hash": dataset_hash},
        "versions": package_versions(),
        "dataset_hash": dataset_hash,
        "seeds": {"answer": 0},
        "models": {"target": options.model} if options.model else {},
        "base_url": options.base_url,
        "people_without_documents": sorted(
            {f"{c.name}/{p}" for c in communities for n in options.noises
             for p in c.questions if p not in c.levels[n].sessions}),
    })
    status = "interrupted"
    try:
        metrics = _execute(run, items, retrievers, options.k, model, ledger, progress)
        status = "complete" if metrics["complete"] else "incomplete"
    finally:
        run.close(status)
    return Outcome(metrics, options.out)


def _execute(run, items, retrievers, k, model, ledger, progress) -> dict:
    ok = run.successful_records()  # failed items are retried
    todo = [item for item in items if item.key not in ok]
    if progress is not None:
        progress.start(total=len(items), completed=len(items) - len(todo))
    evaluation = Evaluation(run, retrievers, k, model,
                            on_record=(lambda r: progress.advance()) if progress else
                            (lambda r: None))
    try:
        asyncio.run(evaluation.run_items(todo))
    finally:
        if progress is not None:
            progress.stop()
        run.write_manifest(usage=merge_usage(run.previous_usage, ledger.as_dict()))
    records = run.records()
    metrics = summarise(records.values(), n_planned=len(items), answered=model is not None)
    run.write_outputs(metrics, build_report(metrics, run.manifest))
    return metrics
