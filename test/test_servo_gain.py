"""The feed-forward node's gain setter (servo_ff.ros.servo_gain.ServoGainSetter) against servo nodes over DDS: a
servo node that dies with a call pending and comes back still gets the gain, two setters on one servo node both
get their joint's gain, a servo `kp` that is one double is one value for all, and the state says a servo node is
gone.

A call is made to pend by a servo node created but not spinning yet (not added to the harness): its services are in
the graph, nobody answers them."""

from __future__ import annotations

import pytest
from nodes_harness import PENDULUM_SIM, RosHarness, sim_node, wait_for, watched

pytest.importorskip("rclpy")
import rclpy  # noqa: E402

from servo_ff.ros.servo_gain import ServoGainSetter  # noqa: E402

JOINTS = PENDULUM_SIM["joints"]  # shoulder, elbow


@pytest.fixture(scope="module")
def h():
    with RosHarness(salt=17) as harness:
        yield harness


def _servo_params_node(h: RosHarness, name: str, joints: list[str], kp):
    """A node with a servo node's `joints` and `kp` parameters, not spinning (not added to ``h``)."""
    node = rclpy.create_node(name, context=h.context, namespace=h.ns)
    node.declare_parameter("joints", joints)
    node.declare_parameter("kp", kp)
    return node


def test_a_servo_node_dying_with_a_call_pending_and_started_again_gets_the_gain(h):
    """The servo node dies with the setter's GetParameters pending (an rclpy future never fails): the call is
    dropped once its services are gone, and a new servo node of that name gets the gain. The setter's clock is
    frozen: its call timeout never runs out, the disappearance alone frees it. (Before: the call stayed in flight
    for ever, nothing was sent again and the new servo node kept its own kp.)"""
    g = ServoGainSetter(h.make_node("gain_client_respawn"), "servo_respawn", JOINTS, clock=lambda: 100.0)
    dying = _servo_params_node(h, "servo_respawn", JOINTS, [1.0])
    g.set([5.0])
    wait_for(lambda: g._in_flight, 20.0, "the GetParameters call pending on the servo node")
    dying.destroy_node()
    wait_for(lambda: not g._in_flight, 20.0, "the pending call dropped once the servo node is gone")
    assert g.sets == 0 and g.pending and " gone: " in g.state, g.state
    servo = sim_node(h, "servo_respawn", **PENDULUM_SIM, kp=[32.0])
    try:
        wait_for(lambda: list(servo.get_parameter("kp").value) == [5.0], 20.0, "the gain on the new servo node")
        wait_for(lambda: not g.pending, 20.0, "the setter done")
        assert g.sets == 1 and "set on" in g.state, g.state
    finally:
        h.remove(servo)


def test_a_call_not_answered_in_call_timeout_is_sent_again_and_its_late_answer_ignored(h):
    """A servo node that does not answer: after ``call_timeout`` on the setter's clock (max(2 s, 4 poll periods)
    by default) the call is dropped and sent again (the state says so); when the servo node answers both, the
    dropped call's answer is ignored: one set. (Before: the call stayed in flight, nothing was sent again.)"""
    now = [100.0]
    g = ServoGainSetter(h.make_node("gain_client_slow"), "servo_slow", JOINTS, clock=lambda: now[0])
    servo = _servo_params_node(h, "servo_slow", JOINTS, [1.0])
    wait_for(lambda: g.client.service_is_ready() and g.reader.service_is_ready(), 20.0, "the servo's services")
    g.set([6.0])
    assert g._in_flight
    now[0] += 1.9
    g.poll()
    assert g._in_flight and "no answer in" not in g.state  # within the 2 s bound: still waiting
    now[0] += 0.2
    g.poll()
    assert g._in_flight and "no answer in 2 s" in g.state, g.state  # dropped, and a new call pending
    h.add(servo)  # the servo node spins: it answers both GetParameters
    wait_for(lambda: list(servo.get_parameter("kp").value) == [6.0], 20.0, "the gain on the servo node")
    wait_for(lambda: not g.pending, 20.0, "the setter done")
    assert g.sets == 1 and "set on" in g.state, g.state
    h.remove(servo)


def test_two_setters_on_one_servo_node_each_get_their_joints_gain(h):
    """Two clients set one joint each on one servo node, and read its kp at the same time (both GetParameters
    answered before either SetParameters): each writes back the other's joint as it read it, and the later write
    undoes the earlier one's gain; after its write each reads the servo's kp again and writes its gain again when it
    does not hold. Both gains hold in the end. (Before: [1, 7] on the servo node, while the first setter said
    'kp [5.0, 1.0] set'.)"""
    from rclpy.parameter import Parameter

    from servo_ff.nodes.sim_node import SimNode

    servo = SimNode(
        "servo_two",
        **h.node_kwargs(),
        parameter_overrides=[Parameter(k, value=v) for k, v in {**PENDULUM_SIM, "kp": [1.0, 1.0]}.items()],
    )  # not spinning yet: both reads pend until it is added
    g1 = ServoGainSetter(h.make_node("gain_client_shoulder"), "servo_two", ["shoulder"])
    g2 = ServoGainSetter(h.make_node("gain_client_elbow"), "servo_two", ["elbow"])
    g1.set([5.0])
    g2.set([7.0])
    wait_for(lambda: g1._in_flight and g2._in_flight, 20.0, "both GetParameters pending")
    h.add(servo)
    try:
        wait_for(lambda: not g1.pending and not g2.pending, 20.0, "both setters done")
        assert list(servo.get_parameter("kp").value) == [5.0, 7.0]
        assert list(servo.sim.kp) == [5.0, 7.0]  # applied
        # (here 3 writes: the later write undid the earlier one's gain, whose setter wrote it again on reading back)
        for g in (g1, g2):
            assert "set on" in g.state and "overwritten" not in g.state, g.state
    finally:
        h.remove(servo)


def test_a_servo_kp_that_is_one_double_is_one_value_for_all_its_joints(h):
    """A servo node whose `kp` is a double (not an array) takes one value for all its joints, set as a double;
    per-joint gains for it are refused naming that. (Before: 'no joints or kp parameter', nothing set.)"""
    servo = h.add(_servo_params_node(h, "servo_double", ["a", "b"], 1.0))
    g = ServoGainSetter(h.make_node("gain_client_double"), "servo_double", ["a", "b"])
    g.set([5.0])
    wait_for(lambda: not g.pending, 20.0, "the setter done")
    assert servo.get_parameter("kp").value == 5.0 and g.sets == 1
    assert "set on" in g.state, g.state
    g2 = ServoGainSetter(h.make_node("gain_client_double_a"), "servo_double", ["a"])
    g2.set([6.0])
    wait_for(lambda: not g2.pending, 20.0, "the second setter done")
    assert "one double" in g2.state and "not set" in g2.state and g2.sets == 0, g2.state
    assert servo.get_parameter("kp").value == 5.0
    h.remove(servo)


def test_the_state_says_a_servo_node_is_gone_and_its_gain_is_set_again_when_back(h):
    """After the gain is set, the servo node disappears: the state (the feed-forward node's `servo_kp`
    diagnostics) says it is gone and the gain is set again when it is back, and it is. (Before: 'kp … set on …'
    for a servo node no longer there.)"""
    servo = sim_node(h, "servo_back", **PENDULUM_SIM, kp=[32.0])
    g = ServoGainSetter(h.make_node("gain_client_back"), "servo_back", JOINTS)
    g.set([8.0])
    wait_for(lambda: "set on" in g.state, 20.0, "the gain set")
    h.remove(servo)
    wait_for(lambda: " gone: " in g.state, 20.0, "the state saying the servo node is gone")
    assert "set again when it is back" in g.state, g.state
    servo = sim_node(h, "servo_back", **PENDULUM_SIM, kp=[32.0])
    try:
        wait_for(lambda: list(servo.get_parameter("kp").value) == [8.0], 20.0, "the gain on the servo node back")
        wait_for(lambda: "set on" in g.state, 20.0, "the state saying it is set")
        assert g.sets == 2
    finally:
        h.remove(servo)


@pytest.mark.parametrize("then", [20.0, 1.0])
def test_a_gain_set_anew_between_the_write_and_its_read_back_is_kept_an_undo_is_written_again(h, then):
    """The servo node (spun by hand here, one callback at a time) answers the read and takes the write; before it
    answers the read-back, its kp is set to ``then``: a third value (20) is someone's own setting, kept (before:
    written over with the setter's 5), said in the state; the value it had before the write (1) is a stale write's
    undo, written again."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    servo = _servo_params_node(h, f"servo_anew_{int(then)}", JOINTS, [1.0, 1.0])
    ex = SingleThreadedExecutor(context=h.context)
    ex.add_node(servo)
    g = ServoGainSetter(h.make_node(f"gain_client_anew_{int(then)}"), servo.get_name(), JOINTS)
    try:
        g.set([5.0])
        wait_for(lambda: ex.spin_once(timeout_sec=0.05) or list(servo.get_parameter("kp").value) == [5.0, 5.0],
                 20.0, "the read answered and the write taken")  # fmt: skip
        wait_for(lambda: g._writes == 1 and g._in_flight, 20.0, "the read-back asked (not answered: not spun)")
        assert servo.set_parameters([Parameter("kp", value=[then, then])])[0].successful  # before the read-back
        g.set([5.0])  # the same gain asked again meanwhile (review: it restarted the setter, the read-back then
        # taken for a first read: 20 written over)
        wait_for(lambda: ex.spin_once(timeout_sec=0.05) or not g.pending, 20.0, "the setter done")
        if then == 20.0:
            assert list(servo.get_parameter("kp").value) == [20.0, 20.0] and g.sets == 1
            assert "set anew after this node's write: kept" in g.state, g.state
        else:
            assert list(servo.get_parameter("kp").value) == [5.0, 5.0] and g.sets == 2
            assert "set on" in g.state, g.state
    finally:
        ex.remove_node(servo)
        servo.destroy_node()
        ex.shutdown()


def test_a_setter_is_seen_done_only_with_its_final_state(h):
    """``pending`` turns False last: a reader that sees the setter done (the feed-forward node's diagnostics, a
    test's wait) reads its final state. (Before: False was written first, the state still said 'reading it back'.)"""
    Watched, seen = watched(
        ServoGainSetter, "pending", lambda g, v: g.state if v is False and getattr(g, "pending", False) else None
    )
    servo = sim_node(h, "servo_watched", **PENDULUM_SIM, kp=[32.0])
    try:
        g = Watched(h.make_node("gain_client_watched"), "servo_watched", JOINTS)
        g.set([7.0])
        wait_for(lambda: not g.pending, 20.0, "the setter done")
        assert len(seen) == 1 and seen[0].startswith("kp [7.0] set on /") and "servo_watched" in seen[0], seen
        g2 = Watched(h.make_node("gain_client_watched_none"), "servo_watched", ["wrist"])
        g2.set([7.0])
        wait_for(lambda: not g2.pending, 20.0, "the second setter done")
        assert seen[-1].endswith("has none of the joints ['wrist']: no kp set"), seen
    finally:
        h.remove(servo)
