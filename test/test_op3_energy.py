"""The OP3 bench's energy comparison (``bringup/op3_energy``): controllers compared over the whole steps all of them
walked — the whole run when none fell, else the steps before the first fall — and nan only below two steps."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from servo_ff.bringup.op3_energy import (
    GROUPS,
    MIN_STEPS,
    common_steps,
    compare,
    energy40_keys,
    energy_over,
    group_sums,
    step_end,
    whole_steps,
    window_lines,
)

JOINTS = ["l_knee", "r_knee", "l_hip_pitch"]


@dataclass
class Run:
    joints: list[str]
    step_energy: np.ndarray


def run(per_step: tuple[float, float, float], steps: int) -> Run:
    """A run spending ``per_step`` [J] (l_knee, r_knee, l_hip_pitch) in each of ``steps`` whole steps."""
    return Run(JOINTS, np.arange(steps + 1)[:, None] * np.array(per_step, dtype=float))


def test_no_fall_compares_the_whole_run():
    a, c = run((2.0, 2.0, 6.0), 40), run((1.5, 1.5, 2.0), 40)
    cmp = compare(a, c)
    assert cmp.steps == 40
    assert cmp.knee_reduction == pytest.approx(1 - 3.0 / 4.0)
    assert cmp.reduction == pytest.approx(1 - 5.0 / 10.0)
    assert energy_over(a, 40) == pytest.approx(400.0) and energy_over(a, 40, ("l_knee",)) == pytest.approx(80.0)


def test_a_fall_limits_the_window_to_the_steps_before_it():
    # (a) falls in its 8th step: 7 whole steps. Its energy per step doubles from step 5 on (rocking), so a
    # comparison over each run's own length (7 against 40 steps) or over the wrong window gives another figure.
    e = np.zeros((8, 3))
    for k in range(1, 8):
        e[k] = e[k - 1] + (2.0 if k <= 4 else 4.0) * np.array([1.0, 1.0, 3.0])
    a, c = Run(JOINTS, e), run((1.5, 1.5, 2.0), 40)
    assert whole_steps(a) == 7 and common_steps([a, c]) == 7
    cmp = compare(a, c)
    knees_a = 2 * (4 * 2.0 + 3 * 4.0)  # 40 J over the 7 steps
    assert cmp.steps == 7
    assert cmp.knee_reduction == pytest.approx(1 - 7 * 3.0 / knees_a)
    assert cmp.reduction == pytest.approx(1 - 7 * 5.0 / (knees_a * 2.5))
    assert compare(c, a).steps == 7  # symmetric window


def test_fewer_than_two_steps_compare_nothing():
    c = run((1.5, 1.5, 2.0), 40)
    for steps in range(MIN_STEPS):
        cmp = compare(run((2.0, 2.0, 6.0), steps), c)
        assert cmp.steps == steps and math.isnan(cmp.knee_reduction) and math.isnan(cmp.reduction)
    assert not math.isnan(compare(run((2.0, 2.0, 6.0), MIN_STEPS), c).knee_reduction)
    with pytest.raises(ValueError, match="completed 1 steps, not 2"):
        energy_over(run((1.0, 1.0, 1.0), 1), 2)


def test_the_window_lists_each_run_or_the_steps_it_walked():
    # (b) fell in the approach (0 steps) while (a) and (c) walked 6: its line says so instead of failing the bench
    runs = {"(a)": run((2.0, 2.0, 6.0), 6), "(b)": run((1.0, 1.0, 1.0), 0), "(c)": run((1.5, 1.5, 2.0), 40)}
    assert window_lines(runs, 6) == [
        "(a): 60.0 J, knees 24.0 J",
        "(b): fell after 0 whole steps",
        "(c): 30.0 J, knees 18.0 J",
    ]


def test_group_sums_add_each_groups_own_joints():
    # the OP3's 20 joints, each spending a distinct power of two: any joint counted in the wrong group, twice or not
    # at all changes a sum
    legs = [f"{s}_{j}" for s in "lr" for j in ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ank_pitch", "ank_roll")]
    upper = ["head_pan", "head_tilt", *(f"{s}_{j}" for s in "lr" for j in ("sho_pitch", "sho_roll", "el"))]
    joints = upper + legs
    e = 2.0 ** np.arange(len(joints))
    sums = group_sums(joints, e)
    assert list(sums) == ["knees", "hips", "ankles", "all"] and GROUPS["all"] is None
    of = {j: float(x) for j, x in zip(joints, e)}
    assert sums["knees"] == of["l_knee"] + of["r_knee"]
    assert sums["hips"] == sum(of[j] for j in legs if "_hip_" in j) and len(GROUPS["hips"]) == 6
    assert sums["ankles"] == sum(of[j] for j in legs if "_ank_" in j) and len(GROUPS["ankles"]) == 4
    assert sums["all"] == float(e.sum())
    with pytest.raises(ValueError, match="l_knee"):
        group_sums(upper, 2.0 ** np.arange(len(upper)))  # a run without the groups' joints: not a silent 0


@pytest.mark.parametrize("single_support", [0.40, 0.30])
def test_step_end_is_where_the_walk_plan_starts_the_next_swing(single_support):
    """Row k of ``step_energy`` (and the ROS-free tools' window) ends where the placo plan starts swing k + 1: the
    first double support + k step periods, for the default gait and a shorter one."""
    pytest.importorskip("placo")
    from servo_ff.dynamics.walk_pattern import WalkEngine, WalkParams
    from servo_ff.dynamics.walk_sim import OP3_URDF

    params = WalkParams(single_support=single_support)
    plan = WalkEngine(OP3_URDF, params).plan((0.05, 0.0, 0.0), 6)
    starts = [t for t, _ in plan.steps]
    assert len(starts) == 6
    assert [step_end(k, params) for k in range(6)] == pytest.approx(starts, abs=1e-9)
    if single_support == 0.40:  # the default: the walk node's, as the DDS mission runs it
        assert step_end(40) == pytest.approx(20.0, abs=1e-12)


def _bench_mission():
    """bench/op3_mission.py as a module (section 6's table helpers; importing it loads rclpy)."""
    pytest.importorskip("rclpy")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "op3_mission.py"
    spec = importlib.util.spec_from_file_location("bench_op3_mission", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class Tracked:
    joints: list[str]
    step_energy: np.ndarray
    tracking: list
    pitch: list
    travel: float


def _tracked(knee_err: float, t_end: float, energy: np.ndarray) -> Tracked:
    """Mirrored legs (TRACKED: l hip, knee, ankle pitch, then r): hip pitch 0.02 rad more bent on the left, less on
    the right, knees ``knee_err`` along their bend, ankle pitch 0.03 rad less bent; after ``t_end`` every joint 1 rad
    off (outside the window)."""
    desired = np.array([0.5, 1.0, -0.5, -0.5, -1.0, 0.5])
    bend = np.sign(desired)
    rows = []
    for t in np.arange(0.0, t_end + 1.0, 0.01):
        err = np.array([0.02, knee_err, -0.03, -0.02, knee_err, -0.03]) * bend if t <= t_end else np.ones(6)
        rows.append((float(t), desired, desired + err))
    pitch = [(float(t), 0.1 if t <= t_end else 5.0) for t in np.arange(0.0, t_end + 1.0, 0.01)]
    legs = [f"{s}_{j}" for s in "lr" for j in ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ank_pitch", "ank_roll")]
    return Tracked(legs, energy, rows, pitch, 0.5)


def test_section_6_tracking_error_rms_and_mean_along_each_joints_bend():
    bench = _bench_mission()
    t_end = 1.76  # the end of step 2
    got = bench.tracking_error(_tracked(0.05, t_end, np.zeros((3, 12))), t_end)
    assert [round(r, 9) for r, _ in got] == [0.02, 0.05, 0.03]  # hip, knee, ankle pitch: RMS over both legs
    assert [round(m, 9) for _, m in got] == [0.0, 0.05, -0.03]  # + bent more than desired, on either leg


GROUPS_OVER_2 = {"knees": 4.0, "hips": 12.0, "ankles": 8.0, "all": 24.0}  #: [J] each group over 2 steps at 1 J/step


def test_section_6_table_over_the_common_window_of_whole_steps():
    bench = _bench_mission()
    e = np.outer([0.0, 1.0, 2.0, 9.0], np.ones(12))  # (steps + 1, joints) cumulative [J], 1 J a step; 3rd: outside
    base, other = _tracked(0.05, 1.76, e), _tracked(0.0, 1.76, e / 2)
    lines = bench.energy40_lines(base, other, 2)
    assert lines[2:6] == [f"| E {g} [J] | {n:.1f} | {n / 2:.1f} | -50.0% |" for g, n in GROUPS_OVER_2.items()]
    assert "| knee − desired, RMS (mean, + bent more) [rad] | 0.050 (+0.050) | 0.000 (+0.000) | |" in lines
    assert "| trunk pitch, mean [rad] | 0.100 | 0.100 | +0.000 |" in lines  # the 5 rad after step 2 left out
    assert bench.energy40_lines(base, other, 0) == ["no common window (0 steps)"]


def test_energy40_keys_one_format_for_section_6_and_its_ros_free_twin():
    keys = energy40_keys(0.05, 40, -0.0484, 0.2936)
    assert keys == "energy40_vx=0.05 energy40_steps=40 knee_energy40_reduction=-0.048 energy40_reduction=0.294"
    nan = float("nan")
    none = "energy40_vx=nan energy40_steps=0 knee_energy40_reduction=nan energy40_reduction=nan"
    assert energy40_keys(nan, 0, nan, nan) == none


def test_op3_energy40_where_a_falls_at_every_speed_prints_every_key():
    """tools/op3_energy40.py with every servo on the XL330 row, where (a) falls within 8 steps at each candidate
    speed: the speeds tried fastest first, no (c) run, and the four keys section 6 prints (only energy40_vx before)."""
    pytest.importorskip("placo")
    import subprocess
    import sys
    from pathlib import Path

    from servo_ff.bringup.op3_energy import ENERGY40_SPEEDS

    tool = Path(__file__).resolve().parents[1] / "tools" / "op3_energy40.py"
    cmd = [sys.executable, str(tool), "--steps", "8", "--firmware", "xl330"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    tried = [line for line in lines if line.startswith("(a) at ")]
    assert [line.split(":")[0] for line in tried] == [f"(a) at {v} m/s" for v in ENERGY40_SPEEDS]
    assert all("fell at" in line for line in tried) and not any(line.startswith("(c)") for line in lines)
    assert lines[-1] == "RESULT " + energy40_keys(float("nan"), 0, float("nan"), float("nan"))
