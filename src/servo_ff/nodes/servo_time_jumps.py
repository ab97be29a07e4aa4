"""What a servo interface node (:mod:`.servo_base`) drops when its clock jumps (:mod:`servo_ff.ros.clock_jump`):
back, or forward by more than its loop takes as time passing. A mixin of
:class:`~.servo_base.ServoInterfaceNode` (its trajectory, follow_joint_trajectory action and ``_jump`` handle)."""

from __future__ import annotations

from collections.abc import Callable

from servo_ff.ros.clock_jump import FORWARD_JUMP, on_clock_jump_back


class ServoTimeJumps:
    """The clock jump watch of a servo node: the trajectory being followed dropped, the goal kept."""

    def forward_jump_bound(self) -> float | None:
        """[s] The largest step of the node clock its loop takes as time passing: a larger one is a jump forward
        (:meth:`_drop_ahead`); None: no step is."""
        return FORWARD_JUMP

    def _watch_clock(self) -> None:
        """(Re)register the clock jump callback with the present :meth:`forward_jump_bound`."""
        if self._jump is not None:
            self._jump.unregister()
        self._jump = on_clock_jump_back(self, self._drop_old_time, self.forward_jump_bound(), self._drop_ahead)

    def _drop_ahead(self, how: str) -> str:
        """The clock jumped forward (``how``): the trajectory goes as on a jump back (sampled after the jump, the goal
        went to its end point in one tick)."""
        return self._drop_trajectory(lambda: self.fjt.stopped(f"{how}; its trajectory is not followed across it"))

    def _drop_old_time(self) -> str:
        """The clock jumped back: the trajectory being followed goes (sampled before its start, the spline gives its
        first point: the goal would snap back to where it started)."""
        return self._drop_trajectory(lambda: self.fjt.clock_jumped())

    def _drop_trajectory(self, abort: Callable[[], None]) -> str:
        """The trajectory being followed goes, the goal stays at its last sample; a follow_joint_trajectory goal in
        progress (also one past its end, judged on its goal tolerance) is aborted by ``abort()``. What went."""
        following = self.traj is not None
        dropped = ["the trajectory being followed (the goal stays at its last sample)"] if following else []
        self.traj = None
        if self.fjt is not None and self.fjt.run is not None:
            abort()
            dropped.append("the follow_joint_trajectory goal (aborted)")
        return f"dropped {' and '.join(dropped)}" if dropped else ""
