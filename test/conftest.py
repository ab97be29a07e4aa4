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
_ROS_TOKENS = ("RosHarness", "rclpy", "python_env", "servo_ff.bringup", "launch_ros", "hardware_on_virtual_bus")

#: Tests over ≈ 2 s on a loaded 2-core box (`./run test -m "not ros" --durations=80`), by node id without
#: parameters (every parametrisation), and the examples (subprocesses).
SLOW_TESTS: frozenset[str] = frozenset(
    (
        "test/test_ident_cli.py::test_summary_records_split_seed_budget_firmware_and_no_nan",
        "test/test_models_bam_equality.py::test_rollout_equals_bams_simulator_on_its_published_files",
        "test/test_bounded_input.py::test_a_bag_cut_mid_chunk_is_one_line_in_bounded_memory",
        "test/test_walk_pattern.py::test_online_cmd_turns_and_stops",
        "test/test_walk_pattern.py::test_online_walk_memo_gives_the_resolved_trajectory",
        "test/test_ident_cli.py::test_ilc_then_fit",
        "test/test_replay_robot_bags.py::test_replanned_horizons_are_replaced_not_merged",
        "test/test_dynamixel_virtual_bus.py::test_thermal_model_heats_a_stalled_servo_until_overheating_shuts_it_down",
        "test/test_ident_fit.py::test_m1_validates_worse_than_m4_on_m4_data",
        "test/test_ident_fit.py::test_cmaes_recovers_motor_and_friction_within_5_percent",
        "test/test_atomic_outputs.py::test_a_writer_killed_inside_its_write_leaves_the_previous_output_whole",
        "test/test_atomic_outputs.py::test_sigkill_mid_write_leaves_the_previous_output_whole",
        "test/test_dynamixel_p1.py::test_bus1_silent_servo_is_skipped_then_reprobed_and_counted_as_timeouts",
        "test/test_dynamixel_p1.py::test_stock_sdk_protocol1_against_the_cli_virtual_bus",
        "test/test_dynamixel_virtual_bus.py::test_cli_params_of_an_actuator_without_a_law_need_firmware_then_serve_with_it",
        "test/test_dynamixel_virtual_bus.py::test_cli_subprocess_serves_the_real_sdk",
        "test/test_dynamixel_virtual_bus.py::test_pendulum_hangs_and_holds_against_gravity",
        "test/test_examples.py::test_feedforward_arm_leads_the_desired_angle",
        "test/test_examples.py::test_identify_m1_fits_the_simulated_logs",
        "test/test_examples.py::test_simulate_preset_tracks_and_plots",
        "test/test_examples.py::test_virtual_dynamixel_bus_reaches_the_goal",
        "test/test_feedforward_mujoco.py::test_feedforward_tracks_better_than_low_gain_p",
        "test/test_feetech_virtual_bus.py::test_bad_command_lines_exit_2_with_one_line",
        "test/test_feetech_virtual_bus.py::test_fault_options_from_the_command_line",
        "test/test_ident_cli.py::test_params_and_firmware_flags",
        "test/test_ident_cli.py::test_record_sim_then_identify",
        "test/test_ident_cli.py::test_sts3215_identified_end_to_end_from_simulated_bench_logs",
        "test/test_ident_ilc.py::test_ilc_batch_matches_individual_problems_and_freezes_converged_ones",
        "test/test_models_friction.py::test_models_nest",
        "test/test_models_stepper.py::test_all_outputs_equal_the_scalar_reference_including_current_law_limits",
        "test/test_models_stepper.py::test_fused_steps_equal_one_step_at_a_time",
        "test/test_models_stepper.py::test_per_step_external_torque_matches_a_loop_of_steps",
    )
)


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
