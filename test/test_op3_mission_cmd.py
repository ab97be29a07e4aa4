"""run_op3's whole Twist (``cmd``) and halt time (``halt``): a bad one is refused before any node starts, and over
DDS a turn command reaches the walk node's engine, which steers (the CPG latches gcv.z) and takes the halt; the CPG's
halt asks the feed-forward node for no goal beyond a joint limit."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("mujoco")
pytest.importorskip("pinocchio")
pytest.importorskip("rclpy")


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(cmd=(0.0, math.nan, 0.0)), r"^cmd must be 3 finite numbers \(linear.x, linear.y, angular.z\), got "),
        (dict(cmd=(0.1, 0.0)), r"^cmd must be 3 finite numbers"),
        (dict(halt=(2.0, 1.0)), r"^halt must be \(t_halt, t_end\) \[s from the walk start\], 0 ≤ t_halt ≤ t_end"),
        (dict(halt=(0.0, math.inf)), r"^halt must be"),
        (dict(halt=(0.5, 1.0), withdraw=True), r"^halt and withdraw: each sets the halt time, give one$"),
    ],
)
def test_bad_cmd_or_halt_refused_before_any_node_starts(kw, match):
    from servo_ff.bringup.op3_mission import run_op3

    with pytest.raises(ValueError, match=match):
        run_op3("ff", salt=1, timeout=0.0, log=lambda s: pytest.fail(s), **kw)


def test_turn_cmd_reaches_the_walk_engine_and_the_halt_follows(compiled_mujoco_kernels):
    """The OP3's CPG graph under cmd (0, 0, +0.2 rad/s): the walk node's engine holds that command before the sim
    starts, its gait latches gcv.z = 0.2 / top > 0 (and gcv.x 0) while walking, and the probe's halt at t_halt
    reaches the engine (halt requested) before the run's end."""
    from servo_ff.bringup.op3_mission import run_op3
    from servo_ff.bringup.robot_graph import op3_graph
    from servo_ff.dynamics.nimbro_cpg_engine import op3_cpg_engine
    from servo_ff.dynamics.walk_sim import OP3_URDF

    wz, t_halt, t_end = 0.2, 1.0, 1.6
    seen: list[tuple[float, tuple, float, float, bool]] = []

    def tap(t, quat, sim, walk):
        s = walk.engine.state
        seen.append((t, walk.engine.cmd, s.gcv_z, s.gcv, walk.engine.halt_requested))

    r = run_op3("ff", n_steps=1, robot=op3_graph("cpg"), cmd=(0.0, 0.0, wz), halt=(t_halt, t_end), tap=tap, salt=67,
                log=lambda _: None)  # fmt: skip
    assert not r.fell and seen[-1][0] >= t_end
    assert all(c == (0.0, 0.0, wz) for _, c, *_ in seen)
    top = op3_cpg_engine(OP3_URDF).tops(0.0)[2]  # [rad/s] 0.546 on urdf/op3.urdf
    gz = max(g for t, _, g, _, _ in seen if t < t_halt)
    assert 0.0 < gz <= wz / top + 1e-12 and all(gx == 0.0 for *_, gx, _ in seen)
    assert not any(h for t, *_, h in seen if t < t_halt - 0.01) and seen[-1][4]


def test_cpg_halt_over_dds_asks_the_feedforward_for_no_goal_beyond_a_limit(compiled_mujoco_kernels):
    """The OP3's CPG walk under (c) over DDS, halted (the walk node's halt at the ROS-free plan's withdrawal,
    ``withdraw``) and standing through the plan's 0.5 s hold: the feed-forward node clamps no goal. Before the halt
    blend (nimbro_cpg_plan.halt_blend), the authors' jump into the halt pose gave q̈ ≈ 300 rad/s² of hip and ankle
    roll for two ticks, τ 27 N·m, and goals of ±4.5–5.9 rad clamped to the ankle roll's ±1.41 rad, nine clamps in
    six joints."""
    from servo_ff.bringup.op3_mission import run_op3
    from servo_ff.bringup.robot_graph import op3_graph

    seen: dict = {}

    def tap(t, quat, sim, walk):
        seen.update(halted=walk.engine.halted, t=t)

    r = run_op3("ff", n_steps=4, vx=0.0354, robot=op3_graph("cpg"), withdraw=True, tap=tap, salt=71,
                log=lambda _: None)  # fmt: skip
    assert not r.fell and seen["halted"]  # the walk stood in its halt pose at the run's end
    assert r.clamps == {}
