"""What a manifest records about where a run came from: versions and a dataset fingerprint."""

import hashlib
import importlib.metadata
import os
import platform
from collections.abc import Iterable
from pathlib import Path

_PACKAGES = ("personalens", "torch", "sentence-transformers", "transformers", "bm25s",
             "xllamacpp", "openai", "numpy", "pydantic")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def fingerprint(files: Iterable[Path], root: Path) -> str:
    """sha256 over (path relative to `root`, bytes) of every file, in sorted order.

    Relative, absolute and symlinked spellings of the same files give the same fingerprint.
    """
    named = sorted((_relative(path, root), path) for path in files)
    digest = hashlib.sha256()
    for name, path in named:
        digest.update(name.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _relative(path: Path, root: Path) -> str:
    # As written first (a symlinked file keeps its name in the dataset), then with symlinks
    # resolved on both sides (a root given through a symlink, or relative to another cwd).
    absolute = (Path(os.path.abspath(path)), Path(os.path.abspath(root)))
    for file, base in (absolute, (path.resolve(), root.resolve())):
        if file.is_relative_to(base):
            return file.relative_to(base).as_posix()
    raise ValueError(f"{path} is not inside {root}")
