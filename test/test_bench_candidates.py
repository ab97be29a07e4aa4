"""bench/_candidates.py: the candidate laws of bench/candidate_laws.py are the baseline exactly at their neutral
values, move it when set, and apply the law they state (one step against the closed form)."""

import sys
from pathlib import Path

import numpy as np
import pytest

from servo_ff.identification.synthetic import bench_grid, simulate_logs
from servo_ff.io.servo_log import stack_logs
from servo_ff.models import slots
from servo_ff.models.motor import firmware_torque
from servo_ff.models.params import N_PACKED
from servo_ff.models.presets import preset
from servo_ff.models.stepper import step

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _candidates import CANDIDATES, Candidate, harness_mae  # noqa: E402

TRUTH = preset("xl330", "m4")
# kp 100 and 400 on the recordings' pendulum (0.49 kg at 0.10 m): duties from small to saturated
GRID = bench_grid(masses=(0.49,), lengths=(0.1,), kps=(100, 400), trajectories=("lift_and_drop", "sub_oscillations"))
LOGS = simulate_logs(TRUTH, GRID, duration=3.0, seed=0)
BATCH = stack_logs(LOGS)
PACKED = np.stack([TRUTH.with_(firmware=TRUTH.firmware.with_(kp=lg.kp, vin=lg.vin)).packed() for lg in LOGS])[None]
NEW = {"pwm_deadband": 0.1, "torque_saturation": 0.3, "load_scale": 1.2}  # an active value of each


def _theta(cand: Candidate, extra: np.ndarray) -> np.ndarray:
    trace: list = []
    harness_mae(PACKED, BATCH, cand, extra, trace)
    return np.array(trace)


@pytest.mark.parametrize("name", sorted(NEW))
def test_candidate_is_the_baseline_at_neutral_and_moves_it_when_set(name):
    base = _theta(Candidate(), np.zeros((1, 0)))
    cand = CANDIDATES[name]()
    neutral = _theta(cand, cand.neutral()[None])
    np.testing.assert_array_equal(neutral, base)  # bit for bit
    moved = _theta(CANDIDATES[name](), np.array([[NEW[name]]]))
    assert np.abs(moved - base).max() > 0.01  # rad


def _one_step(name: str, value: float):
    """One step from rest at θ = 0.3 rad toward several goals, through the candidate's rows/load, and the baseline's
    motor torque and voltage on the same input."""
    goals = np.array([[0.3, 0.31, 0.5, 1.5]])  # duty 0, small, mid, saturated at kp 400
    th, dth = np.full_like(goals, 0.3), np.zeros_like(goals)
    p = np.broadcast_to(TRUTH.with_(firmware=TRUTH.firmware.with_(kp=400.0)).packed(), (*goals.shape, N_PACKED))
    cand, extra = CANDIDATES[name](), np.array([[value]])
    batch = type("B", (), {"mass": 0.49, "length": 0.1, "arm_mass": 0.0})
    state = {"theta": th, "dtheta": dth, "goal": goals, "enable": np.ones_like(goals)}
    r = step(cand.rows(p, 0, extra, state), th, dth, goals, 0.005, cand.load(batch, extra))
    tau, volts = firmware_torque(p, th, dth, goals)
    return r, tau, volts, p


def test_pwm_deadband_removes_d0_from_the_duty():
    r, _, volts, p = _one_step("pwm_deadband", 0.1)
    duty = volts / p[..., slots.VIN]
    assert np.abs(duty).max() == pytest.approx(1.0) and np.abs(duty[0, 1]) < 0.1  # saturated and inside the band
    want = p[..., slots.VIN] * np.sign(duty) * np.maximum(np.abs(duty) - 0.1, 0.0)
    np.testing.assert_allclose(r.volts, want, rtol=1e-12, atol=1e-12)


def test_torque_saturation_is_tanh_of_the_law():
    r, tau, _, _ = _one_step("torque_saturation", 0.3)
    assert np.abs(tau).max() > 0.6  # the law asks twice τ_s
    np.testing.assert_allclose(r.tau_m, 0.3 * np.tanh(tau / 0.3), rtol=1e-12, atol=1e-15)


def test_load_scale_scales_gravity_and_inertia():
    cand, extra = CANDIDATES["load_scale"](), np.array([[1.2], [1.0]])
    batch = type("B", (), {"mass": 0.49, "length": 0.1, "arm_mass": 0.02})
    load = cand.load(batch, extra)
    amp, inertia = load.gravity_torque_amplitude(), load.inertia()
    assert amp[0, 0] == pytest.approx(1.2 * amp[1, 0], rel=1e-14)
    assert inertia[0, 0] == pytest.approx(1.2 * inertia[1, 0], rel=1e-14)
    assert amp[1, 0] == pytest.approx((0.49 + 0.01) * 9.80665 * 0.1, rel=1e-14)


def _case_lines(seed: int, base: tuple[float, float], name: str, vals: tuple[float, float]) -> str:
    out = []
    for (a, b), v0, v in zip((("100", "400"), ("400", "100")), base, vals):
        out.append(f"  seed {seed}, train kp{a} → val kp{b}: M4 10.00 → {v0:.2f} mrad (harness {v0:.2f} mrad)")
        out.append(f"    baseline             train   10.00  val {v0:7.2f} mrad  ")
        out.append(f"    {name:20} train   10.00  val {v:7.2f} mrad  x 1")
    return "\n".join(out)


def test_summary_of_two_runs_judges_each_candidate_on_its_own_baselines(capsys):
    """Two runs whose M4 differ: each candidate against its own run's baseline; the spread over seeds and runs."""
    from candidate_laws import parse_cases, summarize

    run_a = _case_lines(0, (60.0, 40.0), "a", (50.0, 30.0)) + "\n" + _case_lines(1, (62.0, 44.0), "a", (52.0, 34.0))
    run_b = _case_lines(0, (56.0, 35.0), "b", (55.0, 36.0)) + "\n" + _case_lines(1, (57.0, 35.0), "b", (56.0, 34.0))
    summarize(parse_cases(run_a + "\n" + run_b))
    out = capsys.readouterr().out
    # spread: kp100→400 over 60, 62, 56, 57 → 6; kp400→100 over 40, 44, 35, 35 → 9; mean 7.5 mrad
    assert "RESULT baseline_cross_gain=0.04863 best_candidate=a best_cross_gain=0.04150 seed_spread=0.00750" in out
    assert out.rstrip().endswith("validated=a")  # a: 10 mrad better in all 4; b: 3 of 4
    assert "baseline             |     8 |" in out
