"""What a manifest records about where a run came from: versions and a dataset fingerprint."""

import hashlib
import importlib.metadata
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
    """sha256 over (relative path, bytes) of every file, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
