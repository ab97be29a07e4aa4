"""A rosbag2's /joint_states as robots and simulations record them (io/rosbag_streams.py, io/rosbag_clock.py), on
bags written here with `rosbags`: two publishers of the fitted joint are refused, not mixed."""

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
