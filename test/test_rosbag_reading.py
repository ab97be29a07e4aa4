"""What a rosbag2 read takes for the fitted joint (io/rosbag*.py), on small bags written here with `rosbags`: the
joint comes from /joint_states and every goal, gain and trajectory column is looked up by its name — another
joint's is never used."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

pytest.importorskip("rosbags")
from test_replay_robot_bags import START, Bag  # noqa: E402

from servo_ff.io.rosbag import read_rosbag  # noqa: E402
from servo_ff.io.servo_log import LogError  # noqa: E402

N = 400  # 2 s at 5 ms
T = np.arange(N) * 0.005
G1 = 0.3 + 0.5 * np.sin(3.0 * T)  # pendulum_1's goal
G2 = -0.2 + 0.4 * np.cos(2.0 * T)  # pendulum_2's goal: clearly another signal
BENCH = {"kp": 8.0, "vin": 15.0}


def _stamp(k: int) -> int:
    return START + k * 5_000_000


def _states(bag: Bag, k: int, names: list[str]) -> None:
    pos = {"pendulum_1": G1[k], "pendulum_2": G2[k]}  # position = goal: enough for what is read
    bag.joint_state("/joint_states", _stamp(k), names, [pos[n] for n in names], [0.0] * len(names))


def _read(path, **kw):
    return read_rosbag(path, meta=BENCH, **kw)


def _goal_is(log, goal: np.ndarray) -> None:
    """The log's goal is ``goal`` (held between messages: within 0.03 rad; the other joint's is 0.4 rad away)."""
    assert len(log) > N // 2
    err = np.abs(log.goal_position - np.interp(log.t, T, goal))
    assert err.max() < 0.03, (log.goal_position[:3], goal[:3])


# ------------------------------------------------------------------------------------------ fix 1: joint identity
def test_joint_state_goals_naming_two_joints_are_read_by_the_joint_joint_states_names(tmp_path):
    """/joint_states names pendulum_2 only, the JointState goals [pendulum_1, pendulum_2], no joint given: the
    goal is pendulum_2's (it was pendulum_1's: index 0)."""
    bag = Bag(tmp_path / "b")
    for k in range(N):
        _states(bag, k, ["pendulum_2"])
        bag.joint_state("/servo/joint_command", _stamp(k), ["pendulum_1", "pendulum_2"], [G1[k], G2[k]], [])
    log = _read(bag.close())
    assert log.joint == "pendulum_2"
    _goal_is(log, G2)


def test_per_joint_goal_messages_on_one_topic_skip_the_other_joints(tmp_path, caplog):
    """pendulum_1's commander at 200 Hz and pendulum_2's at 50 Hz on one JointState topic, joint pendulum_2: its
    own goals only (every pendulum_1 message was read as pendulum_2's: index 0), the skipped ones said in one
    line; a topic that never names the joint is refused naming topic and joint (it fitted pendulum_1's goals)."""
    bag = Bag(tmp_path / "b")
    only_p1 = Bag(tmp_path / "p1")
    for k in range(N):
        for b in (bag, only_p1):
            _states(b, k, ["pendulum_1", "pendulum_2"])
            b.joint_state("/servo/joint_command", _stamp(k), ["pendulum_1"], [G1[k]], [])
        if k % 4 == 0:
            bag.joint_state("/servo/joint_command", _stamp(k) + 50_000, ["pendulum_2"], [G2[k]], [])
    log = _read(bag.close(), joint="pendulum_2")
    _goal_is(log, G2)
    said = [r.getMessage() for r in caplog.records if "name other joints" in r.getMessage()]
    assert len(said) == 1 and f"{N} message(s) of /servo/joint_command" in said[0] and "pendulum_1" in said[0]
    with pytest.raises(LogError) as e:
        _read(only_p1.close(), joint="pendulum_2")
    msg = str(e.value)
    assert "/servo/joint_command" in msg and "no message names joint 'pendulum_2'" in msg and "\n" not in msg


def test_unnamed_columns_and_gains_are_the_joint_joint_states_names(tmp_path):
    """/joint_states names pendulum_2 only, Float64MultiArray goals and P gains [4, 8] in the order
    [pendulum_1, pendulum_2], no joint given: column 1 for both (column 0 gave pendulum_1's goal and kp 4)."""
    bag = Bag(tmp_path / "b")
    for k in range(N):
        _states(bag, k, ["pendulum_2"])
        bag.array("/forward_position_controller/commands", _stamp(k), [G1[k], G2[k]])
        if k % 100 == 0:
            bag.array("/servo/p_gains", _stamp(k), [4.0, 8.0])
    log = read_rosbag(bag.close(), meta={"vin": 15.0}, goal_joints=["pendulum_1", "pendulum_2"])
    _goal_is(log, G2)
    assert log.kp == 8.0 and log.kp_source == "recorded /servo/p_gains"
    with pytest.raises(LogError, match="joint 'pendulum_2' is not configured"):
        read_rosbag(bag.path, meta=BENCH, goal_joints=["pendulum_1", "pendulum_3"])


def test_trajectories_naming_two_joints_are_followed_for_the_joint_joint_states_names(tmp_path):
    """JointTrajectory [pendulum_1, pendulum_2], /joint_states pendulum_2 only, no joint: pendulum_2's points."""
    bag = Bag(tmp_path / "b")
    for k in range(N):
        _states(bag, k, ["pendulum_2"])
        bag.trajectory(
            "/arm_controller/joint_trajectory", 0, ["pendulum_1", "pendulum_2"], np.zeros(1),
            np.array([[G1[k], G2[k]]]), received=_stamp(k) + 300_000,
        )  # fmt: skip
    log = _read(bag.close())
    _goal_is(log, G2)


def test_fit_node_on_a_bag_refuses_goals_of_another_joint(tmp_path):
    """servo_fit_node (the replay bring-up, joint pendulum_2) on a bag whose goals name pendulum_1 only: exit 2, one
    line naming topic and joint, no alpha.yaml (it fitted pendulum_1's goals against pendulum_2's motion)."""
    pytest.importorskip("rclpy")
    from test_replay_robot_bags import REF, servo

    from servo_ff.bringup import config_dir, plan, python_command, python_env

    q, dq = servo(REF, 8.0)
    bag = Bag(tmp_path / "b")
    for k in range(len(REF)):
        t = _stamp(k)
        bag.joint_state("/joint_states", t, ["pendulum_1", "pendulum_2"], [0.3, q[k]], [0.0, dq[k]])
        bag.joint_state("/servo/joint_command", t, ["pendulum_1"], [REF[k]], [])
        if k % 100 == 0:
            bag.supply("/servo_supply", t, 15.0)
            bag.array("/servo/p_gains", t, [8.0])
    bag.close()
    params = tmp_path / "p2.yaml"
    params.write_text("servo_fit:\n  ros__parameters:\n    joint: pendulum_2\n")
    (node,) = plan("replay", bag=str(bag.path), params_file=str(params))
    run = subprocess.run(
        python_command(node, config_dir()), cwd=tmp_path, env=python_env(), capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 2, run.stdout + run.stderr
    lines = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "/servo/joint_command" in lines[0] and "'pendulum_2'" in lines[0], run.stderr
    assert not (tmp_path / "alpha.yaml").exists()


# ------------------------------------------------------------------------------------------ fix 2: torque enable
def _bool(bag: Bag, topic: str, at_s: float, value: bool) -> None:
    bag.put(topic, "std_msgs/msg/Bool", START + int(at_s * 1e9), bag.T["std_msgs/msg/Bool"](data=value))


def _one_joint_bag(path, extra=None) -> Bag:
    bag = Bag(path)
    for k in range(N):
        _states(bag, k, ["pendulum_1"])
        bag.array("/servo/commands", _stamp(k), [G1[k]])
    if extra is not None:
        extra(bag)
    return bag


def test_a_bool_not_named_torque_or_enable_is_not_torque_enable(tmp_path, caplog):
    """/foot_contact False from 1.0 to 1.5 s: not taken (it turned 100 of 400 samples unpowered: α̂1 −22 %), said
    in one line naming it and enable_topic; named with enable_topic it is taken, and which topic turned the torque
    off is said."""
    bag = _one_joint_bag(
        tmp_path / "b", lambda b: [_bool(b, "/foot_contact", t, v) for t, v in ((0.0, True), (1.0, False), (1.5, True))]
    ).close()
    log = _read(bag)
    assert log.torque_enable.min() == 1.0
    said = [r.getMessage() for r in caplog.records if "/foot_contact" in r.getMessage()]
    assert len(said) == 1 and "not taken as torque enable" in said[0] and "--enable-topic" in said[0], said
    caplog.clear()
    log = _read(bag, enable_topic="/foot_contact")
    assert 90 <= int((log.torque_enable < 0.5).sum()) <= 110
    said = [r.getMessage() for r in caplog.records if "torque enable from /foot_contact" in r.getMessage()]
    assert len(said) == 1 and "off in 1 of 3 message(s)" in said[0], [r.getMessage() for r in caplog.records]


def test_the_torque_named_bool_is_taken_beside_others_and_two_are_refused_naming_the_option(tmp_path):
    """/servo/torque_enable beside /walker/finished: the torque one is taken (refused as "several candidate torque
    enable topics … (goal_topic)"); two torque-named ones are refused naming --enable-topic, not goal_topic."""

    def two(b: Bag) -> None:
        _bool(b, "/servo/torque_enable", 0.0, True)
        _bool(b, "/servo/torque_enable", 1.0, False)
        _bool(b, "/walker/finished", 1.9, True)

    log = _read(_one_joint_bag(tmp_path / "b", two).close())
    assert 180 <= int((log.torque_enable < 0.5).sum()) <= 200

    def clash(b: Bag) -> None:
        _bool(b, "/left/torque_enable", 0.0, True)
        _bool(b, "/right/torque_enable", 0.0, True)

    with pytest.raises(LogError) as e:
        _read(_one_joint_bag(tmp_path / "c", clash).close())
    msg = str(e.value)
    assert "/left/torque_enable, /right/torque_enable" in msg and "--enable-topic" in msg and "goal_topic" not in msg


# ------------------------------------------------------------------------------------------------ fix 3: P gain
def _gains_bag(path, gains: dict[str, list[tuple[float, list[float]]]], goals_from_s: float = 0.0) -> Bag:
    bag = Bag(path)
    for k in range(N):
        _states(bag, k, ["pendulum_1"])
        if T[k] >= goals_from_s:
            bag.array("/servo/commands", _stamp(k), [G1[k]])
    for topic, rows in gains.items():
        for at_s, values in rows:
            bag.array(topic, START + int(at_s * 1e9), values)
    return bag


def test_p_gain_is_taken_from_a_p_gain_topic_only_and_two_are_refused(tmp_path):
    """/servo/d_gains 2 beside /servo/p_gains 8: kp 8 (it was 2 from d_gains, the first '…gains' in sorted order:
    α̂ ÷ 4); two P gain topics are refused naming them and the option (the first was taken), unless kp is given."""
    log = read_rosbag(
        _gains_bag(tmp_path / "d", {"/servo/d_gains": [(0.0, [2.0])], "/servo/p_gains": [(0.0, [8.0])]}).close(),
        meta={"vin": 15.0},
    )
    assert log.kp == 8.0 and log.kp_source == "recorded /servo/p_gains"
    two = _gains_bag(tmp_path / "two", {"/left/p_gains": [(0.0, [4.0])], "/right/p_gains": [(0.0, [8.0])]}).close()
    with pytest.raises(LogError) as e:
        read_rosbag(two, meta={"vin": 15.0})
    msg = str(e.value)
    assert "/left/p_gains, /right/p_gains" in msg and "--p-gains-topic" in msg and "\n" not in msg, msg
    assert read_rosbag(two, meta=BENCH).kp == 8.0
    assert read_rosbag(two, meta={"vin": 15.0}, gains_topic="/left/p_gains").kp == 4.0


def test_a_gain_changing_within_the_data_is_refused_naming_the_time(tmp_path):
    """P gain 32 then 8 from 1.0 s, goals throughout: refused naming the time of the change (the median, 20, was
    used: a gain never applied); a change before the first goal, or within 1 %, is one gain."""
    steps = {"/servo/p_gains": [(0.0, [32.0]), (0.5, [32.0]), (1.0, [8.0]), (1.5, [8.0])]}
    with pytest.raises(LogError) as e:
        read_rosbag(_gains_bag(tmp_path / "c", steps).close(), meta={"vin": 15.0})
    msg = str(e.value)
    assert "/servo/p_gains" in msg and "from 32 to 8 at 1.000 s" in msg and "\n" not in msg, msg
    late = read_rosbag(_gains_bag(tmp_path / "late", steps, goals_from_s=1.2).close(), meta={"vin": 15.0})
    assert late.kp == 8.0
    jitter = {"/servo/p_gains": [(0.0, [8.0]), (1.0, [8.05])]}
    assert abs(read_rosbag(_gains_bag(tmp_path / "j", jitter).close(), meta={"vin": 15.0}).kp - 8.025) < 1e-9


# ------------------------------------------------------------------------------------------------ fix 4: one clock
def test_states_stamped_before_their_receipt_are_timed_with_header_less_goals_by_receive_time(tmp_path):
    """A driver stamping /joint_states 30 ms before the recorder receives them, Float64MultiArray goals (no header)
    received with them, position = goal: on one clock (receive times) they coincide (the stamps against the goals'
    receive times put the motion 30 ms early: α̂0 −9 %, α̂1 −23 %)."""
    bag = Bag(tmp_path / "b")
    for k in range(N):
        recv = _stamp(k) + 300_000
        bag.put("/joint_states", "sensor_msgs/msg/JointState", 0, _js_msg(bag, recv - 30_000_000, G1[k]), recv)
        bag.array("/servo/commands", _stamp(k), [G1[k]])
    log = _read(bag.close())
    assert np.max(np.abs(log.position - log.goal_position)) < 1e-3


def _js_msg(bag: Bag, stamp: int, q: float, name: str = "pendulum_1"):
    return bag.T["sensor_msgs/msg/JointState"](
        header=bag.header(stamp), name=[name], position=np.array([q]), velocity=np.array([0.0]), effort=np.zeros(1)
    )


def test_goals_stamped_ahead_of_the_states_put_every_stream_on_receive_time_and_say_so(tmp_path, caplog):
    """JointState goals stamped 50 ms ahead (the time they are meant for), states stamped at receipt: the stamps
    disagree by more than dt, so every stream is timed by its receive time, said in one line (the goal stamps were
    used against the state stamps: the goal 50 ms late, α̂ [13.00, 4.58, 1.15, 0])."""
    bag = Bag(tmp_path / "b")
    for k in range(N):
        _states(bag, k, ["pendulum_1"])
        goal = _js_msg(bag, _stamp(k) + 50_000_000, G1[k])
        bag.put("/servo/joint_command", "sensor_msgs/msg/JointState", 0, goal, _stamp(k) + 300_000)
    log = _read(bag.close())
    assert np.max(np.abs(log.position - log.goal_position)) < 1e-3
    said = [r.getMessage() for r in caplog.records if "stamps disagree" in r.getMessage()]
    assert len(said) == 1 and "/servo/joint_command +0.050 s" in said[0] and "receive time" in said[0], said


def test_sim_time_trajectories_are_followed_on_their_own_clock(tmp_path):
    """States and JointTrajectory goals stamped in sim time (from 100 s), received on the wall clock: the stamps
    agree, the trajectories are followed on the header clock (each was tested against its wall-clock receipt:
    "ended before they were received", then "has no messages", exit 2)."""
    sim0 = 100_000_000_000
    bag = Bag(tmp_path / "b")
    for k in range(N):
        recv = _stamp(k) + 300_000
        bag.put("/joint_states", "sensor_msgs/msg/JointState", 0, _js_msg(bag, sim0 + k * 5_000_000, G1[k]), recv)
        if k % 50 == 0:
            horizon = np.arange(0, min(60, N - k)) * 0.005
            q = G1[k : k + len(horizon)][:, None]
            bag.trajectory("/arm/joint_trajectory", sim0 + k * 5_000_000, ["pendulum_1"], horizon, q, received=recv)
    log = _read(bag.close())
    assert len(log) > N - 10
    assert np.max(np.abs(log.position - log.goal_position)) < 1e-3


# ----------------------------------------------------------------------------- fix 5: publishers on /joint_states
def _two_publishers(path) -> Bag:
    """pendulum_1's driver and pendulum_2's on /joint_states (one joint per message), goals of pendulum_1."""
    bag = Bag(path)
    for k in range(N):
        _states(bag, k, ["pendulum_1"])
        bag.put(
            "/joint_states", "sensor_msgs/msg/JointState", 0, _js_msg(bag, _stamp(k) + 1_000_000, G2[k], "pendulum_2")
        )
        bag.array("/servo/commands", _stamp(k), [G1[k]])
    return bag


def test_messages_of_another_publisher_are_skipped_and_counted(tmp_path, caplog):
    """joint pendulum_1: pendulum_2's messages are skipped, said in one line (the first was refused: "joint
    'pendulum_1' not in ['pendulum_2']", though the servo node's live fit skips them). The one-value goals name no
    joint while /joint_states names two: their joint is given (``goal_joints``)."""
    log = _read(_two_publishers(tmp_path / "b").close(), joint="pendulum_1", goal_joints=["pendulum_1"])
    assert np.max(np.abs(log.position - np.interp(log.t, T, G1))) < 1e-3
    said = [r.getMessage() for r in caplog.records if "do not name joint" in r.getMessage()]
    assert len(said) == 1 and f"{N} of {2 * N} message(s) of /joint_states" in said[0] and "pendulum_2" in said[0]


def test_no_joint_and_two_publishers_is_refused_naming_both(tmp_path):
    """No joint given, one joint per message but not the same one: refused naming both joints and --joint (both
    joints' positions were read as one, exit 0)."""
    with pytest.raises(LogError) as e:
        _read(_two_publishers(tmp_path / "b").close())
    msg = str(e.value)
    assert "'pendulum_1'" in msg and "'pendulum_2'" in msg and "--joint" in msg and "\n" not in msg, msg


# ----------------------------------------------------------------------------------------- fix 6: the messages
@pytest.mark.parametrize(
    "options, words",
    [
        # before: "no command-like goal topic …" (the goals were excluded as joint states)
        ({"joint_states_topic": "/servo/commands"}, ["/servo/commands has type std_msgs/msg/Float64MultiArray"]),
        # before: "cannot read the rosbag2, truncated or corrupt (AttributeError: … no attribute 'name')"
        ({"joint_states_topic": "/servo_supply"}, ["/servo_supply has type sensor_msgs/msg/BatteryState"]),
        # before: "goal topic /joint_states has no messages"
        ({"goal_topic": "/joint_states"}, ["goal topic /joint_states is the joint_states topic", "--goal-topic"]),
        # before: "kp unknown (no p_gains topic in the bag …)"
        ({"gains_topic": "/servo/commands"}, ["P gain topic /servo/commands is the goal topic", "--p-gains-topic"]),
        # before: "several candidate supply voltage topics (…); name one (goal_topic)"; none is the servo node's
        # servo_supply (beside it, it would be taken: test_replay_supply.py)
        ({}, ["several candidate supply voltage topics (/battery_state, /laptop/battery)", "--supply-topic"]),
    ],
)
def test_a_wrong_topic_is_one_line_naming_it_and_its_option(tmp_path, options, words):
    bag = _one_joint_bag(tmp_path / "b")
    bag.supply("/battery_state" if not options else "/servo_supply", START, 15.0)
    if not options:
        bag.supply("/laptop/battery", START, 16.8)
    with pytest.raises(LogError) as e:
        read_rosbag(bag.close(), meta={"kp": 8.0}, **options)
    msg = str(e.value)
    assert "\n" not in msg and str(tmp_path / "b") in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    if "joint_states_topic" in options:
        assert "--joint-states-topic" in msg, msg


def test_a_folder_of_bags_and_a_bag_folder_without_metadata(tmp_path, caplog):
    """One log asked for: a folder of two bags says so in one line naming them, a bag folder whose metadata.yaml is
    missing is read by its storage file, said (both were "unknown log format"; the .mcap alone was read)."""
    from servo_ff.io.logs import find_logs, read_log

    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("run1", "run2"):
        _one_joint_bag(folder / name).close()
    with pytest.raises(LogError) as e:
        read_log(folder, meta=BENCH)
    assert str(e.value) == f"{folder}: a directory of 2 logs (run1, run2), not one log: give one of them"
    (folder / "run2" / "metadata.yaml").unlink()
    log = read_log(folder / "run2", meta=BENCH)
    assert len(log) > N // 2 and log.source.endswith(".mcap")
    said = [r.getMessage() for r in caplog.records if "without metadata.yaml" in r.getMessage()]
    assert len(said) == 1 and str(folder / "run2") in said[0], said
    assert [p.name for p in find_logs([folder])] == ["run1", "run2.mcap"]  # identify's folder: it was left out


def test_identify_names_and_takes_the_joint_of_a_two_joint_bag(tmp_path, capsys):
    """identify on a bag of two joints: the refusal names identify's --joint (it said "(joint)", a flag identify
    had not), and --joint picks the joint."""
    import json

    from servo_ff.cli import build_parser, main
    from servo_ff.cli.identify import options
    from servo_ff.workflows.identify import prepare

    bag = Bag(tmp_path / "two")
    meta = {"mass": 0.5, "length": 0.15, "arm_mass": 0.0, "kp": 8.0, "vin": 15.0, "motor": "mx64"}
    bag.put("/servo_ff/log_meta", "std_msgs/msg/String", START, bag.T["std_msgs/msg/String"](data=json.dumps(meta)))
    for k in range(N):
        _states(bag, k, ["pendulum_1", "pendulum_2"])
        bag.joint_state("/servo/joint_command", _stamp(k), ["pendulum_1", "pendulum_2"], [G1[k], G2[k]], [])
    bag.close()
    assert main(["identify", str(bag.path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "identify --joint" in err, err
    argv = ["identify", str(bag.path), "--out", str(tmp_path / "o"), "--validation", "0", "--joint", "pendulum_2"]
    args = build_parser().parse_args(argv)
    logs, _ = prepare(args.logs, options(args))
    assert logs[0].joint == "pendulum_2"
    _goal_is(logs[0], G2)


def test_identify_takes_the_bag_flags_of_fit(tmp_path, capsys):
    """identify reads bags as ``servo-ff fit`` does: ``--joints`` orders Float64MultiArray goals, ``--goal-topic``
    picks one of two command topics, and a refusal names identify's own flag (before: identify had neither flag,
    its refusals named ``servo-ff fit --goal-topic``; such a bag could not be identified at all)."""
    import json

    from servo_ff.cli import build_parser, main
    from servo_ff.cli.identify import options
    from servo_ff.workflows.identify import prepare

    bag = Bag(tmp_path / "two")
    meta = {"mass": 0.5, "length": 0.15, "arm_mass": 0.0, "kp": 8.0, "vin": 15.0, "motor": "mx64"}
    bag.put("/servo_ff/log_meta", "std_msgs/msg/String", START, bag.T["std_msgs/msg/String"](data=json.dumps(meta)))
    for k in range(N):
        _states(bag, k, ["pendulum_1", "pendulum_2"])
        bag.array("/forward_position_controller/commands", _stamp(k), [G1[k], G2[k]])
        bag.array("/teleop/commands", _stamp(k), [0.0, 0.0])
    bag.close()
    out = ["--out", str(tmp_path / "out"), "--validation", "0", "--joint", "pendulum_2"]
    assert main(["identify", str(bag.path), *out]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "identify --goal-topic" in err, err
    chosen = [*out, "--goal-topic", "/forward_position_controller/commands"]
    assert main(["identify", str(bag.path), *chosen]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "identify --joints" in err, err
    args = build_parser().parse_args(["identify", str(bag.path), *chosen, "--joints", "pendulum_1, pendulum_2"])
    logs, _ = prepare(args.logs, options(args))
    assert logs[0].joint == "pendulum_2"
    _goal_is(logs[0], G2)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- the joint states' stamps are the clock (review)
SIM0 = 100_000_000_000  # ns: sim time, the header stamps of a simulation


def _servo_bag(path, recv_of) -> Bag:
    """pendulum_1 (mx64/m4, kp 8) on the reference motion as our nodes record it: /joint_states stamped every 5 ms
    from 100 s (sim time), Float64MultiArray goals and gains (no header); message k received at ``recv_of(k)``."""
    from test_replay_robot_bags import REF, servo

    q, dq = servo(REF, 8.0)
    bag = Bag(path)
    state = bag.T["sensor_msgs/msg/JointState"]
    layout = bag.T["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0)
    array = bag.T["std_msgs/msg/Float64MultiArray"]
    for k in range(len(REF)):
        recv = recv_of(k)
        js = state(
            header=bag.header(SIM0 + k * 5_000_000),
            name=["pendulum_1"],
            position=np.array([q[k]]),
            velocity=np.array([dq[k]]),
            effort=np.zeros(1),
        )
        bag.put("/joint_states", "sensor_msgs/msg/JointState", 0, js, recv)
        goal = array(layout=layout, data=np.array([REF[k]]))
        bag.put("/servo/commands", "std_msgs/msg/Float64MultiArray", 0, goal, recv + 20_000)
        if k % 100 == 0:
            gain = array(layout=layout, data=np.array([8.0]))
            bag.put("/servo/p_gains", "std_msgs/msg/Float64MultiArray", 0, gain, recv)
    return bag


def _fit(bag: Bag, out) -> np.ndarray:
    from test_replay_robot_bags import alpha, fit

    assert fit(bag.close(), out, "--vin", "15") == 0
    return alpha(out)


@pytest.fixture(scope="module")
def clean_alpha(tmp_path_factory) -> np.ndarray:
    """α̂ of the bag received 0.3 ms after each stamp."""
    tmp = tmp_path_factory.mktemp("clean")
    return _fit(_servo_bag(tmp / "b", lambda k: START + k * 5_000_000 + 300_000), tmp / "o")


def _close_to(got: np.ndarray, want: np.ndarray) -> None:
    """Within the reliable figures: α̂0 ±2 %, α̂1 ±10 %."""
    assert abs(got[0] - want[0]) < 0.02 * want[0] and abs(got[1] - want[1]) < 0.1 * want[1], (got, want)


def test_a_simulation_at_half_real_time_with_header_less_goals_fits_on_the_sim_clock(tmp_path, clean_alpha):
    """A simulation at real-time factor 0.5 (states stamped in sim time, received on the wall clock, 10 ms apart),
    Float64MultiArray goals: the goals are put on the states' stamps through their receive times (every stream was
    timed by its receive time, twice the sim's: α̂0 0.12, α̂1 6.90 against 13.31, 9.68)."""
    got = _fit(_servo_bag(tmp_path / "b", lambda k: START + k * 10_000_000 + 300_000), tmp_path / "o")
    _close_to(got, clean_alpha)


def test_messages_received_in_bursts_fit_on_their_stamps(tmp_path, clean_alpha):
    """Hardware whose messages arrive 4 at a time every 20 ms (50 µs apart), stamps regular: fitted on the stamps
    (the receive times were the clock: "no powered stretch between recorder gaps", exit 2)."""
    got = _fit(
        _servo_bag(tmp_path / "b", lambda k: START + (k // 4 + 1) * 20_000_000 + (k % 4) * 50_000), tmp_path / "o"
    )
    _close_to(got, clean_alpha)


@pytest.mark.parametrize("goal", ["array", "unnamed JointState"])
def test_an_unnamed_one_value_goal_beside_two_joint_states_is_refused_without_joints(tmp_path, goal):
    """/joint_states names pendulum_1 and pendulum_2, the only goal topic carries one value naming no joint
    (pendulum_1's): fitting pendulum_2 on it is refused naming the joints and --joints (pendulum_1's goal was
    read as pendulum_2's: the review's bag fitted α̂ [94.2, 0, 49.8, 2.43], exit 0); with --joints the value is
    the joint's it names."""
    bag = Bag(tmp_path / "b")
    for k in range(N):
        _states(bag, k, ["pendulum_1", "pendulum_2"])
        if goal == "array":
            bag.array("/servo/commands", _stamp(k), [G1[k]])
        else:
            bag.joint_state("/servo/joint_command", _stamp(k), [], [G1[k]], [])
    path = bag.close()
    with pytest.raises(LogError) as e:
        _read(path, joint="pendulum_2")
    msg = str(e.value)
    assert "pendulum_1" in msg and "'pendulum_2'" in msg and "--joints" in msg and "\n" not in msg, msg
    _goal_is(_read(path, joint="pendulum_1", goal_joints=["pendulum_1"]), G1)
