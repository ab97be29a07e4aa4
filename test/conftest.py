"""Shared fixtures: compile the numba kernels once before the tests that run them inside ROS timers."""

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
