"""The walk's halt and restart (ROS-free), on both gait families: the CPG (the OP3's scaled one on urdf/op3.urdf and
the NimbRo-OP's own) and placo's walk on the OP3. A halt request ends the walk within the bound its rule gives, with no
jump; the robot then stands still (joints constant, double support, feet side by side); a later command walks again.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pinocchio")

ROOT = Path(__file__).resolve().parents[1]
OP3 = ROOT / "urdf" / "op3.urdf"


def _cpg(robot: str):
    from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine, op3_cpg_engine

    return op3_cpg_engine(OP3) if robot == "op3" else CpgEngine(ROOT / "urdf" / "nimbro_op.urdf")


def _blend(cfg) -> float:
    """[s] from the state machine's halt to the halt pose (:func:`.nimbro_cpg_plan.halt_blend`'s rows)."""
    from servo_ff.dynamics.nimbro_cpg_plan import halt_blend_duration

    return (round(halt_blend_duration(cfg) / cfg.dt) - 1) * cfg.dt


def _walking(robot: str, vx: float, seconds: float):
    """The robot's CPG engine started under cmd_vel ``vx`` [m/s] and ticked ``seconds`` [s]."""
    e = _cpg(robot)
    e.set_cmd(vx, 0.0, 0.0)
    e.start()
    for _ in range(int(seconds / e.params.dt)):
        e.tick()
    return e


def _max_step(qs) -> float:
    """Largest |Δq| [rad] between successive samples."""
    return float(np.abs(np.diff(np.asarray(qs), axis=0)).max())


@pytest.mark.parametrize("robot", ["op3", "nimbro_op"])
def test_cpg_halts_after_the_step_stands_in_the_halt_pose_and_walks_again(robot):
    from servo_ff.dynamics.nimbro_cpg import speed_per_gcv

    e = _cpg(robot)
    cfg = e.params
    gcv = 0.5
    e.set_cmd(gcv * speed_per_gcv(cfg), 0.0, 0.0)
    e.start()
    ramp = cfg.first_step_duration + gcv / cfg.acceleration_forward + 2 * cfg.step_period  # gcv at its target
    walk = [e.tick() for _ in range(int(ramp / cfg.dt))]
    assert e.state.gcv == pytest.approx(gcv) and e.state.walking
    e.set_halt(True)
    t_request, halting = e.t, []
    while not e.halted and len(halting) < 10 / cfg.dt:
        halting.append(e.tick())
    # the rule (MotionLayer): the target latched to 0 at the next phase centre crossing (≤ one step period), gcv
    # down at accelerationForward × decelerationFactor to stoppingVelocity, then the next phase centre (≤ one more);
    # halted once the blend into the halt pose is over
    bound = 2 * cfg.step_period + (gcv - cfg.stopping_velocity) / (cfg.acceleration_forward * cfg.deceleration_factor)
    bound += _blend(cfg)
    assert e.halted and e.t - t_request <= bound + cfg.dt, (e.t - t_request, bound)
    held = [e.tick() for _ in range(int(1.2 / cfg.dt))]  # ≥ 1 s standing
    q_held = np.array([s.q for s in held])
    assert np.abs(q_held - e.q_stand).max() <= 1e-9 and {s.c_left for s in held} == {0.5}
    # no jump: halting moves the joints no more per tick than the walk at gcv 0.5 does; the last tick into the halt
    # pose (a phase centre → phase 0) well below it
    walk_step = _max_step([s.q for s in walk[-int(2 * cfg.step_period / cfg.dt) :]])
    assert _max_step([walk[-1].q] + [s.q for s in halting]) <= walk_step + 1e-12
    assert _max_step([halting[-1].q, held[0].q]) < 0.5 * walk_step
    # walking again (DynamicGait::reset): from the halt pose, the phase advancing, the legs stepping
    e.set_halt(False)
    again = [e.tick() for _ in range(int((cfg.first_step_duration + 2 * cfg.step_period) / cfg.dt))]
    np.testing.assert_array_equal(again[0].q, held[-1].q)
    assert e.state.walking and not e.halted and e.state.phase != 0.0
    assert np.ptp([s.q for s in again], axis=0).max() > 0.05 and min(s.c_left for s in again) == 0.0
    assert _max_step([held[-1].q] + [s.q for s in again]) <= walk_step + 1e-12


@pytest.mark.parametrize("robot", ["op3", "nimbro_op"])
@pytest.mark.parametrize("gcv", [0.25, 1.0])
def test_cpg_halt_blends_into_the_halt_pose_without_an_acceleration_spike(robot, gcv):
    """The authors' halt puts the phase from a phase centre to 0 (DynamicGait::reset): a jump of ≈ 0.014 rad of hip
    and ankle roll in one tick, whose five-point q̈ (what the walk node publishes, :func:`knot_derivatives`) was
    300–345 rad/s², 12–17 × the joint's own largest in the walk, and the feed-forward's goal went to the joint limit.
    Now each joint's |q̈| from the last walking samples to the halt pose stays within its own largest over the walk's
    last two step periods (measured: ≤ 0.83 of it); the halt pose is reached halt_blend_duration after the last
    walking sample, with the engine halted from there."""
    from servo_ff.dynamics.nimbro_cpg import speed_per_gcv
    from servo_ff.dynamics.nimbro_cpg_plan import halt_blend_duration
    from servo_ff.interpolation import knot_derivatives

    e = _cpg(robot)
    cfg = e.params
    e.set_cmd(gcv * speed_per_gcv(cfg), 0.0, 0.0)
    e.start()
    ramp = cfg.first_step_duration + gcv / cfg.acceleration_forward + 2 * cfg.step_period
    out = [e.tick() for _ in range(int(ramp / cfg.dt))]
    n_walk = len(out)
    e.set_halt(True)
    last_walking, halted_at = None, None
    while halted_at is None and len(out) < n_walk + 10 / cfg.dt:
        walking = e.state.walking
        out.append(e.tick())
        if walking and not e.state.walking:
            last_walking = len(out) - 1  # the sample taken in the tick that halted
        if e.halted:
            halted_at = len(out)  # the next sample is the first of the halt pose
    out += [e.tick() for _ in range(10)]
    q = np.array([s.q for s in out])
    n_blend = round(halt_blend_duration(cfg) / cfg.dt)
    assert last_walking is not None and halted_at == last_walking + n_blend
    assert np.abs(q[halted_at:] - e.q_stand).max() <= 1e-12 and np.abs(q[halted_at - 1] - e.q_stand).max() > 0
    _, ddq = knot_derivatives(q, cfg.dt)  # row k: sample k + 2
    walk = np.abs(ddq[n_walk - 2 - int(2 * cfg.step_period / cfg.dt) : n_walk - 2]).max(axis=0)
    halt = np.abs(ddq[last_walking - 5 : halted_at + 1]).max(axis=0)
    worst = int(np.argmax(halt - walk))
    assert (halt <= walk + 1e-9).all(), (e.joints[worst], halt[worst], walk[worst])  # (1e-9: roundoff, still joints)


def test_cpg_walk_asked_during_the_halt_blend_starts_from_the_halt_pose():
    """A cmd_vel that cancels the halt while the engine blends into the halt pose: the blend runs to its end (no
    jump back into a walking pose), the walk starts from the halt pose (DynamicGait::reset) at the next tick."""
    e = _walking("op3", 0.03, 3.0)
    cfg = e.params
    e.set_halt(True)
    while e.state.walking and e.t < 20.0:
        last = e.tick()  # the last one: the sample of the tick that halted
    assert not e.state.walking and not e.halted  # the blend under way
    e.set_halt(False)
    blend = [e.tick() for _ in range(round(_blend(cfg) / cfg.dt))]
    assert all(np.abs(b.q - e.q_stand).max() > 0 for b in blend)
    assert _max_step([last.q] + [b.q for b in blend]) < 0.005  # [rad/tick] no jump (the authors': 0.0136)
    again = [e.tick() for _ in range(int(2 * cfg.step_period / cfg.dt))]
    assert np.abs(again[0].q - e.q_stand).max() <= 1e-12 and e.state.walking  # from the halt pose, walking
    assert _max_step([blend[-1].q, again[0].q]) < 0.005 and np.ptp([s.q for s in again], axis=0).max() > 0.05


def test_halt_blend_leaves_the_last_walking_pose_at_its_velocity_and_reaches_the_halt_pose_at_rest():
    """halt_blend from three samples of a line (q = 0.2 + 0.5 t [rad]) to a pose ±0.1 rad away is the quintic with
    q(0) = the last sample, q̇(0) = 0.5 rad/s (the second-order backward difference, exact on a line), q̈(0) = 0 and
    q = the halt pose, q̇ = q̈ = 0 at T: q0 + v0·T·(s − 6s³ + 8s⁴ − 3s⁵) + Δ·(10s³ − 15s⁴ + 6s⁵), s = t/T; from one
    sample, v0 = 0."""
    from servo_ff.dynamics.nimbro_cpg_plan import halt_blend

    dt, duration = 0.008, 0.2
    q_walk = (0.2 + 0.5 * dt * np.arange(-2, 1))[:, None] * np.ones((1, 2))  # (3, 2): t = −2dt, −dt, 0
    d = np.array([0.1, -0.1])
    q_halt = q_walk[-1] + d
    s = (np.arange(1, 25) / 25)[:, None]
    moved = s - 6 * s**3 + 8 * s**4 - 3 * s**5  # the initial velocity's part, per unit of v0·T
    settled = 10 * s**3 - 15 * s**4 + 6 * s**5  # the displacement's part
    rows = halt_blend(q_walk, q_halt, dt, duration)
    np.testing.assert_allclose(rows, q_walk[-1] + 0.5 * duration * moved + d * settled, rtol=0, atol=1e-14)
    np.testing.assert_allclose(halt_blend(q_walk[-1:], q_halt, dt, duration), q_walk[-1] + d * settled, atol=1e-14)
    assert halt_blend(q_walk, q_halt, dt, dt).shape == (0, 2)  # a blend of one tick: the halt pose at once


def test_cpg_halt_cancelled_before_it_halts_walks_on_and_a_halt_before_the_start_stands():
    e = _walking("op3", 0.03, 3.0)
    cfg = e.params
    g = e.state.gcv
    e.set_halt(True)
    for _ in range(3):
        e.tick()
    e.set_halt(False)  # a cmd_vel within the step: the halt cancelled
    for _ in range(int(3.0 / cfg.dt)):
        e.tick()
        assert not e.halted
    assert e.state.gcv == pytest.approx(g)
    e2 = _cpg("op3")
    e2.set_halt(True)  # during the approach: the walk does not start
    e2.start()
    first = [e2.tick() for _ in range(int(1.0 / cfg.dt))]
    assert e2.halted and np.abs(np.array([s.q for s in first]) - e2.q_stand).max() <= 1e-9


def _placo():
    pytest.importorskip("placo")
    from servo_ff.dynamics.walk_pattern import WalkEngine

    return WalkEngine(OP3)


def _soles(e) -> np.ndarray:
    """The right sole in the left sole's frame [m] (placo's frames of the robot as it stands)."""
    left, right = np.asarray(e.robot.get_T_world_left()), np.asarray(e.robot.get_T_world_right())
    return (np.linalg.inv(left) @ right)[:3, 3]


@pytest.mark.parametrize("phase", [0.0, 0.4, 0.7])
def test_placo_halt_finishes_the_step_closes_the_feet_stands_and_walks_again(phase):
    e = _placo()
    p = e.params
    e.set_cmd(0.1, 0.0, 0.0)
    e.start()
    # walking (beyond the first double support), the request at `phase` of a step period later
    walk = [e.tick() for _ in range(int((2.0 + phase * p.step_period) / p.dt))]
    e.set_halt(True)
    t_request, halting = e.t, []
    while not e.halted and len(halting) < 10 / p.dt:
        halting.append(e.tick())
    # the rule: re-planned at once in a single support, else at the next one (≤ one double support away): the step
    # in progress (≤ its single support), a double support, the closing step, placo's end double support
    ds = p.double_support_ratio * p.single_support
    bound = 2 * (ds + p.single_support) + p.startend_double_support_ratio * p.single_support
    assert e.halted and halting[-1].t - t_request <= bound + p.dt, (halting[-1].t - t_request, bound)
    held = [e.tick() for _ in range(int(1.2 / p.dt))]  # ≥ 1 s standing
    assert np.ptp([s.q for s in held], axis=0).max() <= 1e-9 and {s.support for s in held} == {"both"}
    dx, dy, _ = _soles(e)
    assert abs(dx) < 1e-3 and dy == pytest.approx(-p.feet_spacing, abs=1e-3)  # side by side, the right one right
    # no jump: halting moves the joints per tick as the walk does (its re-planned swing within 2 % of the walk's
    # largest), and comes to rest without a step
    walk_step = _max_step([s.q for s in walk[100:]])
    assert _max_step([walk[-1].q] + [s.q for s in halting]) < 1.02 * walk_step
    assert _max_step([halting[-1].q, held[0].q]) < 0.1 * walk_step
    # walking again: a fresh plan from the feet where they stand, the left foot forward by the command's step
    left = np.asarray(e.robot.get_T_world_left())[:3, 3]
    e.set_halt(False)
    again = [
        e.tick() for _ in range(int((p.startend_double_support_ratio * p.single_support + 2 * p.step_period) / p.dt))
    ]
    assert not e.halted and {"left", "right"} <= {s.support for s in again}
    assert np.asarray(e.robot.get_T_world_left())[0, 3] - left[0] > 0.5 * 0.1 * p.step_period
    assert _max_step([held[-1].q] + [s.q for s in again]) < 1.02 * walk_step
    assert _max_step([held[-1].q, again[0].q]) < 0.1 * walk_step


def test_placo_halt_cancelled_within_its_step_walks_on_and_a_halt_before_the_start_holds_the_stance():
    e = _placo()
    p = e.params
    e.set_cmd(0.1, 0.0, 0.0)
    e.start()
    for _ in range(int(2.1 / p.dt)):
        e.tick()
    e.set_halt(True)
    for _ in range(3):
        e.tick()
    e.set_halt(False)
    left = np.asarray(e.robot.get_T_world_left())[0, 3]
    supports = {e.tick().support for _ in range(int(3.0 / p.dt))}
    assert not e.halted and {"left", "right"} <= supports
    assert np.asarray(e.robot.get_T_world_left())[0, 3] - left > 3 * 0.5 * 0.1 * p.step_period  # walked on
    e2 = _placo()
    e2.set_halt(True)  # during the approach: the walk does not start
    e2.start()
    first = [e2.tick() for _ in range(int(1.0 / p.dt))]
    assert e2.halted and np.abs(np.array([s.q for s in first]) - e2.q_stand).max() <= 1e-9
    assert {s.support for s in first} == {"both"} and {s.c_left for s in first} == {0.5}


def test_cpg_halts_from_a_turn_and_a_lateral_walk_in_the_halt_pose():
    """The halt withdraws all three gcv axes: from a turn with a lateral step the walk halts once |gcv| (the whole
    vector) is below stoppingVelocity, within the turn's own ramp-down bound, and stands in the same halt pose."""
    from servo_ff.dynamics.nimbro_cpg import lateral_speed_per_gcv, yaw_rate_per_gcv

    e = _cpg("op3")
    cfg = e.params
    gy, gz = 0.3, 0.5
    e.set_cmd(0.0, gy * lateral_speed_per_gcv(cfg), gz * yaw_rate_per_gcv(cfg))
    e.start()
    for _ in range(int((cfg.first_step_duration + 4.0) / cfg.dt)):
        e.tick()
    assert e.state.gcv_z == pytest.approx(gz) and e.state.gcv_y == pytest.approx(gy)
    e.set_halt(True)
    t_request = e.t
    while not e.halted and e.t - t_request < 10.0:
        e.tick()
    # target 0 latched at the next phase centre (≤ one step period), each axis down at its own acceleration, then
    # the next phase centre (≤ one more): the slower of the two axes bounds it
    ramp = max(gy / cfg.acceleration_sideward, gz / cfg.acceleration_rotational)
    assert e.halted and e.t - t_request <= 2 * cfg.step_period + ramp + _blend(cfg) + cfg.dt
    held = np.array([e.tick().q for _ in range(int(1.0 / cfg.dt))])
    assert np.abs(held - e.q_stand).max() <= 1e-9
