"""Shared fixtures, and the markers: each test that needs a real model, Chromium, a local HTTP
server or a process of its own says so, so `pytest -m "not slow"` (and any other selection)
knows what it leaves out.

`chromium`, `server` and `subprocess` are applied here from what a test's code (and its
fixtures' and its module's helpers') names: DevToolsPipe, FaultServer, the process runners of
tests/cli_runner.py. `minilm`, `bundled_model` and `slow` are written on the tests. Whatever a
test ends up doing is checked when it ends: a test that loaded or ran a real model, started
Chromium, a server or the command as a process without the marker fails (tests/model_loads.py
notes the models, also in the processes a test starts).
"""

import atexit
import os
import shutil
import tempfile
import types
from pathlib import Path

import pytest

from tests import cli_runner, model_loads
from tests.devtools_pipe import DevToolsPipe
from tests.fault_server import FaultServer

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
COMMUNITY_0 = (SHARED / "anchors" / "personabench" / "eval_data" / "eval_data_v1"
               / "synthetic_data" / "community_0")
EXAMPLE = REPO / "src" / "personalens" / "lenses" / "personabench" / "example_data"

# What a test's code may name, and the marker that naming it needs.
NAMED = {FaultServer: "server", DevToolsPipe: "chromium",
         cli_runner.personalens_process: "subprocess", cli_runner.start: "subprocess"}
# The same, imported inside a function (`from tests.fault_server import FaultServer`).
NAMED_INSIDE = {"FaultServer": "server", "DevToolsPipe": "chromium",
                "personalens_process": "subprocess"}
CHECKED = ("minilm", "bundled_model", "chromium", "server", "subprocess")


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


# --- markers applied from what a test names ------------------------------------------------


def _named(code: types.CodeType, namespace: dict, seen: set) -> set[str]:
    """The markers NAMED objects that `code` reaches need, following the tests' own functions
    and classes (not the package's: what it does at run time is checked when a test ends)."""
    markers = set()
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            markers |= _named(const, namespace, seen)
    for name in names:
        if name not in namespace and name in NAMED_INSIDE:
            markers.add(NAMED_INSIDE[name])
            continue
        value = namespace.get(name)
        try:
            if value in NAMED:
                markers.add(NAMED[value])
                continue
        except TypeError:  # unhashable
            continue
        for function in _own_functions(value):
            if id(function) not in seen:
                seen.add(id(function))
                markers |= _named(function.__code__, function.__globals__, seen)
    return markers


def _own_functions(value) -> list:
    module = getattr(value, "__module__", None) or ""
    if not module.startswith("tests"):
        return []
    if isinstance(value, types.FunctionType):
        return [value]
    if isinstance(value, type):
        return [f for f in vars(value).values() if isinstance(f, types.FunctionType)]
    return []


def _needed(item) -> set[str]:
    seen: set[int] = set()
    function = getattr(item, "function", None)
    if function is None:
        return set()
    markers = _named(function.__code__, function.__globals__, seen)
    callspec = getattr(item, "callspec", None)
    for value in (callspec.params.values() if callspec else ()):
        for own in _own_functions(value):  # a helper passed as a parameter
            markers |= _named(own.__code__, own.__globals__, seen)
    for definitions in item._fixtureinfo.name2fixturedefs.values():
        for definition in definitions:
            fixture = getattr(definition.func, "__wrapped__", definition.func)
            if isinstance(fixture, types.FunctionType):
                markers |= _named(fixture.__code__, fixture.__globals__, seen)
    return markers


def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker in sorted(_needed(item)):
            item.add_marker(marker)
        if item.get_closest_marker("bundled_model"):
            # llama.cpp takes both cores: under `-n 2 --dist loadgroup` these tests share a
            # worker rather than halving each other's speed.
            item.add_marker(pytest.mark.xdist_group("bundled_model"))


# --- what a test did, checked when it ends ---------------------------------------------------

_did: list[set[str]] = []  # the running test's set, then each fixture's being set up
_fixture_did: dict[int, set[str]] = {}  # what each fixture's setup did, by id(fixturedef)


def _noted(kind: str) -> None:
    for did in _did:
        did.add(kind)


def _logged(after: int = 0) -> set[str]:
    """What processes the test started noted (from byte `after` of the log)."""
    return set(_LOG.read_text()[after:].split()) if _LOG.exists() else set()


model_loads.install(_noted)
cli_runner.on_process.append(_noted)
for _cls, _kind in ((FaultServer, "server"), (DevToolsPipe, "chromium")):
    _cls.__init__ = model_loads._noting(_cls.__init__, _kind)

_LOG_DIR = tempfile.mkdtemp(prefix="personalens-model-log-")  # one per (xdist) process
atexit.register(shutil.rmtree, _LOG_DIR, True)
_LOG = Path(_LOG_DIR) / "loads.txt"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _did[:] = [set()]
    _LOG.write_text("")
    os.environ[model_loads.LOG_ENV] = str(_LOG)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """What a fixture did counts for every test that uses it, not only the first one (a
    module-scoped fixture is set up once, by whichever test comes first)."""
    own: set[str] = set()
    _did.append(own)
    logged = _LOG.stat().st_size if _LOG.exists() else 0
    try:
        return (yield)
    finally:
        assert _did.pop() is own
        _fixture_did.setdefault(id(fixturedef), set()).update(own | _logged(logged))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    result = yield
    did = set().union(*_did, _logged())
    for definitions in item._fixtureinfo.name2fixturedefs.values():
        did |= _fixture_did.get(id(definitions[-1]), set())
    os.environ.pop(model_loads.LOG_ENV, None)
    _did.clear()
    missing = sorted(k for k in did if k in CHECKED and item.get_closest_marker(k) is None)
    if missing:
        pytest.fail(f"{item.nodeid} used {', '.join(missing)} without the marker: add "
                    + ", ".join(f"@pytest.mark.{k}" for k in missing)
                    + " (see the markers in pyproject.toml)", pytrace=False)
    return result
