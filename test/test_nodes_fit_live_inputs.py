"""servo_fit_node's live inputs (source topics) that a fit or an RLS update must not take as they come: an old
supply reading, a NaN one (/tmp/audit_19d/p02_fit_live_baseline.py), a late-stamped joint state (p03). A real
FitNode over DDS, its live buffers filled as in test_nodes_fit_rls_trust."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from nodes_harness import RosHarness, rosout_matched, wait_for

pytest.importorskip("rclpy")
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from test_nodes_fit_rls_trust import DT, KP, NOMINAL, URDF, VIN, Live, _motion  # noqa: E402

from servo_ff.nodes.fit_node import FitNode  # noqa: E402


def _fit_node(h: RosHarness, **extra) -> tuple[FitNode, list]:
    """A fit node on the live topics of pendulum_1 (window 7 s, no feed-forward node, no output; the supply put
    with the data never stale however slow the box: supply_timeout 1 h) and its /rosout."""
    params = {"joint": "pendulum_1", "urdf_path": URDF, "run_on_start": False, "source": "topics",
              "joints": ["pendulum_1"], "kp": KP, "window": 7.0, "dt": 0.01, "feedforward_node": "", "output": "",
              "supply_timeout": 3600.0, **extra}  # fmt: skip
    fit = h.add(
        FitNode("servo_fit", **h.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    )
    client = h.make_node("inputs_client")
    rosout: list = []
    client.create_subscription(Log, "/rosout", rosout.append, 200)
    wait_for(lambda: client.count_publishers("/rosout") >= 2, 20.0, "the nodes' /rosout")
    rosout_matched(client, rosout)
    return fit, rosout


def test_an_old_supply_reading_refuses_the_fit_and_holds_the_rls():
    """The only servo_supply reading 12 s old (window 7 s, supply_timeout 1 s): the fit is refused naming the topic
    and the age (before: fitted on it, unsaid); after a good fit, an RLS update with the supply 3 s old holds α̂,
    said (before: updated on it)."""
    with RosHarness(salt=62) as h:
        fit, rosout = _fit_node(h, rls=True, rls_period=60.0, supply_timeout=1.0)
        live = Live(fit)
        live.put(NOMINAL)
        now = fit.get_clock().now().nanoseconds * 1e-9
        fit.volts = deque([(now - 12.0, VIN)])
        ok, text = fit.run()
        assert not ok and "servo_supply reading is 12.0 s old (supply_timeout 1 s)" in text, text
        fit.volts = deque([(now, VIN)])
        assert fit.set_parameters([Parameter("supply_timeout", value=3600.0)])[0].successful  # however slow the box
        ok, text = fit.run()
        assert ok, text
        # rls_period 60 s against a 7 s window: said at the RLS start (before: those samples went unfed, unsaid)
        said = wait_for(lambda: [m.msg for m in rosout if "are never fed" in m.msg], 20.0, "the rls_period line")
        assert "rls_period 60 s > window 7 s - the 2.8 s excitation span" in said[0], said
        assert fit.set_parameters([Parameter("supply_timeout", value=1.0)])[0].successful
        for t in list(fit.timers):
            if t.timer_period_ns == 60_000_000_000:
                t.cancel()
        live.put(NOMINAL)
        fit.volts = deque([(fit.get_clock().now().nanoseconds * 1e-9 - 3.0, VIN)])
        fit._on_rls()
        assert fit.refiner.rls.samples == 0
        lines = wait_for(lambda: [m.msg for m in rosout if "RLS holds" in m.msg], 20.0, "the RLS hold line")
        assert "servo_supply reading is 3.0 s old" in lines[0], lines


def test_a_nan_supply_reading_is_left_out_counted_by_the_bags_rule():
    """A servo_supply message with a NaN voltage (the servo node's before its first health read): held, then left
    out of the fit by the replay's rule (rosbag_supply.left_unread), counted in one line, the fit on the others
    (before: refused at arrival in a line of its own, not the bag's rule, whose NaN row refused the whole bag)."""
    import math

    from sensor_msgs.msg import BatteryState

    with RosHarness(salt=63) as h:
        fit, rosout = _fit_node(h)
        pub = h.make_node("supply_pub").create_publisher(BatteryState, "servo_supply", 10)
        wait_for(lambda: pub.get_subscription_count() >= 1, 20.0, "the fit node on servo_supply")
        live = Live(fit)
        live.put(NOMINAL)
        n = len(fit.volts)
        pub.publish(BatteryState(voltage=float("nan")))
        wait_for(lambda: len(fit.volts) > n or any("servo_supply refused" in m.msg for m in rosout), 20.0, "the NaN")
        assert math.isnan(fit.volts[-1][1]), list(fit.volts)[-3:]
        ok, text = fit.run()
        assert ok and fit.result["u_bat"] == pytest.approx(VIN) and fit.result["u_bat_source"].endswith("/servo_supply")
        lines = wait_for(lambda: [m.msg for m in rosout if "left out" in m.msg], 20.0, "the line")
        assert len(lines) == 1, lines
        assert f"/servo_supply: 1 of {n + 1} supply reading(s) not finite (the first: message {n}" in lines[0]


def test_the_vin_parameter_is_the_live_supply_as_a_bags_given_vin():
    """vin 15 given, servo_supply 12 V: the live fit divides by 15 V, the difference said once, as a bag's given vin
    (before: the vin parameter was not read, u_bat 12 V); with no servo_supply reading at all it is the supply
    (before: refused, 'no valid servo_supply reading held')."""
    with RosHarness(salt=67) as h:
        fit, rosout = _fit_node(h, vin=15.0)
        live = Live(fit)
        live.put(NOMINAL)
        ok, text = fit.run()
        assert ok and (fit.result["u_bat"], fit.result["u_bat_source"]) == (15.0, "given"), (text, fit.result)
        lines = wait_for(lambda: [m.msg for m in rosout if "(given) is used" in m.msg], 20.0, "the line")
        assert (
            len(lines) == 1
            and "vin 15 V (given) is used, not the recorded /" in lines[0]
            and "/servo_supply (median 12 V)" in lines[0]
        )
        fit.volts.clear()
        ok, text = fit.run()
        assert ok and (fit.result["u_bat"], fit.result["u_bat_source"]) == (15.0, "given"), text
        # the one supply range (schema SUPPLY_FIELD): vin 50 is no servo supply (before: taken by the parameter)
        assert not fit.set_parameters([Parameter("vin", value=50.0)])[0].successful


def test_a_late_stamped_state_is_dropped_alone_and_a_restart_clears():
    """100 states 2 ms apart, one of them stamped 50 ms before the one before it: that one is refused, said, and
    the other 99 kept (before: it wiped the 50 before it); then a state 2 s back (> OLD_STAMP: a restarted
    stream) drops those before it, said."""
    from sensor_msgs.msg import JointState

    with RosHarness(salt=64) as h:
        fit, rosout = _fit_node(h)
        pub = h.make_node("states_pub").create_publisher(JointState, "joint_states", 200)
        wait_for(lambda: pub.get_subscription_count() >= 1, 20.0, "the fit node on joint_states")

        def send(t: float) -> None:
            m = JointState(name=["pendulum_1"], position=[0.1])
            m.header.stamp.sec, m.header.stamp.nanosec = divmod(int(t * 1e9), 1_000_000_000)
            pub.publish(m)

        t0 = fit.get_clock().now().nanoseconds * 1e-9 - 1.0
        for k in range(100):  # in tens, each taken before the next (the subscription keeps the last 50)
            send(t0 + 0.002 * k - (0.05 if k == 50 else 0.0))
            if k % 10 == 9:
                last = t0 + 0.002 * k
                wait_for(lambda: fit.buffer and abs(fit.buffer[-1][0] - last) < 1e-6, 20.0, "states")  # noqa: B023
        assert len(fit.buffer) == 99 and fit.late_states == 1, len(fit.buffer)
        lines = wait_for(lambda: [m.msg for m in rosout if "out of order" in m.msg], 20.0, "the refusal line")
        assert "joint_states refused" in lines[0] and "0.048 s before the last state" in lines[0], lines
        send(t0 - 2.0)
        wait_for(lambda: len(fit.buffer) == 1, 20.0, "the states before the restart dropped")
        lines = wait_for(lambda: [m.msg for m in rosout if "restarted stream" in m.msg], 20.0, "the restart line")
        assert "the 99 live states before it dropped" in lines[0], lines


def test_a_gain_change_within_the_window_refuses_the_live_fit():
    """A gain sent on servo/p_gains is the fit's when the kp parameter is 0; kp 8 before the data and 16 one second
    into it (placed on the data's clock): the live fit is refused naming the time of the change, by the bag's rule
    (kp_from_gains; before: the node did not listen, and kp 8 → 16 mid-window gave α̂ [5.87, 0, 14.44, 1.97]
    instead of [10.57, 7.56, 2.97, 1.35], passing the gate, p04)."""
    from std_msgs.msg import Float64MultiArray

    with RosHarness(salt=65) as h:
        # a window of 60 s: the data's first sample stays in it however late a fit runs (window 7 s, a loaded box:
        # the second fit trimmed the data's start, the change then said 'at 0.870 s')
        fit, rosout = _fit_node(h, kp=0.0, window=60.0)
        pub = h.make_node("gains_pub").create_publisher(Float64MultiArray, "servo/p_gains", 10)
        wait_for(lambda: pub.get_subscription_count() >= 1, 20.0, "the fit node on servo/p_gains")
        pub.publish(Float64MultiArray(data=[KP]))
        wait_for(lambda: fit.p_gains, 20.0, "the gain taken")
        live = Live(fit)
        live.put(NOMINAL)
        start = float(fit.buffer[0][0])  # the gains placed on the data's clock: 8 before it
        fit.p_gains = deque([(start - 1.0, (KP,))])
        ok, text = fit.run()
        assert ok and fit.result["kp"] == KP and "servo/p_gains" in fit.result["kp_source"], text
        fit.p_gains.append((start + 1.0, (2 * KP,)))  # and 16 one second into it
        ok, text = fit.run()
        assert not ok and "changes from 8 to 16 at 1.000 s" in text, text
        fit.p_gains = deque([(start + 1.0, (2 * KP,))])  # 16 within it, the given kp 8 before (p04)
        assert fit.set_parameters([Parameter("kp", value=KP)])[0].successful
        ok, text = fit.run()
        assert not ok and "to 16 at 1.000 s, within the data, kp 8 (given) before it" in text, text


def test_the_rls_says_a_joint_states_pause_once_per_throttle_period(caplog):
    """Three RLS updates whose windows each hold a 0.3 s pause of /joint_states: one 'recorder gap' line (before:
    one per update, every rls_period: 2 lines/s in p05), the rest counted in the next."""
    import logging

    with RosHarness(salt=66) as h:
        fit, rosout = _fit_node(h, rls=True, rls_period=60.0)
        live = Live(fit)
        live.put(NOMINAL)
        ok, text = fit.run()
        assert ok, text
        with caplog.at_level(logging.WARNING):
            for _ in range(3):
                live.put(NOMINAL)
                start = fit.buffer[0][0]
                fit.buffer = deque(s for s in fit.buffer if not start + 3.0 <= s[0] < start + 3.3)
                fit._on_rls()
            fit.get_logger().info("rls gaps done")
            wait_for(lambda: any("rls gaps done" in m.msg for m in rosout), 20.0, "the lines before it")
    said = [m.msg for m in rosout if "recorder gap" in m.msg] + [
        r.getMessage() for r in caplog.records if "recorder gap" in r.getMessage()
    ]
    assert len(said) == 1 and "RLS: joint_states: 1 recorder gap(s)" in said[0], said


def test_a_joint_without_effort_is_not_refused_after_one_with_effort():
    """Stale samples are told per joint: after a live fit of a joint whose effort is given, a joint whose effort is
    never given (a mixed bus: no kt) is still taken, and a joint change forgets what was seen (before: one flag pair
    for every joint, never reset: every state of the second joint refused as 'no fresh reading')."""
    import math
    from types import SimpleNamespace

    from servo_ff.nodes.fit_live import FitLiveData

    live = FitLiveData.__new__(FitLiveData)
    live._fields_seen = {}
    msg = SimpleNamespace(name=["a", "b"], velocity=[0.1, 0.2], effort=[0.3, math.nan])
    assert not live._not_fresh(msg, 0) and not live._not_fresh(msg, 1)
    stale = SimpleNamespace(name=["a", "b"], velocity=[math.nan, 0.2], effort=[math.nan, math.nan])
    assert live._not_fresh(stale, 0) and not live._not_fresh(stale, 1)  # a's reading missing; b never gives effort


def test_two_publishers_of_the_joint_refuse_the_live_fit_as_they_refuse_a_bag():
    """The servo node's /joint_states of pendulum_1 (100 Hz) and a mock broadcaster's naming [pendulum_2,
    pendulum_1] with position = goal (50 Hz), through the subscription's callback: the fit is refused in one line
    naming the topic and both name sets, by the replay's rule (joint_publishers.NameSets; before: both taken, mixed,
    and fitted); the servo's alone (the live samples dropped) fit."""
    from sensor_msgs.msg import JointState

    with RosHarness(salt=69) as h:
        fit, rosout = _fit_node(h, dt=DT / 2)  # every other grid point a mock's state
        q, th = _motion(NOMINAL)
        t = fit.get_clock().now().nanoseconds * 1e-9 - 0.5 - (len(q) - 1) * DT + np.arange(len(q)) * DT

        def state(names: list[str], position: float, at: float) -> JointState:
            m = JointState(name=names, position=[0.0] * (len(names) - 1) + [position])
            m.header.stamp.sec, m.header.stamp.nanosec = divmod(int(at * 1e9), 1_000_000_000)
            return m

        def states(mock: bool) -> None:
            for k in range(len(q)):
                fit._on_js(state(["pendulum_1"], float(th[k]), t[k]))
                if mock and k % 2:
                    fit._on_js(state(["pendulum_2", "pendulum_1"], float(q[k]), t[k] + DT / 2))
            fit.goals, fit.volts = deque(zip(t, q)), deque((float(x), VIN) for x in t[::10])

        states(mock=True)
        assert len(fit.buffer) == len(q) + len(q) // 2
        ok, text = fit.run()
        assert not ok and "\n" not in text, text
        for words in ("topic /", "/joint_states: joint 'pendulum_1' comes from 2 publishers",
                      f"['pendulum_1'] in {len(q)} message(s)", f"['pendulum_2', 'pendulum_1'] in {len(q) // 2}",
                      "not fitted", "joint_states:=other/joint_states"):  # fmt: skip
            assert words in text, (words, text)
        assert fit._drop_live("the test")
        states(mock=False)
        ok, text = fit.run()
        assert ok, text


def test_two_publishers_naming_the_same_joints_refuse_the_live_fit():
    """Two publishers of /joint_states both naming [pendulum_1] (a sim node and a hardware node up together), over
    DDS, their stamps taking turns forward so the out-of-order check passes every one: told apart by their
    publication sequence numbers (rclpy's message info), the fit is refused in one line naming the topic and the joint
    (before: every message taken and the two motions mixed, the name sets being one: here refused for a 10 ms
    lead of the motion over its goals, a wrong reason); the samples of one
    publisher alone fit."""
    from sensor_msgs.msg import JointState

    from servo_ff.ros.common import with_message_info

    if with_message_info(lambda msg, info: None).__code__.co_argcount != 2:
        pytest.skip("this rclpy gives no message info (Humble)")
    with RosHarness(salt=68) as h:
        fit, rosout = _fit_node(h, dt=DT / 2, window=20.0)  # the states, stamped 6.5 s back, stay in it
        q, th = _motion(NOMINAL)
        t = fit.get_clock().now().nanoseconds * 1e-9 - 0.5 - (len(q) - 1) * DT + np.arange(len(q)) * DT
        pubs = [h.make_node(f"js_pub_{k}").create_publisher(JointState, "joint_states", 1000) for k in (1, 2)]
        wait_for(lambda: fit.count_publishers("joint_states") == 2, 20.0, "both publishers at the fit node")

        def taken(n: int) -> None:
            wait_for(lambda: len(fit.buffer) + fit.late_states >= n, 20.0, f"{n} states at the fit node")

        def publish(both: bool) -> None:
            fit._drop_live("the test")
            for k in range(len(q)):
                if k % 10 == 0:  # the fit node's queue holds 50 messages: taken 10 periods at a time
                    taken(k * (2 if both else 1))
                m = JointState(name=["pendulum_1"], position=[float(th[k])])
                m.header.stamp.sec, m.header.stamp.nanosec = divmod(int(t[k] * 1e9), 1_000_000_000)
                pubs[0].publish(m)
                if both:  # the other publisher's state, between two of the first's: its position the goal
                    m = JointState(name=["pendulum_1"], position=[float(q[k])])
                    m.header.stamp.sec, m.header.stamp.nanosec = divmod(int((t[k] + DT / 2) * 1e9), 1_000_000_000)
                    pubs[1].publish(m)
            n = len(q) * (2 if both else 1)
            taken(n)
            assert fit.late_states == 0 and len(fit.buffer) == n
            fit.goals, fit.volts = deque(zip(t, q)), deque((float(x), VIN) for x in t[::10])

        publish(both=True)
        ok, text = fit.run()
        assert not ok and "\n" not in text, text
        said = ("/joint_states: joint 'pendulum_1' comes from several publishers naming the same joints ['pendulum_1']",
                "sequence numbers went back", "not fitted", "joint_states:=other/joint_states")  # fmt: skip
        for words in said:
            assert words in text, (words, text)
        publish(both=False)
        ok, text = fit.run()
        assert ok, text


def test_a_middleware_without_sequence_numbers_is_one_publisher():
    """rmw_cyclonedds_cpp gives every message RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED (UINT64_MAX; review of
    r3s22: read as going back on every message, one publisher refused as several, every live fit on Cyclone DDS);
    None and 0 (no message info) likewise say nothing; one publisher's 1, 2, 3… neither; two interleaved do."""
    from servo_ff.io.joint_publishers import SEQUENCE_UNSUPPORTED, NameSets

    for seqs, several in (([SEQUENCE_UNSUPPORTED] * 100, False), ([None] * 100, False), ([0] * 100, False),
                          (list(range(1, 101)), False), ([k // 2 + 1 for k in range(100)], True)):  # fmt: skip
        sets = NameSets()
        for k, seq in enumerate(seqs):
            sets.add(["pendulum_1"], f"message {k}", seq)
        said = sets.mixed("/joint_states", "pendulum_1")
        assert bool(said) == several, (seqs[:4], said)
