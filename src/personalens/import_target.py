"""Lazy references: a registry names code as "package.module:name", imported when used.

The registries (the lenses' declarations, the model providers) hold these strings so that
reading a registry — for `personalens --help`, or to list what exists — imports no lens, model
SDK or plotting library.
"""

import importlib


def resolve(target: str):
    """"package.module:name" -> the object, its module imported now."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
