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


# --- markers: `ros` (the test talks over rclpy/DDS or starts node processes) and `slow` (over ≈ 1 s) -----------------
# `./run test -m "not slow and not ros"` is the fast inner loop (docs/install.md#fast-test-runs).

#: A test is `ros` when its own source, one of its fixtures or a module-level helper it calls names one of these.
_ROS_TOKENS = ("RosHarness", "rclpy", "python_env", "servo_ff.bringup", "launch_ros", "hardware_on_virtual_bus")

#: Tests over ≈ 1 s on a loaded 2-core box (`./run test -m "not ros" --durations=80`), by node id without
#: parameters (every parametrisation), and the examples (subprocesses).
SLOW_TESTS: frozenset[str] = frozenset(
    (
        "test/test_ident_cli.py::test_summary_records_split_seed_budget_firmware_and_no_nan",
        "test/test_models_bam_equality.py::test_rollout_equals_bams_simulator_on_its_published_files",
        "test/test_bounded_input.py::test_a_bag_cut_mid_chunk_is_one_line_in_bounded_memory",
        "test/test_walk_pattern.py::test_online_cmd_turns_and_stops",
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
        # over ≈ 2 s in `-m "not slow and not ros" --durations=60` on the loaded box (2026-11-26)
        "test/test_ident_cli.py::test_no_validation_logs_gives_null_and_says_so",
        "test/test_models_stepper.py::test_the_threaded_and_the_serial_kernel_give_the_same_bits",
        "test/test_models_firmware.py::test_sts_internal_target_moves_at_most_its_speed",
        "test/test_ident_prior.py::test_a_slower_firmware_clamp_and_another_error_gain_are_recovered",
        "test/test_models_friction.py::test_external_load_matches_pendulum",
        "test/test_mujoco_model.py::test_2r_m1_and_m4_trajectories_differ_but_both_trace_the_path",
        "test/test_tf_cli.py::test_tf_mx28_prints_poles_and_writes_plots",
        "test/test_models_thermal.py::test_thermal_parameters_are_identified_from_integer_temperatures",
        "test/test_models_stepper.py::test_step_and_rollout_agree_and_positions_only",
        "test/test_feetech_virtual_bus.py::test_ping_reports_the_model_number",
        "test/test_models_stepper.py::test_packed_params_per_element",
        "test/test_models_firmware.py::test_unknown_actuator_needs_a_law_and_names_how_to_give_one",
        "test/test_dynamixel_reliability.py::test_late_dropped_and_corrupt_replies_never_reported_as_fresh_state",
        "test/test_replay_robot_bags.py::test_per_joint_gains_need_joints",
        "test/test_replay_robot_bags.py::test_unnamed_command_columns_need_joints",
        "test/test_replay_bags.py::test_recorded_bag_replays_to_alpha",
        "test/test_replay_bags.py::test_bad_bags_are_one_line_exit_2",
        "test/test_replay_bags.py::test_bag_reader_takes_the_bench_from_arguments_and_the_bag",
        "test/test_dynamixel_protocol.py::test_no_header_holds_back_a_later_valid_packet",
        "test/test_dynamixel_protocol.py::test_compiled_scanner_equals_python_reference",
        "test/test_dynamixel_transactions.py::test_no_reply_is_ever_taken_by_another_transaction",
        "test/test_trajectories_and_cli.py::test_cli_errors_are_one_clear_line",
        "test/test_trajectories_and_cli.py::test_cli_simulate_writes_csv_and_png",
        "test/test_mujoco_servos.py::test_humanoid_sensors_standing",
        "test/test_feetech_stall.py::test_replies_queued_behind_a_stall_longer_than_the_late_horizon_are_never_fresh_state",
        "test/test_walk_pattern.py::test_ik_reaches_planned_com_and_feet",
        "test/test_walk_pattern.py::test_step_period_and_alternating_feet",
        "test/test_ident_fit.py::test_warm_started_nested_model_improves_on_its_warm_start",
        "test/test_ident_fit.py::test_q_offset_is_fitted_and_can_be_held_at_zero",
        "test/test_models_stepper.py::test_servo_bank_checks_parameters_once_and_again_when_they_change",
        "test/test_feetech_bus.py::test_silent_servo_is_skipped_then_reprobed_and_counted_as_timeouts",
        "test/test_feetech_bus.py::test_late_dropped_and_corrupt_replies_never_reported_as_fresh_state",
        "test/test_dynamixel_bus.py::test_cycle_is_two_transactions_and_tracks_goals",
        # over ≈ 1 s in the second run (the first ones marked, 140 s wall, 96 s of test durations)
        "test/test_ident_fit.py::test_pack_candidates_matches_actuator_params_packed",
        "test/test_ident_fit.py::test_whole_budget_is_used_with_ipop_restarts_unless_restarts_end_it",
        "test/test_models_stepper.py::test_voltage_law_saturates_and_stall_torque",
        "test/test_feetech_virtual_bus.py::test_read_write_sign_magnitude_and_motion",
        "test/test_bounded_input.py::test_a_1gb_parameter_file_is_one_line_in_bounded_memory",
        "test/test_dynamixel_p1.py::test_bus1_late_dropped_corrupt_replies_never_reported_as_fresh_state",
        "test/test_models_friction.py::test_friction_never_injects_energy",
        "test/test_dynamixel_bus.py::test_scan_finds_the_servos_present",
        "test/test_dynamixel_reliability.py::test_silent_servo_is_skipped_then_reprobed_and_counted_as_timeouts",
        "test/test_dynamixel_bus.py::test_missing_servo_at_start_is_listed_and_the_rest_work",
        "test/test_replay_robot_bags.py::test_quality_gate_refuses_with_nothing_written",
        "test/test_tf_mg995.py::test_prbs_identification_workflow_recovers_model",
        "test/test_dynamixel_protocol.py::test_encode_matches_sdk_and_round_trips",
        "test/test_walk_pattern.py::test_zmp_inside_support_polygon",
        "test/test_dynamixel_p1.py::test_ax12_bus_reads_each_servo_and_writes_kp_as_compliance_slope",
        "test/test_ident_alpha.py::test_fitted_model_feedforward_tracks_the_reference_on_the_simulated_servo",
        "test/test_dynamixel_protocol.py::test_status_round_trip_through_stream_in_pieces",
        "test/test_dynamixel_p1.py::test_bus1_goal_limits_p_gain_alarm_and_reboot_equivalent",
        "test/test_dynamixel_reliability.py::test_setup_retries_per_servo_and_names_the_one_that_failed",
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
