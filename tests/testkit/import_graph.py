"""The import graph of the project's packages, read from their source (tests/project/test_import_graph.py).

Every import counts: at the top of a module, inside a function (a lazy import) or a class,
absolute or relative. ``from a.b import c`` is an edge to the module ``a.b.c`` when that is a
module of the scanned packages, else to ``a.b``; importing a module does not count as importing
its parent packages (Python runs them first, but they are not part of the importing module's
knot). Only imports between modules of the scanned packages are kept.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``source`` imports ``target`` at ``line``; ``names`` are the
    names it takes from ``target`` (empty for ``import target`` or a submodule)."""

    source: str
    target: str
    line: int
    names: tuple[str, ...] = ()


def module_files(root: Path, packages) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of ``packages`` under ``root``."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _base(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module a relative import ``from <level dots><name> import ...`` in ``module`` means."""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[:len(parts) - (level - 1)] if level > 1 else parts
    return ".".join(parts + ([name] if name else []))


def imports(root: Path, packages) -> list[Import]:
    """Every import between modules of ``packages`` (lazy and relative ones included)."""
    files = module_files(root, packages)
    found = []
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in files:
                        found.append(Import(module, alias.name, node.lineno))
            elif isinstance(node, ast.ImportFrom):
                base = _base(module, is_package, node.level, node.module) if node.level else node.module
                taken = []
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    if submodule in files:
                        found.append(Import(module, submodule, node.lineno))
                    else:
                        taken.append(alias.name)
                if taken and base in files:
                    found.append(Import(module, base, node.lineno, tuple(taken)))
    return found


def graph(edges: list[Import]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for edge in edges:
        if edge.source != edge.target:
            out.setdefault(edge.source, set()).add(edge.target)
    return out


def cycles(edges: list[Import]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module, as the list
    of its modules in import order with the first repeated at the end (a -> b -> a)."""
    adjacency = graph(edges)
    nodes = sorted(set(adjacency) | {t for targets in adjacency.values() for t in targets})
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(node):  # Tarjan's algorithm (recursion depth: the number of modules)
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(adjacency.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(set(component))

    for node in nodes:
        if node not in index:
            connect(node)
    return [_cycle_in(sorted(component)[0], component, adjacency) for component in components]


def _cycle_in(start: str, component: set[str], adjacency) -> list[str]:
    """A shortest path from ``start`` back to itself inside ``component`` (breadth first)."""
    previous = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(adjacency.get(node, ())):
                if target == start:
                    path = [node]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return path[::-1] + [start]
                if target in component and target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"{start} is in a component without a cycle")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(edges: list[Import]) -> list[str]:
    """Private names imported from another module (``from m import _x``), and private modules
    (a dotted part starting with ``_``) imported from outside the package that holds them."""
    problems = []
    for edge in edges:
        for name in edge.names:
            if _private(name):
                problems.append(f"{edge.source}:{edge.line} imports the private name {name} of {edge.target}")
        parts = edge.target.split(".")
        for depth, part in enumerate(parts):
            if _private(part):
                owner = ".".join(parts[:depth])
                if not (edge.source == owner or edge.source.startswith(owner + ".")):
                    problems.append(f"{edge.source}:{edge.line} imports the private module {edge.target} "
                                    f"from outside {owner}")
                break
    return problems


def layer_violations(edges: list[Import], order) -> list[str]:
    """Imports against ``order`` (lowest first): a package may import only packages before it. An
    entry may be a subpackage (``"experiments.engine"``); a module belongs to the longest entry that
    names it or a package above it."""
    rank = {package: position for position, package in enumerate(order)}

    def package_of(module: str):
        parts = module.split(".")
        for length in range(len(parts), 0, -1):
            if ".".join(parts[:length]) in rank:
                return ".".join(parts[:length])
        return None

    problems = []
    for edge in edges:
        source, target = package_of(edge.source), package_of(edge.target)
        if source is not None and target is not None and rank[target] > rank[source]:
            problems.append(f"{edge.source}:{edge.line} imports {edge.target}: {source} must not import {target}")
    return problems
