"""Secrets never reach disk; untrusted names cannot escape the output folder."""

import pytest

from personalens.errors import InputError
from personalens.population.release_writer import safe_name
from tests.cli_runner import personalens
from tests.fault_server import FaultServer
from tests.runs.test_reliability import GENERATE, _schema_reply

FAKE_KEY = "sk-fake-SECRET-0123456789abcdef"


def test_generate_never_writes_the_api_key(tmp_path):
    out = tmp_path / "gen"
    cache = tmp_path / "cache"
    with FaultServer(_schema_reply) as server:
        args = [a for a in GENERATE if a != "--no-cache"]
        result = personalens(*args, "--base-url", server.base_url, "--api-key-env", "MY_KEY",
                             "--out", out,
                             env={"MY_KEY": FAKE_KEY, "PERSONALENS_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    assert FAKE_KEY not in result.stdout + result.stderr
    written = [p for root in (out, cache) for p in root.rglob("*") if p.is_file()]
    assert any(p.name == "responses.sqlite" for p in written)  # the cache was really used
    for path in written:
        assert FAKE_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", "", "x\\\\y"])
def test_names_that_would_leave_the_folder_are_refused(name):
    with pytest.raises(InputError, match="cannot be used as a folder name"):
        safe_name(name)
    assert safe_name("Ana María") == "Ana María"
