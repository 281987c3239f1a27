"""Loaded at start-up by a `personalens` process that a test starts (tests/cli_runner.py puts
this folder on PYTHONPATH): notes the real models the process loads (tests/model_loads.py)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "_personalens_test_model_loads", Path(__file__).resolve().parents[1] / "model_loads.py")
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
_module.install_from_env()
