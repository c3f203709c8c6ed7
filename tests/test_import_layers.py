"""The packages' modules import one another without circles: read from the source (nothing is
imported or run), every import counts, including those under `TYPE_CHECKING` and those
inside functions, since a deferred import only hides a circle, it does not remove it.

A circle means two modules each need the other: neither can be read, tested or replaced on
its own, and the lower one starts depending on details of the higher. The fix is a narrow
interface (a protocol) or a small shared module below both, never a deferred import.

Run `python tests/test_import_layers.py` to print the circles, if any.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "graph", "ingest")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of the packages by dotted name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of the packages that `module` imports, anywhere in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            # `from pkg import sub` imports the module `pkg.sub` when there is one.
            targets = [
                f"{source}.{a.name}" if f"{source}.{a.name}" in known else source
                for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import a.b.c` of a name inside a.b
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:  # iterative: deep import chains must not recurse
        nonlocal counter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(groups)


def describe(graph: dict[str, set[str]], group: list[str]) -> str:
    members = set(group)
    arrows = [f"  {a} -> {b}" for a in group for b in sorted(graph[a] & members)]
    return "\n".join([f"{len(group)} modules: {', '.join(group)}", *arrows])


def test_the_finder_sees_a_circle() -> None:
    """The check is not vacuous: a planted circle, and only it, is found."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_relative_and_submodule_imports_resolve(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import sibling\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.other import Thing\n"
        "def f():\n"
        "    import pkg.deep.leaf\n",
        encoding="utf-8",
    )
    known = {n: source for n in ("pkg", "pkg.m", "pkg.sibling", "pkg.other", "pkg.deep")}
    assert imports_of("pkg.m", source, known) == {"pkg.sibling", "pkg.other", "pkg.deep"}


def test_no_import_circles() -> None:
    graph = import_graph()
    assert len(graph) > 100, "the packages' modules were not found"
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(describe(graph, g) for g in found)


if __name__ == "__main__":
    graph = import_graph()
    found = circles(graph)
    for group in found:
        print(describe(graph, group))
    print(f"{len(found)} circle(s) among {len(graph)} modules")
    sys.exit(1 if found else 0)
