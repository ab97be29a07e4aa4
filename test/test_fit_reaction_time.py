"""The ends of the α fit's reaction-time search (identification/delay_bounds.py): t_d is searched from 0 to the lag
estimate + search_delay; a residual still falling past the lower end (the motion leads its goals: goals timed late) is
refused, past the upper end followed and said. Before: t_d pinned at the end, unsaid — unstamped goals received 30 ms
late gave t_d 0, rms 3.7× the clean bag's, α̂1 −28 %, exit 0."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import yaml
from test_ident_alpha import DT, KP, UBAT, _eq13_data

from servo_ff.identification.alpha_fit import fit_alpha

ALPHA = np.array([6.5, 14.0, 0.8, 1.6])


def test_goals_timed_late_are_refused_naming_the_lead():
    """Goals recorded 3 samples after the ones the motion answers: the residual is lowest 15 ms before 0."""
    cmd, q, dq, ddq, tau = _eq13_data(ALPHA, 0.3, 1.0, d=0)
    late = np.concatenate([np.repeat(cmd[:1], 3), cmd[:-3]])
    with pytest.raises(ValueError, match=r"the motion leads its goals by 15 ms .*the goals are timed late"):
        fit_alpha(late, q, dq, ddq, tau, KP, UBAT, DT)


def test_a_reaction_past_the_searched_range_is_followed_and_said(caplog):
    """t_d 150 ms, searched 0-40 ms (lag estimate 30 ms + 2 samples): found, the note says so (before: 40 ms)."""
    cmd, q, dq, ddq, tau = _eq13_data(ALPHA, 0.3, 1.0, d=30)
    with caplog.at_level(logging.WARNING):
        fit = fit_alpha(cmd, q, dq, ddq, tau, KP, UBAT, DT, search_delay=2)
    assert fit.delay_steps == 30
    np.testing.assert_allclose(fit.alpha, ALPHA, rtol=1e-3)
    assert "t_d 150 ms is past the searched 0-40 ms" in fit.delay_note
    assert fit.as_dict()["delay_note"] == fit.delay_note
    assert [r.getMessage() for r in caplog.records] == [fit.delay_note]


def test_a_reaction_within_the_range_says_nothing(caplog):
    cmd, q, dq, ddq, tau = _eq13_data(ALPHA, 0.3, 1.0, d=0)
    with caplog.at_level(logging.WARNING):
        fit = fit_alpha(cmd, q, dq, ddq, tau, KP, UBAT, DT)
    assert fit.delay_steps == 0 and fit.delay_note == "" and "delay_note" not in fit.as_dict()
    assert not caplog.records


def _late_goals_bag(path, late_ns: int):
    """pendulum_1 at kp 8, /joint_states stamped at the bus read, unstamped goals received ``late_ns`` after they
    reached the servo (a recorder on a laptop over Wi-Fi)."""
    from test_replay_robot_bags import J1, REF, START, VIN, Bag, servo

    from servo_ff.io.rosbag_write import _battery

    q, dq = servo(REF, 8.0)
    bag = Bag(path)
    T, lay = bag.T, bag.T["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0)
    msgs = []
    for k in range(len(REF)):
        s, head = START + k * 5_000_000, bag.header(START + k * 5_000_000)
        js = T["sensor_msgs/msg/JointState"](
            header=head, name=[J1], position=np.array([q[k]]), velocity=np.array([dq[k]]), effort=np.zeros(1)
        )
        msgs.append((s + 300_000, "/joint_states", "sensor_msgs/msg/JointState", js))
        goal = T["std_msgs/msg/Float64MultiArray"](layout=lay, data=np.array([REF[k]]))
        msgs.append((s + late_ns, "/servo/commands", "std_msgs/msg/Float64MultiArray", goal))
        if k % 100 == 0:
            msgs.append((s + 300_000, "/servo_supply", "sensor_msgs/msg/BatteryState", _battery(T, head, VIN)))
            gain = T["std_msgs/msg/Float64MultiArray"](layout=lay, data=np.array([8.0]))
            msgs.append((s + 300_000, "/servo/p_gains", "std_msgs/msg/Float64MultiArray", gain))
    for received, topic, msgtype, msg in sorted(msgs, key=lambda m: m[0]):
        bag.put(topic, msgtype, received, msg, received=received)
    return bag.close()


def test_a_bag_of_goals_received_30_ms_late_is_refused(tmp_path, capsys):
    """The audit's bag: exit 2, one line saying the motion leads its goals and to record stamped goals, nothing
    written (before: t_d 0, α̂1 6.96 for 9.68, rms 3.7x, exit 0)."""
    pytest.importorskip("rosbags")
    from test_replay_robot_bags import fit

    assert fit(_late_goals_bag(tmp_path / "bag", 30_000_000), tmp_path / "out") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "the motion leads its goals by" in err and "record stamped goals" in err and "not fitted" in err, err
    assert not (tmp_path / "out").exists()


def test_the_fit_summary_records_a_searched_on_reaction(tmp_path):
    """alpha.yaml's fit section keeps the note (what servo-ff fit and the fit node write)."""
    from servo_ff.identification.alpha_data import data_from_samples
    from servo_ff.workflows.alpha import gated_fit, save_alpha_result

    cmd, q, dq, ddq, tau = _eq13_data(ALPHA, 0.3, 1.0, d=30)
    data = data_from_samples(cmd, q, UBAT, KP, DT, "synthetic")
    res = gated_fit("j", data, tau, None, "given", search_delay=2)
    info = yaml.safe_load(save_alpha_result(res, tmp_path / "alpha.yaml").read_text())["fit"]
    assert info["delay_note"].startswith("t_d 15")  # on the smoothed q, near the 150 ms of the data
