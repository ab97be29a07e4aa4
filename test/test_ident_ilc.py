"""ILC (Schwarz & Behnke Eq. 20–21) and the windowed error (Eq. 28) on the simulated MX-106."""

import numpy as np
import pytest

from servo_ff.identification.ilc import run_ilc, window_steps, windowed_deviation, windowed_error
from servo_ff.identification.pendulum import simulated_servo
from servo_ff.models.presets import preset
from servo_ff.models.stepper import PendulumLoad
from servo_ff.trajectories import schwarz_behnke_reference

DT = 0.005


def test_window_steps_is_open_interval():
    assert window_steps(0.025, 0.005) == 4  # |a| < 25 ms → a ∈ {−4…4}
    assert window_steps(0.026, 0.005) == 5
    assert window_steps(0.0, 0.005) == 0


def test_windowed_error_forgives_shifts_inside_the_window_only():
    t = np.arange(400) * DT
    ref = np.sin(2 * np.pi * t)
    shifted = np.sin(2 * np.pi * (t - 3 * DT))  # 15 ms late
    dev = windowed_deviation(ref, shifted, window_steps(0.025, DT))
    assert dev[:-3].max() < 1e-12  # matched inside the window (the last 3 samples' match lies past the end)
    assert windowed_error(ref, shifted, 0.025, DT) == pytest.approx(dev.max())
    late = np.sin(2 * np.pi * (t - 10 * DT))  # 50 ms late: outside the window
    plain = np.abs(ref - late).max()
    assert windowed_error(ref, late, 0.025, DT) > 0.3 * plain
    assert windowed_error(ref, late, 0.0, DT) == pytest.approx(plain)


def _servo(kp=8.0, mass=1.0):
    p = preset("mx106", "m4")
    return p.with_(firmware=p.firmware.with_(kp=kp)), PendulumLoad(mass, 0.15)


def test_ilc_converges_on_simulated_mx106_m4():
    params, load = _servo()
    ref = schwarz_behnke_reference(DT).q
    res = run_ilc(simulated_servo(params, load, DT), ref, DT, gain=1.0, delay=0.06, threshold=0.02, max_iterations=15)
    assert res.converged
    k = int(res.iterations)
    assert res.errors[0] > 0.2  # plain P control does not track
    assert res.errors[k] <= 0.02 and (res.errors[:k] > 0.02).all()
    assert res.commands.shape == (k + 1, len(ref)) and res.measured.shape == (k + 1, len(ref))
    np.testing.assert_array_equal(res.commands[0], ref)  # initial curve = the reference (Fig. 3)
    assert np.abs(res.final_command - ref).max() > 0.3  # the learned command differs from the reference


def test_ilc_batch_matches_individual_problems_and_freezes_converged_ones():
    ref1 = schwarz_behnke_reference(DT).q
    p = preset("mx106", "m4")
    params = np.stack([p.with_(firmware=p.firmware.with_(kp=kp)).packed() for kp in (8.0, 32.0)])  # (J=2, 20)
    load = PendulumLoad(np.array([1.0, 0.5]), 0.15)
    ref = np.stack([ref1, ref1], axis=1)
    batch = run_ilc(simulated_servo(params, load, DT), ref, DT, gain=1.0, delay=0.05, max_iterations=12)
    assert batch.converged.all()
    assert batch.iterations[1] < batch.iterations[0]  # the stiffer servo needs fewer iterations
    for j, (kp, m) in enumerate(((8.0, 1.0), (32.0, 0.5))):
        single = run_ilc(
            simulated_servo(p.with_(firmware=p.firmware.with_(kp=kp)), PendulumLoad(m, 0.15), DT),
            ref1,
            DT,
            gain=1.0,
            delay=0.05,
            max_iterations=12,
        )
        assert int(single.iterations) == batch.iterations[j]
        np.testing.assert_allclose(single.final_command, batch.commands[single.iterations, :, j], atol=1e-12)
    # the converged problem's command stays frozen while the other learns
    k1 = batch.iterations[1]
    np.testing.assert_array_equal(batch.commands[-1][:, 1], batch.commands[k1][:, 1])


def test_ilc_zero_initial_and_bad_input():
    params, load = _servo()
    ref = schwarz_behnke_reference(DT).q
    res = run_ilc(simulated_servo(params, load, DT), ref, DT, initial="zero", max_iterations=2, threshold=0.0)
    assert not res.commands[0].any() and len(res.errors) == 3 and not res.converged
    assert res.errors[2] < res.errors[0]
    bad = ref.copy()
    bad[5] = np.nan
    with pytest.raises(ValueError, match="reference contains non-finite"):
        run_ilc(lambda u: u, bad, DT)
    with pytest.raises(ValueError, match="initial must be"):
        run_ilc(lambda u: u, ref, DT, initial="guess")
    with pytest.raises(ValueError, match="execute returned shape"):
        run_ilc(lambda u: u[:-1], ref, DT)
    with pytest.raises(ValueError, match=r"delay 100 s is not shorter than the reference \("):  # before: numpy's
        run_ilc(lambda u: u, ref, DT, delay=100.0)  # "operands could not be broadcast"


def test_ilc_record_of_a_pendulum_given_as_one_element_arrays():
    """A one-joint bench often carries its load as (1,) arrays: the record describes that one pendulum; a load
    of several pendulums on one joint is refused with the reason."""
    from servo_ff.models.presets import preset
    from servo_ff.models.stepper import PendulumLoad
    from servo_ff.trajectories import trajectory
    from servo_ff.workflows.ilc import ilc_on_pendulum

    p, ref = preset("mx64", "m4"), trajectory("schwarz_behnke_reference", dt=0.005)
    kw = dict(dt=0.005, gain=0.8, delay=0.04, max_iterations=1)
    a, _ = ilc_on_pendulum(p, PendulumLoad(mass=np.array([0.5]), length=np.array([0.15])), ref, 8.0, **kw)
    b, _ = ilc_on_pendulum(p, PendulumLoad(mass=0.5, length=0.15), ref, 8.0, **kw)
    np.testing.assert_array_equal(a.pendulum, [0.5, 0.15, 0.0])
    np.testing.assert_array_equal(a.commands, b.commands)
    with pytest.raises(ValueError, match="load|pendulum"):
        ilc_on_pendulum(p, PendulumLoad(mass=np.array([0.5, 0.4]), length=np.array([0.15, 0.1])), ref, 8.0, **kw)


def test_ilc_never_runs_a_command_beyond_the_joint_limits():
    """Before: the ILC ran every learned command whatever the joint limits (the audit's gain 6 on ±2.5 rad: goals
    up to 13.3 rad, refused by the servo node, learned from as if applied). Now a reference outside is refused
    with the value and the limit, and a learned command outside ends learning with the trials done so far."""
    ref = 0.6 * np.sin(2 * np.pi * np.arange(200) * DT)
    ran = []

    def lazy(u):  # a servo that follows half the command: the learned command grows past the reference
        ran.append(u.copy())
        return 0.5 * u

    with pytest.raises(ValueError, match=r"the reference leaves the joint limits: 0\.6000 rad .*above the upper"):
        run_ilc(lazy, ref, DT, limits=(-0.5, 0.5))
    assert not ran
    res = run_ilc(lazy, ref, DT, gain=1.0, threshold=0.0, max_iterations=20, limits=(-1.0, 1.0))
    assert res.stop_kind == "limit" and "leaves the joint limits" in res.stopped, res.stopped
    assert "iteration 2 leaves the joint limits: 1.0500 rad" in res.stopped  # 0.6, 0.9, then 1.05 × sin
    assert max(np.abs(u).max() for u in ran) <= 1.0  # never ran beyond the limits
    assert len(res.commands) == len(ran) == len(res.errors) == 2  # the trials done, kept


def test_ilc_stops_when_it_diverges():
    """Before: a divergent ILC learned on to its cap and ended as if done (the audit's gain 6 on the sim: q_max
    0.224 → 0.899 → 2.679 → 0.836 → 2.038 rad, goals to 13.3 rad). Now a q_max above diverge_factor × the first,
    or growing diverge_growth iterations in a row to over twice its lowest, stops learning: stop_kind diverged."""
    from servo_ff.identification.ilc import divergence

    ref = 0.6 * np.sin(2 * np.pi * np.arange(200) * DT)
    res = run_ilc(lambda u: -u, ref, DT, gain=1.0, threshold=0.0, max_iterations=20, diverge_factor=3.0)
    assert res.stop_kind == "diverged" and len(res.errors) == 3, res.errors  # 2, 4, then 8 × 0.6 (> 3 ×): stopped
    assert "diverged: q_max 4.7669 rad at iteration 2 is above 3 × the first (1.1953 rad)" in res.stopped
    assert divergence([np.array(x) for x in (0.5, 0.2, 0.3, 0.35, 0.41)], 3.0, 3).startswith("q_max grew 3")
    assert divergence([np.array(x) for x in (0.5, 0.2, 0.21, 0.22, 0.23)], 3.0, 3) == ""  # jitter at its floor
    assert divergence([np.array(x) for x in (0.5, 0.2, 0.3, 0.35, 0.41)], 0.0, 0) == ""  # both off


def test_a_trial_the_joint_did_not_follow_stops_learning_with_the_trials_before():
    """An ``execute`` raising ILCStop with a kind (the node's: a joint that did not follow, torque off) ends learning
    with that stop_kind and the trials before; :func:`unresponsive` says when a motion spans under a ratio of the
    command's (before: such trials were learned from, the run ended done)."""
    from servo_ff.identification.ilc import ILCStop, unresponsive

    ref = 0.6 * np.sin(2 * np.pi * np.arange(200) * DT)
    trials = iter([0.9 * ref, np.full_like(ref, 0.041)])

    def execute(u):
        q = next(trials)
        why = unresponsive(u, q, 0.2)
        if why:
            raise ILCStop(f"did not follow: {why}", "no_response")
        return q

    res = run_ilc(execute, ref, DT, threshold=0.0, max_iterations=5)
    assert res.stop_kind == "no_response" and len(res.commands) == 1, res.stopped
    assert res.stopped.startswith("iteration 1: did not follow: it moved 0.0000 rad for a command spanning ")
    assert unresponsive(ref, 0.5 * ref, 0.2) == "" and unresponsive(np.zeros(5), np.zeros(5), 0.2) == ""


def test_a_trial_without_a_supply_reading_is_said():
    """Before: the ILC node gave a trial without a supply reading the mean of the others, unsaid. Now the line
    names the trials and the value; no reading at all is refused, as before."""
    from servo_ff.workflows.ilc import supply_per_trial

    v, said = supply_per_trial([15.0, float("nan"), 14.0, float("nan")], "servo_supply")
    np.testing.assert_allclose(v, [15.0, 14.5, 14.0, 14.5])
    assert said == "no servo_supply during trial(s) 1, 3: their supply is the mean of the others, 14.50 V"
    assert supply_per_trial([15.0, 14.0], "servo_supply")[1] == ""
    with pytest.raises(ValueError, match="no servo_supply during the trials: the record needs the supply"):
        supply_per_trial([float("nan")], "servo_supply")
