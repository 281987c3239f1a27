"""manifest.json as a model: what a run is (its identity) and how it went (status, usage).

`config` identifies the run: resuming with a different one is refused. It is derived from the
command's declared options (`runs.options.LensOptions.identity`), plus the dataset's hash.
A lens adds its own fields (data warnings, skipped records) beside the known ones.
"""

from typing import Any

import pydantic

# 2: options declared as models and records tagged with their schema. A run directory of
# contract 1 identified its options by hand, so its config cannot be compared with today's.
CONTRACT = 2


class Manifest(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")

    contract: int = CONTRACT
    # The record schema the run writes ("<lens>.eval/2"): resuming under another version, whose
    # records mean something else, is refused. A run written before manifests said it wrote
    # version 1 of its records.
    record_schema: str | None = None
    command: str = ""
    config: dict[str, Any] = {}
    versions: dict[str, str] = {}
    dataset_hash: str | None = None
    seeds: dict[str, int] = {}
    models: dict[str, str] = {}  # role -> spec
    endpoints: dict[str, dict] = {}  # role -> endpoint settings, never a secret
    status: str = "running"
    started_at: str | None = None
    finished_at: str | None = None
    sessions: int = 0
    usage: dict[str, dict] = {}
    estimated_cost_usd: float | None = None

    @property
    def extra(self) -> dict[str, Any]:
        """The lens's own fields."""
        return dict(self.__pydantic_extra__ or {})

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)
