"""Two publishers of one joint on a JointState topic, told apart by the joints their messages name: a servo node's
``['pendulum_1']`` beside a mock joint_state_broadcaster's ``['pendulum_2', 'pendulum_1']`` (position = goal). Their
rows mixed are no one servo's motion (a bag's fitted α̂0 5.77 for 13.31), so a replay (:mod:`.rosbag_streams`) and
the fit node's live topics (:mod:`servo_ff.nodes.fit_live`) refuse them by this one rule. A bag does not record
which publisher sent a message, so the name set is what both can tell them by. Live, the middleware gives each
message its writer's publication sequence number (rclpy's message info, Iron on): two publishers naming the same
joints interleave theirs, so a name set's numbers going back more than once (once: a restarted publisher) is
several publishers too."""

from __future__ import annotations

#: rmw's RMW_MESSAGE_INFO_SEQUENCE_NUMBER_UNSUPPORTED (UINT64_MAX): rmw_cyclonedds_cpp gives every message this
SEQUENCE_UNSUPPORTED = 2**64 - 1


class NameSets:
    """The name sets of the messages naming one joint: names → [count, where the first one is]."""

    def __init__(self) -> None:
        self.sets: dict[tuple[str, ...], list] = {}
        self.seq: dict[tuple[str, ...], list[int]] = {}  # per name set: [last sequence number, times it went back]

    def add(self, names: tuple[str, ...] | list[str], where: str, seq: int | None = None) -> None:
        """One message naming ``names`` (``where``: the first one's place, e.g. ``message 12``; ``seq``: its
        publication sequence number; None, 0 or :data:`SEQUENCE_UNSUPPORTED` where the middleware gives none)."""
        self.sets.setdefault(tuple(names), [0, where])[0] += 1
        if seq and seq != SEQUENCE_UNSUPPORTED:
            last = self.seq.setdefault(tuple(names), [0, 0])
            last[1] += seq <= last[0]
            last[0] = seq

    def mixed(self, topic: str, joint: str | None) -> str | None:
        """The line saying ``joint`` on ``topic`` comes from several publishers, each name set with its count and
        first message; None when one publisher (one name set) sent them all."""
        if len(self.sets) < 2:
            return self._interleaved(topic, joint)
        each = "; ".join(f"{list(n)} in {c} message(s) (the first: {w})" for n, (c, w) in self.sets.items())
        return (
            f"topic {topic}: joint {joint!r} comes from {len(self.sets)} publishers, told apart by the joints their "
            f"messages name: {each}"
        )

    def _interleaved(self, topic: str, joint: str | None) -> str | None:
        """The line saying one name set's sequence numbers went back more than once (publishers naming the same
        joints), or None."""
        for names, (_, back) in self.seq.items():
            if back > 1:
                return (
                    f"topic {topic}: joint {joint!r} comes from several publishers naming the same joints {list(names)}"
                    f" (their publication sequence numbers went back {back} times in {self.sets[names][0]} messages)"
                )
        return None


#: how to read one publisher's joint states alone (the remap a launch or ``ros2 run`` takes)
REMAP_HINT = "stop the other publisher, or remap one: --ros-args -r joint_states:=other/joint_states"

__all__ = ["NameSets", "REMAP_HINT"]
