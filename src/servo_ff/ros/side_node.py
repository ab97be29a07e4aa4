"""High-rate subscriptions served off a node's executor.

rclpy's executors rebuild their wait set from every entity of a node (publishers and subscriptions with their QoS
event handlers, parameter services, timers) once per wake-up and take one message per ready subscription: a node
with a dozen entities spends ≈ 150–300 µs of Python per message. A sim running as fast as it can sends
``/joint_states`` and ``/clock`` at several kHz of wall time; a node that needs every sample (the ILC node
recording a trial by the sim's stamps) then falls more than its queue behind, and the queue drops the oldest.

:class:`SideNode` takes such topics on a minimal node of its own (no parameter services, no rosout, no global
arguments: the owner's ``__node`` remap must not rename it) in the owner's context, spun by its own
single-threaded executor in a daemon thread; callbacks run on that thread, and each wake-up takes every message
already queued (the subscription's own ``take_message``, as the executor calls it) instead of one per wait set.
Topics are the owner's resolved names (its remaps and namespace applied), so the side node subscribes to exactly
what the owner would have. :meth:`SideNode.take_clock` moves the owner's ``/clock`` subscription
(``use_sim_time``) there too: the owner's executor then sleeps while a trial streams in, instead of holding the
GIL for every ``/clock``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile

DRAIN_MAX = 10_000  # messages taken per wake-up at most (then the executor serves the other entities)


class SideNode:
    """A lean node beside ``owner`` with its own executor thread (:meth:`subscribe`, :meth:`take_clock`)."""

    def __init__(self, owner: Node, tag: str):
        self.owner = owner
        self.node = Node(
            f"{owner.get_name()}_{tag}",
            namespace=owner.get_namespace(),
            context=owner.context,
            use_global_arguments=False,
            start_parameter_services=False,
            enable_rosout=False,
        )
        self.executor = SingleThreadedExecutor(context=owner.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, name=f"{tag}-executor", daemon=True)
        self.thread.start()

    def subscribe(self, msg_type: Any, topic: str, callback: Callable[[Any], None], qos: QoSProfile | int) -> str:
        """``callback`` for every message on the owner's ``topic`` (resolved as the owner would); returns the
        resolved name."""
        name = self.owner.resolve_topic_name(topic)

        def drain(msg: Any) -> None:  # this message, then every one already queued: one wake-up for a burst
            callback(msg)
            with sub.handle:
                for _ in range(DRAIN_MAX):
                    taken = sub.handle.take_message(sub.msg_type, sub.raw)
                    if taken is None:
                        break
                    callback(taken[0])

        sub = self.node.create_subscription(msg_type, name, drain, qos)
        return name

    def take_clock(self) -> bool:
        """Serve the owner's ``/clock`` subscription (made by its TimeSource under ``use_sim_time``) here, with the
        same callback and QoS; False when the owner has none (wall time). Turning ``use_sim_time`` off and on
        later gives the owner its own subscription again."""
        source = getattr(self.owner, "_time_source", None)
        sub = getattr(source, "_clock_sub", None)
        if sub is None:
            return False
        topic, qos, msg_type = sub.topic_name, sub.qos_profile, sub.msg_type
        self.owner.destroy_subscription(sub)
        source._clock_sub = self.node.create_subscription(msg_type, topic, source.clock_callback, qos)
        return True

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except ExternalShutdownException:
            pass
        except _rclpy.RCLError:  # the context shut down under the wait (rclpy's SIGINT handler runs in its own thread)
            if self.owner.context.ok():
                raise

    def destroy(self) -> None:
        """Stop the thread and destroy the side node (from the owner's ``destroy_node``)."""
        self.executor.shutdown(timeout_sec=1.0)
        self.thread.join(timeout=2.0)
        self.node.destroy_node()
