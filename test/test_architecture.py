"""Architecture invariants: no import cycle between the modules of ``servo_ff`` (function-level imports count)."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def _import_graph_module():
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools" / "import_graph.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@functools.cache
def _package_graph() -> dict[str, set[str]]:
    """The import graph of src/servo_ff, read once for the tests of this module."""
    return _import_graph_module().import_graph()


def test_no_module_import_cycle():
    ig = _import_graph_module()
    graph = _package_graph()
    assert len(graph) > 100  # the whole package was read
    found = ig.cycles(graph)
    detail = [" -> ".join(c) for c in found]
    assert not found, f"module import cycles (python tools/import_graph.py): {detail}"


def test_ros_layers_import_downward_only():
    """bringup -> nodes -> ros -> the ROS-free core: no module imports a layer above its own (function-level
    imports included), and the core imports none of the three."""
    ig = _import_graph_module()
    graph = ig.import_graph()
    rank = {"servo_ff.bringup": 3, "servo_ff.nodes": 2, "servo_ff.ros": 1}
    front = ("servo_ff.cli", "servo_ff.demo", "servo_ff.__main__")

    def layer(mod: str) -> int:
        return next((r for p, r in rank.items() if mod == p or mod.startswith(p + ".")), 0)

    up = [f"{m} -> {d}" for m, deps in graph.items() if not m.startswith(front) for d in deps if layer(d) > layer(m)]
    assert sum(layer(m) == 1 for m in graph) > 10 and sum(layer(m) == 2 for m in graph) > 10
    assert not up, up


def test_layers_import_downwards_only():
    """``io`` (file formats, ``ServoLog``) imports no ``identification``; the ROS-free core and ``workflows`` import
    no front-end (``cli``, ``nodes``); ``dynamics`` imports no ``identification`` (its experiments are workflows)."""
    graph = _package_graph()
    forbidden = {
        "servo_ff.io": (
            "servo_ff.identification",
            "servo_ff.workflows",
            "servo_ff.cli",
            "servo_ff.nodes",
            "servo_ff.ros",
            "servo_ff.bringup",
        ),
        "servo_ff.dynamics": (
            "servo_ff.identification",
            "servo_ff.workflows",
            "servo_ff.cli",
            "servo_ff.nodes",
            "servo_ff.ros",
            "servo_ff.bringup",
        ),
        "servo_ff.identification": (
            "servo_ff.workflows",
            "servo_ff.cli",
            "servo_ff.nodes",
            "servo_ff.ros",
            "servo_ff.bringup",
        ),
        "servo_ff.workflows": ("servo_ff.cli", "servo_ff.nodes", "servo_ff.ros", "servo_ff.bringup"),
    }
    bad = [
        f"{mod} -> {dep}"
        for mod, deps in graph.items()
        for layer, banned in forbidden.items()
        if mod == layer or mod.startswith(layer + ".")
        for dep in deps
        if any(dep == b or dep.startswith(b + ".") for b in banned)
    ]
    assert bad == []


def test_generic_bus_modules_import_no_family():
    """``bus/*.py`` (what every servo family shares) imports no family package (``bus/dynamixel/``,
    ``bus/feetech/``): what it needs of a family comes through its row of ``bus/families.py`` (imported on use) or
    ``bus/packet_common.py``; and no family imports another."""
    graph = _package_graph()
    families = ("servo_ff.bus.dynamixel", "servo_ff.bus.feetech")
    generic = [m for m in graph if m.startswith("servo_ff.bus.") and m.count(".") == 2 and not m.startswith(families)]
    assert len(generic) >= 15 and "servo_ff.bus.virtual_bus" in generic
    bad = [f"{m} -> {d}" for m in generic for d in graph[m] if d.startswith(families)]
    assert bad == []
    family_of = {m: next((f for f in families if m == f or m.startswith(f + ".")), None) for m in graph}
    cross = [
        f"{m} -> {d}"
        for m, deps in graph.items()
        if family_of[m]
        for d in deps
        if family_of.get(d) not in (None, family_of[m])
    ]
    assert cross == []  # the families are siblings: what two of them share (Protocol 1.0 framing) lives in bus/


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


BUILTIN_ERRORS = {"Exception", "ValueError", "RuntimeError", "OSError", "IOError", "KeyError", "TypeError"}


def _error_classes() -> list[tuple[str, str, list[str]]]:
    """(file, class, base names) of every class under src/servo_ff deriving directly from a built-in exception."""
    import ast

    out = []
    for path in sorted((ROOT / "src" / "servo_ff").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rpartition(".")[2] for b in node.bases]
                if BUILTIN_ERRORS & set(bases):
                    out.append((str(path.relative_to(ROOT)), node.name, bases))
    return out


def test_every_error_derives_from_servo_ff_error_and_names_are_unique():
    found = _error_classes()
    assert len(found) >= 19  # ParameterError, BusError, both protocols, ... were all seen
    assert [(f, c) for f, c, bases in found if c != "ServoFFError" and "ServoFFError" not in bases] == []
    names = [c for _, c, _ in found]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_domain_errors_keep_their_builtin_base():
    """``except ValueError`` / ``except OSError`` written before the common base still catch them."""
    from servo_ff.bus.bus_types import BusError, GoalRejected
    from servo_ff.bus.dynamixel.protocol import ProtocolError
    from servo_ff.bus.protocol1 import Protocol1Error
    from servo_ff.errors import ServoFFError
    from servo_ff.models.errors import ParameterError

    assert issubclass(BusError, OSError) and issubclass(BusError, ServoFFError)
    for cls in (GoalRejected, ProtocolError, Protocol1Error, ParameterError):
        assert issubclass(cls, ValueError) and issubclass(cls, ServoFFError)
    assert not issubclass(Protocol1Error, ProtocolError)


def test_every_node_module_is_an_executable():
    """setup.py makes every ``nodes/<x>_node.py`` the executable ``servo_<x>_node``: each has a ``main()`` (a
    plumbing module named ``*_node.py`` there, as ``side_node.py`` was, would be a broken entry point)."""
    import ast

    found = sorted((ROOT / "src" / "servo_ff" / "nodes").glob("*_node.py"))
    assert len(found) >= 8
    for path in found:
        tree = ast.parse(path.read_text())
        assert any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body), path.name
