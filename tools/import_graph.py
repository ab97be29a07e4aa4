"""Import graph of ``src/servo_ff`` from the AST (function-level imports included) and its cycles.

Run ``python tools/import_graph.py`` to print every strongly connected component of more than one module;
``test/test_architecture.py`` asserts there is none.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = "servo_ff"
SRC = Path(__file__).resolve().parent.parent / "src" / PACKAGE


def module_name(path: Path, root: Path = SRC) -> str:
    """Dotted module name of ``path`` (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(node: ast.ImportFrom, mod: str, is_pkg: bool) -> str:
    """Absolute module an ``ImportFrom`` names (relative levels resolved against ``mod``)."""
    if node.level == 0:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Edges module -> modules of the package it imports, anywhere in its body (not only at top level).

    ``from pkg import name`` counts as an import of ``pkg.name`` when that is a module, else of ``pkg``.
    Imports guarded by ``if TYPE_CHECKING:`` are skipped (they never run).
    """
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(), str(path))
        skip = {
            id(n)
            for top in ast.walk(tree)
            if isinstance(top, ast.If) and "TYPE_CHECKING" in ast.unparse(top.test)
            for n in ast.walk(top)
        }
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, mod, path.name == "__init__.py")
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for t in targets:
                while t and t not in files:  # `import a.b.c` of a non-module name: nearest module
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def main() -> int:
    """Print each cycle and the edges inside it; exit 1 if there is any."""
    g = import_graph()
    found = cycles(g)
    for comp in found:
        print(f"cycle of {len(comp)}: " + ", ".join(comp))
        for m in comp:
            for t in sorted(g[m] & set(comp)):
                print(f"    {m} -> {t}")
    print(f"{len(g)} modules, {sum(map(len, g.values()))} edges, {len(found)} cycles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
