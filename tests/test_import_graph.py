"""No import cycles between personalens's modules (imports inside functions count too: a cycle
hidden in a function is still two modules that cannot be understood one without the other)."""

import ast
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import networkx as nx

from personalens.lenses import LENSES
from personalens.lenses.commands import lens_commands

SRC = Path(__file__).resolve().parents[1] / "src"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> nx.DiGraph:
    modules = {_module_name(p): p for p in (SRC / "personalens").rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                # `from pkg import mod` names the module; `from pkg import name`, the package.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                           for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph.add_edge(name, target)
    return graph


def test_the_graph_reads_imports_at_every_depth():
    graph = import_graph()
    assert graph.has_edge("personalens.cli.subcommands", "personalens.cli.declared_command")
    # An import inside a function is an edge too.
    assert graph.has_edge("personalens.retrieval.dense", "personalens.retrieval.ray_encoding")


def test_no_module_imports_itself_through_others():
    cycles = sorted(sorted(c) for c in nx.simple_cycles(import_graph()))
    assert cycles == []


def test_every_lens_package_is_registered_and_the_registry_drives_contract_and_package_data():
    """A lens is its package plus one line in `lenses.LENSES`: the import-linter independence
    contract covers every package under lenses/, and the wheel's package-data globs ship every
    file a registered lens declares (and none no lens declares)."""
    lenses_dir = SRC / "personalens" / "lenses"
    packages = sorted(p.name for p in lenses_dir.iterdir() if (p / "__init__.py").exists())
    assert packages == sorted(LENSES)
    pyproject = tomllib.loads((SRC.parent / "pyproject.toml").read_text())
    contracts = pyproject["tool"]["importlinter"]["contracts"]
    independence = next(c for c in contracts if c["type"] == "independence")
    assert independence["modules"] == ["personalens.lenses.*"]
    shipped = [p for p in pyproject["tool"]["setuptools"]["package-data"]["personalens"]
               if p.startswith("lenses/")]
    declared = []
    for lens in LENSES:
        spec = lens_commands(lens)
        assert spec.name == lens and LENSES[lens] == f"personalens.lenses.{lens}.commands:LENS"
        globs = [f"lenses/{lens}/{glob}" for glob in spec.data]
        declared += globs
        for glob in globs:
            assert any(fnmatch(glob, pattern) for pattern in shipped), \
                f"{glob} is not shipped: add it to pyproject.toml's package data"
        for path in (lenses_dir / lens).rglob("*"):  # every data file is declared
            relative = str(path.relative_to(SRC / "personalens"))
            if path.is_file() and path.suffix not in (".py", ".pyc"):
                assert any(fnmatch(relative, g) for g in globs), f"{relative} is not declared"
    for pattern in shipped:
        assert any(fnmatch(glob, pattern) for glob in declared), f"{pattern} ships no lens's data"
