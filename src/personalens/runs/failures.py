"""The one shape of a failure, everywhere: `{kind, message, attempts}`.

Whatever fails for good (a model call after its retries, a step, an item) is recorded in this
shape, counted and reported; it is never scored as zero and never dropped.
"""

import pydantic


class Failure(pydantic.BaseModel):
    kind: str
    message: str
    attempts: int = 1
    # True when a rerun would fail the same way: a deterministic model (llama.cpp in-process,
    # a script) asked the same thing again, or input that cannot change. Written only when
    # true, so every other failure keeps the shape {kind, message, attempts}.
    final: bool = False

    @pydantic.model_serializer(mode="wrap")
    def _final_only_when_true(self, handler):
        data = handler(self)
        if not data.get("final"):
            data.pop("final", None)
        return data


class ItemFailure(Failure):
    """A failed item (or step) as metrics.json lists it: its key beside the failure.

    Read from a run directory it also carries what the item produced before it failed
    (`data`) and the failed steps it came through; neither is written to metrics.json.
    """

    key: str
    data: dict = pydantic.Field(default_factory=dict, exclude=True)
    failed_steps: list[str] = pydantic.Field(default_factory=list, exclude=True)

    @property
    def failure(self) -> Failure:
        return Failure(kind=self.kind, message=self.message, attempts=self.attempts,
                       final=self.final)


class RecordedFailure(Exception):
    """An error the harness records as a failed item (or step) instead of crashing the run.

    The models layer's `ModelCallFailed` is one; a lens raises one for its own failures.
    `data` is what the item did produce (e.g. retrieval scores when only answering failed); it
    is kept in the failure record. `steps` names the failed steps the failure came through,
    outermost first (see StepFailed), so an item's record says which step failures it carries.
    """

    def __init__(self, kind: str, message: str, attempts: int = 1, data: dict | None = None,
                 steps: list[str] | None = None, *, final: bool = False):
        self.failure = Failure(kind=kind, message=message, attempts=attempts, final=final)
        self.data = data or {}
        self.steps = list(steps or [])
        super().__init__(message)

    def with_data(self, data: dict) -> "RecordedFailure":
        """The same failure, carrying what the item produced before it failed."""
        failure = self.failure
        return RecordedFailure(failure.kind, failure.message, failure.attempts, data,
                               self.steps, final=failure.final)

    def as_data(self) -> dict:
        """Plain data (for a remote worker to return); `from_data` rebuilds the failure."""
        return {**self.failure.model_dump(), "data": self.data, "steps": self.steps}

    @classmethod
    def from_data(cls, data: dict) -> "RecordedFailure":
        return cls(data["kind"], data["message"], data["attempts"], data["data"], data["steps"],
                   final=data.get("final", False))
