"""The lockstep loop over DDS (servo_sim_node, stepper backend, ``lockstep: true``): a controller that answers each
``/joint_states`` with a goal, once too late (after ``lockstep_timeout``, the sim having stepped on the held goal).

The goal encodes the state it answers: +A after a state at an even period, -A after an odd one. The physics shows
which goal drove each period: the servo accelerates toward it, so the sign of the velocity change over period k
(state k → state k + 1) is the sign of the goal applied in period k. After the late answer the goal applied in
period k must again be the answer to state k (not the one before: the loop must not keep two goals circulating).
"""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, rosout_matched, sim_node, wait_for

pytest.importorskip("rclpy")
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

RATE = 250.0
PERIOD_NS = round(1e9 / RATE)
A = 0.5  # rad: the goal's magnitude (the servo stays within ±0.05 rad of 0: the sign of the goal decides)
WITHHELD = 20  # the state whose answer comes late
STATES = 120  # states answered


def _sim(h: RosHarness):
    return sim_node(
        h,
        joints=["j"],
        rate_hz=RATE,
        servo="mx64",
        model="m1",
        initial_position=[0.0],
        position_min=[-1.0],
        position_max=[1.0],
        physics_dt=0.001,
        publish_clock=True,
        lockstep=True,
        lockstep_timeout=2.0,  # s of wall time: only the withheld answer makes it fire, however loaded the box
        autostart=False,  # activated once everything is matched: no timeout step before the first goal
        warn_throttle=0.0,
        **{"load.type": "none"},
    )


def _period(msg: JointState) -> int:
    ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
    assert ns % PERIOD_NS == 0, ns
    return ns // PERIOD_NS


def _run(stamped: bool, late_last: bool = False):
    """A controller answering every state with ±A by the state's period parity (stamped JointState on
    ``servo/joint_command`` or unstamped Float64MultiArray on ``servo/commands``), the answer to state WITHHELD
    sent only once state WITHHELD + 1 came (the sim stepped on its timeout), just before the answer to that one
    (``late_last``: just after it).
    Returns (states received, /rosout lines of the sim, its lockstep counts after the last answer)."""
    with RosHarness(salt=41 + stamped) as h:
        sim = _sim(h)
        c = h.make_node("lockstep_controller")
        logs: list[Log] = []
        c.create_subscription(Log, "/rosout", logs.append, 100)
        rosout_matched(sim, logs)
        states: list[JointState] = []
        held: list[JointState] = []
        stats: dict[str, int] = {}
        if stamped:
            pub = c.create_publisher(JointState, "servo/joint_command", 10)
        else:
            pub = c.create_publisher(Float64MultiArray, "servo/commands", 10)

        def answer(state: JointState) -> None:
            goal = A if _period(state) % 2 == 0 else -A
            if stamped:  # late_last: with a frame_id (read by rclpy, not in place as the sim's own layout)
                msg = JointState(header=state.header, name=["j"], position=[goal])
                msg.header.frame_id = "controller" if late_last else ""
                pub.publish(msg)
            else:
                pub.publish(Float64MultiArray(data=[goal]))

        def on_state(msg: JointState) -> None:
            states.append(msg)
            if len(states) == STATES + 1:  # the sim's counts now, before timeouts step it further
                stats.update({k: n - base[k] for k, n in sim.lockstep_stats().items()})
            if len(states) > STATES:
                return
            k = _period(msg)
            if k == WITHHELD:
                held.append(msg)  # answered late: after the sim's timeout step
                return
            if held and k == WITHHELD + 1 and not late_last:
                answer(held.pop())
            answer(msg)
            if held and k == WITHHELD + 1:
                answer(held.pop())

        c.create_subscription(JointState, "joint_states", on_state, 100)
        wait_for(lambda: pub.get_subscription_count() and sim.pub_js.get_subscription_count(), 20.0, "discovery")
        change = c.create_client(ChangeState, f"{sim.get_name()}/change_state")
        for tid in (Transition.TRANSITION_CONFIGURE, Transition.TRANSITION_ACTIVATE):
            assert h.call(change, ChangeState.Request(transition=Transition(id=tid)), timeout=30.0).success
        first = len(states)
        base = sim.lockstep_stats()  # (a timeout step between the activation and the first goal: not counted)
        answer(JointState())  # the first goal (state 0, stamp 0: as the sim has published none answered yet)
        wait_for(lambda: len(states) > STATES, 120.0, f"{STATES} states answered")
        lines = [m.msg for m in logs if m.name.endswith(sim.get_name())]
        last = _period(states[STATES - 1])  # the last state answered: later periods are timeout steps
        return [s for s in states[first : STATES + 1] if _period(s) <= last + 1], lines, stats


def _applied_signs(states: list[JointState]) -> dict[int, float]:
    """Period k → sign of the velocity change from state k to state k + 1 (the goal applied in period k)."""
    by_period = {_period(s): s.velocity[0] for s in states}
    return {k: float(np.sign(by_period[k + 1] - v)) for k, v in by_period.items() if k + 1 in by_period}


def test_a_late_stamped_answer_does_not_shift_the_loop():
    """Stamped answers (JointState on ``servo/joint_command``, header.stamp = the state answered): after the
    timeout step and the late answer the goal applied in period k is the answer to state k, every period; the
    timeout step and the late answer are each logged, with how late the answer was."""
    states, lines, stats = _run(stamped=True)
    periods = [_period(s) for s in states]
    assert periods == sorted(set(periods)), "states repeated or out of order"
    assert periods[-1] - periods[0] == len(periods) - 1, "a period skipped"
    signs = _applied_signs(states)
    expected = {k: 1.0 if k % 2 == 0 else -1.0 for k in signs}
    expected[WITHHELD] = -1.0  # stepped on the timeout: the held goal, the answer to state WITHHELD - 1
    late = [k for k in signs if k > WITHHELD and signs[k] != expected[k]]
    assert not late, f"periods after the late answer driven by the previous state's answer: {late[:10]}"
    assert [k for k in signs if signs[k] != expected[k]] == [], signs
    assert stats == {"timeout_steps": 1, "late_answers": 1, "dropped_answers": 0}
    assert any("lockstep_timeout" in line and "stepped on the held goal" in line for line in lines), lines
    assert any("late" in line and f"{WITHHELD * PERIOD_NS * 1e-9:.3f}" in line for line in lines), lines


def test_a_stamped_answer_older_than_the_last_one_answered_is_dropped():
    """The late answer after the answer to the next state: dropped (one line), the loop unshifted."""
    states, lines, stats = _run(stamped=True, late_last=True)
    signs = _applied_signs(states)
    expected = {k: (1.0 if k % 2 == 0 else -1.0) if k != WITHHELD else -1.0 for k in signs}
    assert [k for k in signs if signs[k] != expected[k]] == [], signs
    assert stats == {"timeout_steps": 1, "late_answers": 0, "dropped_answers": 1}
    assert any("dropped" in line and f"{WITHHELD * PERIOD_NS * 1e-9:.3f}" in line for line in lines), lines


def test_unstamped_goals_step_one_period_each_as_before():
    """Unstamped goals (Float64MultiArray on ``servo/commands``) cannot name the state they answer: each steps
    one period, as before; after the late answer the loop carries two goals and every later goal is applied one
    period late (documented: send stamped JointState goals to a lockstep sim)."""
    states, _, stats = _run(stamped=False)
    signs = _applied_signs(states)
    after = [k for k in signs if WITHHELD + 2 <= k]
    assert after and all(signs[k] == (-1.0 if k % 2 == 0 else 1.0) for k in after), signs
    assert stats["timeout_steps"] == 1


def test_joint_command_cdr_reads_only_the_joints_own_layout():
    """The sim's in-place reader of ``joint_command`` goals: stamp and positions of a goal naming its joints in
    order with positions only; None (rclpy deserializes it) for any other layout."""
    from rclpy.serialization import serialize_message

    from servo_ff.ros.joint_command_cdr import JointCommandCdr

    joints = ["l_hip_pitch", "knee", "a"]
    cdr = JointCommandCdr(joints)
    msg = JointState(name=joints, position=[0.25, -1.5, 3.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 7, 8_000_000
    ns, pos = cdr.read(serialize_message(msg))
    assert ns == 7_008_000_000 and pos.tolist() == [0.25, -1.5, 3.0]
    others = [
        JointState(name=joints[::-1], position=[0.0] * 3),
        JointState(name=joints[:2], position=[0.0] * 2),
        JointState(name=["l_hip_pitcH", "knee", "a"], position=[0.0] * 3),
        JointState(name=joints, position=[0.0] * 3, velocity=[1.0] * 3),
        JointState(name=joints, position=[0.0] * 3, effort=[1.0] * 3),
        JointState(name=joints, position=[]),
    ]
    others[0].header.frame_id = "base"
    others.append(JointState(name=joints, position=[0.0] * 3))
    others[-1].header.frame_id = "base"
    assert [cdr.read(serialize_message(m)) for m in others] == [None] * len(others)


def test_bytes_no_joint_state_on_joint_command_are_one_line_and_the_sim_runs_on():
    """``joint_command`` is taken as bytes under lockstep: bytes rclpy cannot read as a JointState (published
    serialized by anyone) are refused with one line naming the topic, not an exception that ends the sim's
    executor; the next goal still steps it (review r3s4: the raw subscription raised RMWError)."""
    with RosHarness(salt=45) as h:
        sim = _sim(h)
        c = h.make_node("lockstep_garbage")
        pub = c.create_publisher(JointState, "servo/joint_command", 10)
        states: list[JointState] = []
        c.create_subscription(JointState, "joint_states", states.append, 100)
        wait_for(lambda: pub.get_subscription_count() and sim.pub_js.get_subscription_count(), 20.0, "discovery")
        change = c.create_client(ChangeState, f"{sim.get_name()}/change_state")
        for tid in (Transition.TRANSITION_CONFIGURE, Transition.TRANSITION_ACTIVATE):
            assert h.call(change, ChangeState.Request(transition=Transition(id=tid)), timeout=30.0).success
        garbage = b"\x00\x01\x00\x00" + b"\x01\x00\x00\x00" * 2 + b"\xff\xff\xff\xff"  # a name count past the end
        rejected = sim.gate.rejected
        pub.publish(garbage)
        wait_for(lambda: sim.gate.rejected > rejected, 20.0, "the bytes refused")
        assert "servo/joint_command" in sim.gate.last_reason and "16 bytes" in sim.gate.last_reason
        t0 = sim.sim_time_ns
        pub.publish(JointState(name=["j"], position=[0.1]))  # unstamped: steps one period
        wait_for(lambda: sim.sim_time_ns > t0 and states, 20.0, "a step on the next goal")
        assert h._thread.is_alive()
