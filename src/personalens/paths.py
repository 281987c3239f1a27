"""Where personalens keeps state that outlives a run: response and embedding caches."""

import os
from pathlib import Path


def cache_dir() -> Path:
    """The cache root: $PERSONALENS_CACHE_DIR, else $XDG_CACHE_HOME/personalens, else ~/.cache."""
    explicit = os.environ.get("PERSONALENS_CACHE_DIR")
    if explicit:
        root = Path(explicit)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "personalens"
    root.mkdir(parents=True, exist_ok=True)
    return root
