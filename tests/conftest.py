import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
COMMUNITY_0 = (SHARED / "anchors" / "personabench" / "eval_data" / "eval_data_v1"
               / "synthetic_data" / "community_0")
EXAMPLE = REPO / "src" / "personalens" / "lenses" / "personabench" / "example_data"


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Caches live in a per-session folder so no test reads another machine's state."""
    os.environ["PERSONALENS_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    os.environ.pop("OPENAI_API_KEY", None)


@pytest.fixture
def community_0() -> Path:
    if not COMMUNITY_0.exists():
        pytest.fail(f"the shared PersonaBench anchor data is missing: {COMMUNITY_0}")
    return COMMUNITY_0


@pytest.fixture
def double(monkeypatch):
    """`personalens generate` runs against the schema-aware scripted double (no real model).

    Set holder["fail_when"] to make prompts containing that text fail; holder["model"] is the
    model of the latest run.
    """
    import personalens.models.settings as settings_module
    from tests.schema_double import schema_model

    holder = {}

    def fake_load_model(spec, **kwargs):
        model = schema_model(holder.get("fail_when"))
        model.ledger = kwargs["ledger"]
        holder["model"] = model
        return model

    monkeypatch.setattr(settings_module, "load_model", fake_load_model)
    return holder
