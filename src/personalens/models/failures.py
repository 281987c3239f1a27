"""How a model call fails: transient faults are retried, the rest end as recorded failures."""

from personalens.runs.failures import RecordedFailure


class TransientModelError(Exception):
    """A fault worth retrying (429, 5xx, timeout, dropped connection, malformed body)."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None):
        self.kind = kind
        self.retry_after = retry_after
        super().__init__(message)


class PermanentModelError(Exception):
    """A fault that a retry cannot fix (bad request, bad credentials, unknown model)."""

    def __init__(self, kind: str, message: str):
        self.kind = kind
        super().__init__(message)


class ModelCallFailed(RecordedFailure):
    """A call that failed for good: its kind and message go into the item's failure record."""

    def __init__(self, kind: str, message: str, attempts: int, *, final: bool = False):
        super().__init__(kind, f"{kind} after {attempts} attempt(s): {message}", attempts,
                         final=final)
        self.kind = kind
        self.attempts = attempts
