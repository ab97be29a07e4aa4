"""Shared fixtures (compile the numba kernels once before the tests that run them inside ROS timers) and the
`ros`/`slow` markers."""

import inspect
import sys

import pytest


@pytest.fixture(scope="session")
def compiled_mujoco_kernels():
    """Compile (and cache on disk) the MuJoCo servo kernels: on a fresh clone the first call JIT-compiles for
    seconds, which inside a lockstep sim node's timer (or a bring-up's subprocesses) would stall the run the test
    is about. Tests that start MuJoCo nodes request this fixture."""
    pytest.importorskip("mujoco")
    from test_mujoco_servos import pendulum

    servos = pendulum()
    servos.command([0.1])
    servos.step(2)
    return servos


# --- markers: `ros` (the test talks over rclpy/DDS or starts node processes) and `slow` (over ≈ 5 s) -----------------
# `./run test -m "not slow and not ros"` is the fast inner loop (docs/install.md#fast-test-runs).

#: A test is `ros` when its own source, one of its fixtures or a module-level helper it calls names one of these.
_ROS_TOKENS = ("RosHarness", "rclpy", "python_env", "servo_ff.nodes.bringup", "launch_ros", "hardware_on_virtual_bus")

#: Tests over ≈ 5 s on the 2-core CI box (`./run test -m "not ros" --durations=40`), by node id without parameters.
SLOW_TESTS: frozenset[str] = frozenset()


#: ... and every test of a module that needs rclpy or the node/hardware rigs at import (top-level lines).
_ROS_MODULE_LINES = (
    'pytest.importorskip("rclpy")',
    "rclpy = pytest.importorskip",
    "import rclpy",
    "from rclpy",
    "from nodes_harness",
    "from hardware_rig",
)


def _ros_module(module) -> bool:
    return any(line.startswith(_ROS_MODULE_LINES) for line in _source(module).splitlines())


def _source(obj) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return ""


def _uses_ros(func, module, seen: set) -> bool:
    """True if ``func`` or a module-level function it names (transitively) mentions a ROS token."""
    if func in seen:
        return False
    seen.add(func)
    src = _source(func)
    if any(t in src for t in _ROS_TOKENS):
        return True
    code = getattr(func, "__code__", None)
    for name in code.co_names if code else ():
        f = getattr(module, name, None)
        if inspect.isfunction(f) and f.__module__ == module.__name__ and _uses_ros(f, module, seen):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    for item in items:
        fn = getattr(item, "function", None)
        if fn is None:
            continue
        module = item.module
        funcs = [fn]
        for name in item.fixturenames:
            for d in item._fixtureinfo.name2fixturedefs.get(name, ()):
                funcs.append(d.func)
        seen: set = set()
        if _ros_module(module) or any(
            _uses_ros(inspect.unwrap(f), sys.modules.get(f.__module__, module), seen) for f in funcs
        ):
            item.add_marker(pytest.mark.ros)
        if item.nodeid.split("[")[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
