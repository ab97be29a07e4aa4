"""Architecture invariants: no import cycle between the modules of ``servo_ff`` (function-level imports count)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _import_graph_module():
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_module_import_cycle():
    ig = _import_graph_module()
    graph = ig.import_graph()
    assert len(graph) > 100  # the whole package was read
    found = ig.cycles(graph)
    detail = [" -> ".join(c) for c in found]
    assert not found, f"module import cycles (python tools/import_graph.py): {detail}"


def test_cycle_finder_sees_function_level_and_relative_imports(tmp_path):
    """A cycle made of a top-level relative import and an import inside a function is found."""
    ig = _import_graph_module()
    pkg = tmp_path / "servo_ff"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("from .b import f\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from servo_ff.sub import a\n    return a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub import a\n")
    graph = ig.import_graph(pkg)
    assert graph["servo_ff.sub.b"] == {"servo_ff.sub.a"}
    assert graph["servo_ff.c"] == set()  # TYPE_CHECKING imports never run
    assert ig.cycles(graph) == [["servo_ff.sub.a", "servo_ff.sub.b"]]
