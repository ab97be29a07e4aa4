"""SideNode (servo_ff.ros.side_node): a burst of /joint_states sent faster than a node takes messages one wait
set at a time reaches the callback whole and in order, and the owner's /clock subscription (use_sim_time) is
served there, still setting the owner's clock."""

from __future__ import annotations

import threading

from nodes_harness import RosHarness, wait_for
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from servo_ff.ros.side_node import SideNode

N = 6000
QUEUE = 3000  # the reader's queue: a burst of N overflows it one message per wake-up, not drained


def test_burst_arrives_whole_and_in_order_beside_a_busy_thread():
    """6000 states published back to back (a sim as fast as it can) into a queue of 3000, while another thread of
    the process keeps the GIL busy (an ILC update): one message per wait set falls more than 3000 behind and the
    queue drops the oldest (148–3663 of 6000 kept in 4 of 4 runs with DRAIN_MAX 0); draining every queued message
    per wake-up keeps up (10 of 10; with a queue of 2000 it dropped messages in 4 of 10 runs on a quiet box)."""
    with RosHarness(salt=41) as h:
        owner = Node("owner", context=h.context, namespace=h.ns)
        side = SideNode(owner, "states")
        got: list[int] = []
        topic = side.subscribe(JointState, "joint_states", lambda m: got.append(m.header.stamp.nanosec), QUEUE)
        assert topic == f"{h.ns}/joint_states"  # the owner's resolved name
        pub = h.make_node("sim").create_publisher(JointState, "joint_states", QoSProfile(depth=N))
        wait_for(lambda: pub.get_subscription_count() == 1, 20.0, "the side node's subscription")
        stop = threading.Event()

        def busy() -> None:
            x = 0
            while not stop.is_set():
                x += 1

        contender = threading.Thread(target=busy, daemon=True)
        contender.start()
        try:
            msg = JointState(name=["j"], position=[0.0], velocity=[0.0], effort=[0.0])
            for k in range(N):
                msg.header.stamp.nanosec = k
                pub.publish(msg)
            wait_for(lambda: len(got) >= N, 30.0, f"{N} states at the side node (got {len(got)})")
        finally:
            stop.set()
            side.destroy()
            owner.destroy_node()
        assert got == list(range(N))


def test_take_clock_moves_the_owners_clock_subscription():
    with RosHarness(salt=42) as h:
        owner = Node(
            "owner", context=h.context, namespace=h.ns, parameter_overrides=[Parameter("use_sim_time", value=True)]
        )
        side = SideNode(owner, "states")
        try:
            assert side.take_clock()
            assert owner.count_subscribers("/clock") == 1  # one: the side node's, not the owner's as well
            assert not [s for s in owner.subscriptions if s.topic_name == "/clock"]
            pub = h.make_node("clock").create_publisher(Clock, "/clock", 10)
            wait_for(lambda: pub.get_subscription_count() == 1, 20.0, "the side node's /clock subscription")
            m = Clock()
            m.clock.sec = 42

            def follows() -> bool:  # sent again on each poll: a /clock sent before the match is lost
                pub.publish(m)
                return owner.get_clock().now().nanoseconds == 42_000_000_000

            wait_for(follows, 20.0, "the owner's clock at 42 s")
            assert owner.get_clock().now().nanoseconds == 42_000_000_000  # the owner's clock follows /clock
        finally:
            side.destroy()
            owner.destroy_node()
    with RosHarness(salt=43) as h:  # wall time: nothing to take
        owner = Node("owner", context=h.context, namespace=h.ns)
        side = SideNode(owner, "states")
        assert not side.take_clock()
        side.destroy()
        owner.destroy_node()
