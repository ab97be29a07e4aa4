"""The NimbRo-OP's CPG on line (dynamics.nimbro_cpg_engine): ticked under a fixed command it is the batch plan
(nimbro_cpg_plan.cpg_plan) sample for sample; cmd_vel beyond the gait is limited and said; the command is taken at a
phase centre."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pinocchio")

from servo_ff.dynamics.nimbro_cpg import (  # noqa: E402
    CpgConfig,
    backward_speed_per_gcv,
    lateral_speed_per_gcv,
    speed_per_gcv,
    yaw_rate_per_gcv,
)
from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine  # noqa: E402
from servo_ff.dynamics.nimbro_cpg_plan import cpg_plan, gait_states  # noqa: E402

URDF = Path(__file__).resolve().parents[1] / "urdf" / "nimbro_op.urdf"
CFG = CpgConfig()


@pytest.mark.parametrize("vx", [0.04, 0.08])
def test_engine_ticked_at_a_fixed_command_is_the_batch_plan(vx):
    """Every sample (q and c_left on the same 8 ms grid) until the plan withdraws its command, exactly."""
    engine = CpgEngine(URDF)
    g = engine.gcv(vx)
    assert g == pytest.approx(vx / 0.0800, rel=0.01)  # 0.080 m/s per gcv (speed_per_gcv)
    walk = cpg_plan(URDF, g, 8).plan
    s = gait_states(g, 8, CFG)
    end = int(np.argmax(np.diff(s.gcv) < 0)) + 1  # the plan's command withdrawn: gcv slows from here
    assert end > 300
    engine.set_cmd(vx, 0.0, 0.0)
    engine.start()
    got = [engine.tick() for _ in range(end)]
    assert engine.joints == walk.joints and engine.params.dt == 0.008
    np.testing.assert_array_equal(np.array([x.q for x in got]), walk.q[:end])
    np.testing.assert_array_equal([x.c_left for x in got], walk.c_left[:end])
    np.testing.assert_allclose([x.t for x in got], walk.t[:end], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(engine.q_stand, walk.q[0])  # the halt pose: the walk's first sample


def test_cmd_beyond_the_gait_is_limited_and_said():
    """Each axis beyond its top speed (gcv ±1) is said and walked at the top; within every top but beyond the norm
    limit ‖gcv‖_2.4 ≤ 1 together, said with the factor; within both, nothing said."""
    engine = CpgEngine(URDF)
    top = speed_per_gcv(CFG)
    back, lat, yaw = backward_speed_per_gcv(CFG), lateral_speed_per_gcv(CFG), yaw_rate_per_gcv(CFG)
    assert engine.gcv(2 * top) == 1.0 and engine.gcv(0.5 * top) == pytest.approx(0.5)
    assert engine.gcv(-0.5 * back) == pytest.approx(-0.5) and engine.gcv(-2 * back) == -1.0
    assert engine.gcv3(0.0, -2 * lat, 0.5 * yaw) == (0.0, -1.0, pytest.approx(0.5))
    assert engine.beyond_reach(0.5 * top, 0.0, 0.0) == [] and engine.beyond_reach(-0.5 * back, 0.0, 0.0) == []
    assert engine.beyond_reach(0.0, 0.5 * lat, 0.0) == [] and engine.beyond_reach(0.0, 0.0, -0.5 * yaw) == []
    words = engine.beyond_reach(2 * top, -2 * lat, 2 * yaw)
    assert len(words) == 4 and f"linear.x {2 * top:g} m/s beyond 0.08017 m/s (gcv.x 1" in words[0]
    assert f"linear.y {-2 * lat:g} m/s beyond -0.1164 m/s (gcv.y -1" in words[1]
    assert f"angular.z {2 * yaw:g} rad/s beyond 0.3863 rad/s (gcv.z 1" in words[2]
    k = 1.0 / 3.0 ** (1 / 2.4)  # three axes at 1: ‖(1, 1, 1)‖_2.4 = 3^(1/2.4)
    assert f"norm limit ‖gcv‖_2.4 ≤ 1: walked at {k:.3g} of it" in words[3]
    assert "beyond -0.2338 m/s" in engine.beyond_reach(-0.3, 0.0, 0.0)[0]
    assert len(engine.beyond_reach(0.8 * top, 0.8 * lat, 0.0)) == 1  # 0.8·2^(1/2.4) = 1.07 > 1
    with pytest.raises(ValueError, match="cmd_vel linear.x is not finite"):
        engine.set_cmd(math.nan, 0.0, 0.0)
    with pytest.raises(RuntimeError, match="before start"):
        engine.tick()


def test_a_command_is_taken_at_the_next_phase_centre_and_zero_steps_in_place():
    """Stepping in place (gcv 0) until a command arrives mid-step: gcv stays 0 until the phase crosses a centre,
    then ramps at accelerationForward; the walk never halts at zero command."""
    engine = CpgEngine(URDF)
    engine.start()
    for _ in range(200):
        engine.tick()
    assert engine.state.walking and engine.state.gcv == 0.0 and engine.state.phase != 0.0
    engine.set_cmd(0.04, 0.0, 0.0)
    gcvs, phases = [], []
    for _ in range(200):
        engine.tick()
        gcvs.append(engine.state.gcv)
        phases.append(engine.state.phase)
    k = next(i for i, g in enumerate(gcvs) if g > 0)
    assert k > 2 and phases[k - 1] * phases[k - 2] <= 0  # taken in the tick after the phase crossed a centre
    assert all(p * q > 0 for p, q in zip(phases[: k - 2], phases[1 : k - 1]))  # and not at an earlier tick
    assert gcvs[k] == pytest.approx(CFG.acceleration_forward * CFG.dt)
    engine.set_cmd(0.0, 0.0, 0.0)
    for _ in range(500):
        engine.tick()
    assert engine.state.walking and engine.state.gcv == 0.0


OP3_URDF = Path(__file__).resolve().parents[1] / "urdf" / "op3.urdf"


@pytest.mark.parametrize("vx", [0.0177, 0.0354])
def test_op3_engine_ticked_at_a_fixed_command_is_op3_cpg_plan(vx):
    """The OP3's engine (the CPG scaled by dynamic similarity) is ``op3_cpg_plan`` sample for sample (q, c_left, t)
    until the plan withdraws its command; its top speed is the scaled one (0.0567 m/s), beyond it limited and said."""
    from servo_ff.dynamics.nimbro_cpg_engine import op3_cpg_engine
    from servo_ff.dynamics.op3_cpg import op3_config, op3_cpg_plan

    engine = op3_cpg_engine(OP3_URDF)
    cfg = op3_config(OP3_URDF)
    assert engine.params == cfg and engine.params.dt == 0.008
    assert speed_per_gcv(cfg) == pytest.approx(0.0567, abs=5e-5)
    g = engine.gcv(vx)
    assert g == pytest.approx(vx / speed_per_gcv(cfg))
    walk = op3_cpg_plan(OP3_URDF, g, 8).plan
    s = gait_states(g, 8, cfg)
    end = int(np.argmax(np.diff(s.gcv) < 0)) + 1
    assert end > 250
    engine.set_cmd(vx, 0.0, 0.0)
    engine.start()
    got = [engine.tick() for _ in range(end)]
    assert engine.joints == walk.joints and "l_knee" in engine.joints
    np.testing.assert_array_equal(np.array([x.q for x in got]), walk.q[:end])
    np.testing.assert_array_equal([x.c_left for x in got], walk.c_left[:end])
    np.testing.assert_allclose([x.t for x in got], walk.t[:end], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(engine.q_stand, walk.q[0])
    assert engine.gcv(0.1) == 1.0
    assert engine.beyond_reach(0.1, 0.0, 0.0) == ["linear.x 0.1 m/s beyond 0.05671 m/s (gcv.x 1: walked at that)"]
    assert engine.beyond_reach(0.05, 0.0, 0.0) == []
