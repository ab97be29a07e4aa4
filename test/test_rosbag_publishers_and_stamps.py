"""A rosbag2's /joint_states as robots and simulations record them (io/rosbag_streams.py, io/rosbag_clock.py), on
bags written here with `rosbags`: two publishers of the fitted joint are refused, not mixed; a header stamp 0
is no stamp but a simulation's first (sim time 0) and never makes the whole stream's clock the receive time; a
JointTrajectory stamped ahead of its receipt is scheduled, as a JointTrajectoryController follows it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rosbags")
from test_replay_robot_bags import START, Bag  # noqa: E402

from servo_ff.cli import main  # noqa: E402
from servo_ff.io.rosbag import read_rosbag  # noqa: E402
from servo_ff.io.servo_log import LogError  # noqa: E402

N = 400  # 2 s at 5 ms
T = np.arange(N) * 0.005
G1 = 0.3 + 0.5 * np.sin(3.0 * T)  # pendulum_1's goal
BENCH = {"kp": 8.0, "vin": 15.0}


def _stamp(k: int) -> int:
    return START + k * 5_000_000


# ------------------------------------------------------------------------ two publishers of the joint on /joint_states
def _servo_and_mock(path, mock: bool) -> Bag:
    """The servo node's /joint_states (pendulum_1, 200 Hz, lagging its goal by 20 ms) and, with ``mock``, a mock
    joint_state_broadcaster's at 100 Hz naming [pendulum_2, pendulum_1] with position = goal, velocity 0."""
    bag = Bag(path)
    lag = np.interp(T - 0.02, T, G1)
    for k in range(N):
        bag.joint_state("/joint_states", _stamp(k), ["pendulum_1"], [lag[k]], [0.0])
        if mock and k % 2:
            bag.joint_state("/joint_states", _stamp(k) + 2_500_000, ["pendulum_2", "pendulum_1"], [0.0, G1[k]], [0, 0])
        bag.array("/servo/commands", _stamp(k), [G1[k]])
    return bag


def test_two_publishers_of_the_joint_are_refused_naming_their_joints_and_the_topic_option(tmp_path, capsys):
    """--joint pendulum_1, the servo node's and a mock broadcaster's messages both name it: refused in one line
    naming the topic, both name sets and --joint-states-topic (they were mixed: the audit's bag fitted α̂0 5.77
    against 13.31, exit 0, no line); the servo node's alone are read."""
    path = _servo_and_mock(tmp_path / "b", mock=True).close()
    with pytest.raises(LogError) as e:
        read_rosbag(path, meta=BENCH, joint="pendulum_1", goal_joints=["pendulum_1"])
    msg = str(e.value)
    for words in ("topic /joint_states", "['pendulum_1'] in 400", "['pendulum_2', 'pendulum_1'] in 200",
                  "--joint-states-topic", "joint_states_topic"):  # fmt: skip
        assert words in msg, msg
    assert "\n" not in msg
    argv = ["fit", str(path), "--joint", "pendulum_1", "--joints", "pendulum_1", "--kp", "8", "--vin", "15"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "2 publishers" in err, err
    alone = read_rosbag(_servo_and_mock(tmp_path / "a", mock=False).close(), meta=BENCH, joint="pendulum_1")
    assert len(alone) > N - 10


# ------------------------------------------------------------------------------------------------ header stamp 0
def _stamped_bag(path, stamp_of, recv_of) -> Bag:
    """/joint_states (pendulum_1, position = goal) and JointState goals, message k stamped ``stamp_of(k)`` and
    received ``recv_of(k)``."""
    bag = Bag(path)
    for k in range(N):
        state = bag.T["sensor_msgs/msg/JointState"]
        for topic in ("/joint_states", "/servo/joint_command"):
            msg = state(header=bag.header(stamp_of(k)), name=["pendulum_1"], position=np.array([G1[k]]),
                        velocity=np.array([0.0]), effort=np.zeros(1))  # fmt: skip
            bag.put(topic, "sensor_msgs/msg/JointState", 0, msg, recv_of(k))
    return bag


def test_a_simulation_stamped_from_sim_time_0_keeps_its_clock(tmp_path, caplog):
    """Sim time stamps 0, 5 ms, …, received on the wall clock at real-time factor 0.5: the first stamp, exactly 0,
    is sim time 0 (the next continues it), said in one line; the log spans the 2 s of sim time (the one 0 made the
    receive times the clock: 4 s, twice the sim's; the audit's fit α̂1 16.58 against 9.68)."""
    log = read_rosbag(
        _stamped_bag(tmp_path / "b", lambda k: k * 5_000_000, lambda k: START + k * 10_000_000 + 300_000).close(),
        meta=BENCH,
    )
    assert abs(log.t[-1] - T[-1]) < 0.006 and len(log) == N, (log.t[-1], len(log))
    assert log.segments is None and np.max(np.abs(log.position - log.goal_position)) < 1e-3
    said = [r.getMessage() for r in caplog.records if "sim time 0" in r.getMessage()]
    assert len(said) == 1 and "/joint_states" in said[0], said


def test_one_unstamped_state_among_stamped_ones_is_left_out_not_the_clock(tmp_path, caplog):
    """A driver's first /joint_states unstamped (0), the others stamped every 5 ms, received 4 at a time every
    20 ms: that message is left out, said in one line, the stamps stay the clock (the receive times were: 499
    recorder gaps, "no powered stretch", exit 2)."""
    path = _stamped_bag(
        tmp_path / "b",
        lambda k: 0 if k == 0 else _stamp(k),
        lambda k: START + (k // 4 + 1) * 20_000_000 + (k % 4) * 50_000,
    ).close()
    log = read_rosbag(path, meta=BENCH)
    assert log.segments is None and len(log) == N - 1, (log.segments, len(log))
    assert np.max(np.abs(log.position - log.goal_position)) < 1e-3
    said = [r.getMessage() for r in caplog.records if "header stamp 0" in r.getMessage()]
    assert len(said) == 1 and "1 of 400" in said[0] and "left out" in said[0], said


# ------------------------------------------------------------------------------------ JointTrajectory stamped ahead
def _trajectory_bag(path, lead_ns: int, stream: bool) -> Bag:
    """/joint_states of pendulum_1 and its JointTrajectory goals G1, stamped ``lead_ns`` after their receipt: one
    message of every point (``stream`` False, received at 0.3 ms) or one single-point message per 5 ms."""
    bag = Bag(path)
    for k in range(N):
        bag.joint_state("/joint_states", _stamp(k), ["pendulum_1"], [G1[k]], [0.0])
        if stream or k == 0:
            times, q = (np.zeros(1), G1[k : k + 1, None]) if stream else (T, G1[:, None])
            recv = _stamp(k) + 300_000
            bag.trajectory("/arm/joint_trajectory", recv + lead_ns, ["pendulum_1"], times, q, received=recv)
    return bag


def test_a_trajectory_stamped_ahead_starts_at_its_stamp(tmp_path, caplog):
    """One JointTrajectory stamped 0.2 s after its receipt, its first point (time 0) where the joint is then: a
    JointTrajectoryController holds until the stamp, then follows it: the goal is G1 0.2 s late, said in one line
    (the stamp was taken for another clock: timed by its receipt, G1 0.2 s early; the audit's fit refused it,
    rms residual 0.13 rad)."""
    log = read_rosbag(_trajectory_bag(tmp_path / "b", 200_000_000, stream=False).close(), meta=BENCH)
    tau = log.t + 0.0003  # [s] since the first state: the log starts at the trajectory's receipt
    want = np.interp(tau - 0.2003, T, G1)
    assert np.max(np.abs(log.goal_position - want)) < 2e-3, np.max(np.abs(log.goal_position - want))
    said = [r.getMessage() for r in caplog.records if "/arm/joint_trajectory" in r.getMessage()]
    assert len(said) == 1 and "stamped ahead of their receipt (up to +0.200 s)" in said[0], said


def test_trajectories_streamed_ahead_are_scheduled_and_another_clock_is_still_said(tmp_path, caplog):
    """Single-point messages each stamped 10 ms after their receipt: scheduled (replaced on receipt, each point
    reached at its stamp: the goal is G1 10 ms late; it was called a clock mismatch and timed by receipt: on time);
    stamped 1000 s ahead (beyond the 2 s recorded): another clock, said, timed by their receipt."""
    log = read_rosbag(_trajectory_bag(tmp_path / "a", 10_000_000, stream=True).close(), meta=BENCH)
    tau = log.t + 0.0003
    late = [float(np.sqrt(np.mean((log.goal_position - np.interp(tau - s, T, G1))[10:-10] ** 2))) for s in (0, 0.01)]
    assert late[1] < 1e-3 < late[0], late
    said = [r.getMessage() for r in caplog.records if "/arm/joint_trajectory" in r.getMessage()]
    assert len(said) == 1 and f"{N} of {N} message(s)" in said[0] and "stamped ahead" in said[0], said
    caplog.clear()
    log = read_rosbag(_trajectory_bag(tmp_path / "b", 1000 * 10**9, stream=True).close(), meta=BENCH)
    assert np.sqrt(np.mean((log.goal_position - np.interp(log.t + 0.0003, T, G1))[10:-10] ** 2)) < 1e-3
    said = [r.getMessage() for r in caplog.records if "/arm/joint_trajectory" in r.getMessage()]
    assert len(said) == 1 and "disagree" in said[0] and "+1000.000 s, ahead by more than the 1.995 s" in said[0], said
