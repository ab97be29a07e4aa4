"""run_op3's whole Twist (``cmd``) and halt time (``halt``): a bad one is refused before any node starts, and over
DDS a turn command reaches the walk node's engine, which steers (the CPG latches gcv.z) and takes the halt."""

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
