"""Two publishers of one joint on a JointState topic, told apart by the joints their messages name: a servo node's
``['pendulum_1']`` beside a mock joint_state_broadcaster's ``['pendulum_2', 'pendulum_1']`` (position = goal). Their
rows mixed are no one servo's motion (a bag's fitted α̂0 5.77 for 13.31), so a replay (:mod:`.rosbag_streams`) and
the fit node's live topics (:mod:`servo_ff.nodes.fit_live`) refuse them by this one rule. A bag does not record
which publisher sent a message, so the name set is what both can tell them by (two publishers naming the same
joints are not told apart)."""

from __future__ import annotations


class NameSets:
    """The name sets of the messages naming one joint: names → [count, where the first one is]."""

    def __init__(self) -> None:
        self.sets: dict[tuple[str, ...], list] = {}

    def add(self, names: tuple[str, ...] | list[str], where: str) -> None:
        """One message naming ``names`` (``where``: the first one's place, e.g. ``message 12``)."""
        self.sets.setdefault(tuple(names), [0, where])[0] += 1

    def mixed(self, topic: str, joint: str | None) -> str | None:
        """The line saying ``joint`` on ``topic`` comes from several publishers, each name set with its count and
        first message; None when one publisher (one name set) sent them all."""
        if len(self.sets) < 2:
            return None
        each = "; ".join(f"{list(n)} in {c} message(s) (the first: {w})" for n, (c, w) in self.sets.items())
        return (
            f"topic {topic}: joint {joint!r} comes from {len(self.sets)} publishers, told apart by the joints their "
            f"messages name: {each}"
        )


#: how to read one publisher's joint states alone (the remap a launch or ``ros2 run`` takes)
REMAP_HINT = "stop the other publisher, or remap one: --ros-args -r joint_states:=other/joint_states"

__all__ = ["NameSets", "REMAP_HINT"]
