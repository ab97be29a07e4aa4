"""Recovery of ``servo_hardware_node`` after a bus loss and after a servo that rebooted by itself.

* After a reconnection every joint that answers holds its *fresh* reading (the joints may have moved while the bus
  was away: no snap back to the goal held before the loss); a trajectory being followed stops. A servo silent at
  the reconnection does not stop it: it is left out (its joint keeps its last value, flagged stale and ERROR in
  /diagnostics), PINGed once per ``reconnect_period`` and joins at its fresh reading when it answers.
* A servo that rebooted without a request (brown-out: RAM back at defaults) is detected by the health read: its
  indirect map reads back its default (the ID byte of the health block is not its id), or its torque is off while
  torque is wanted and no hardware error explains it (Protocol 1.0 and STS have no indirect map: their health read
  spans Torque Enable, so only the second sign applies; their set-up clears the bus's cache of the P gain sent). Its
  set-up (torque off, return delay, indirect addresses, position-limit check) is written again, it is read afresh,
  holds that reading (P gain and goal written), and only then gets torque back. /diagnostics says so (WARN for
  ``REBOOT_NOTE_S``, ``unrequested_reboots`` counted). ``<prefix>/torque_enabled`` goes false when the health read
  sees it and true once its torque is back (:mod:`servo_ff.ros.torque_state`: the brown-out itself came up to
  ``health_period`` earlier; a recording marks the stretch from the health read that saw it).
* A servo whose torque went off with an alarm / hardware-error bit set, or after one was seen since its last
  healthy torque-on health read, shut itself down (overheating, overload, …): Protocol 1.0's and STS's bits last only
  while their cause does, so once it has cooled its torque is off with no bit. So is one the bus reports in
  ``Health.shutdown`` (Protocol 1.0: Torque Enable stays 1, Torque Limit reads 0 until written; bit or none). That is
  not a reboot: its torque stays off, one ERROR line, /diagnostics ERROR, latched until the user's reboot /
  torque_enable (or activate), which write the torque limit back (``bus.clear_shutdown``; asked while the bus is
  away: when each servo is read again, :meth:`HardwareRecovery._release_asked`) (before: turned back on
  as "rebooted by itself", 0.6–0.7 s after an overheating shutdown; on 1.0 firmware not noticed at all).

A mixin of :class:`~.hardware_node.HardwareNode` (uses its bus, readings and gate).
"""

from __future__ import annotations

import time

import numpy as np

from servo_ff.bus.bus_types import BUS_OR_VALUE_FAILURES

REBOOT_NOTE_S = 10.0  # [s] the WARN after an unrequested reboot stays this long in /diagnostics


class HardwareRecovery:
    """Reconnection and unrequested-reboot handling (per-joint counters in ``unrequested_reboots``)."""

    def _init_recovery(self) -> None:
        self.unrequested_reboots = np.zeros(len(self.ids), dtype=np.int64)
        self.reboot_note: dict[int, tuple[float, str]] = {}  # joint index → (monotonic time, what happened)
        self.alarm_bits = np.zeros(len(self.ids), dtype=np.int64)  # bits seen since the last healthy torque-on read
        self.shut_down: dict[int, tuple[float, str]] = {}  # joint index → (monotonic time, why): kept torque off
        self.unpowered: set[int] = set()  # joint indices that rebooted by themselves, torque not restored yet
        self.release_asked: set[int] = set()  # joint indices whose release was asked while the bus was away

    def _release_shutdowns(self, later: bool = False) -> None:
        """The user asked for torque (torque_enable, reboot, activate, configure): the latched shutdowns go.
        ``later``: asked while the bus is away (torque_enable, activate): the servos' own alarm shutdowns (1.0:
        Torque Limit 0) are released when each is read again (:meth:`_release_asked`), not before."""
        self.shut_down.clear()
        self.alarm_bits[:] = 0
        self.unpowered.clear()  # torque is written to every servo read with the request
        self.release_asked = set(range(len(self.ids))) if later else set()

    def _release_asked(self, ids: list[int]) -> None:
        """Servos ``ids`` read again (reconnection, join) after a torque request made while the bus was away: their
        alarm shutdown released now (``bus.clear_shutdown``: 1.0 Torque Limit back), before their torque is written.
        A shutdown that came while the bus was away with no request since stays latched."""
        rows = [int(k) for k in self._rows(ids) if int(k) in self.release_asked]
        if rows:
            self.bus.clear_shutdown([self.ids[k] for k in rows])
            self.release_asked.difference_update(rows)

    def _hold_fresh(self, rows: np.ndarray, why: str) -> None:
        """The held goal of joints ``rows`` read this cycle := their reading (within the limits); a trajectory being
        followed stops (it was planned from where the joints were)."""
        rows = rows[self.valid[rows]]
        for line in self.gate.hold_readings(rows, self.pos):
            self.get_logger().warning(f"{why}: {line}")
        if self.traj is not None:
            self.traj = None
            self.get_logger().warning(f"{why}: the trajectory being followed is stopped (holding)")

    def _after_reconnect(self) -> str:
        """Hold the fresh reading of every joint read at the reconnection; the text names the silent ones."""
        rows = np.flatnonzero(self.valid & self.seen)
        moved = np.abs(self.pos[rows] - self.gate.goal[rows])
        self._hold_fresh(rows, "reconnected")
        text = f", holding the fresh reading (max {moved.max() if moved.size else 0.0:.4f} rad from the old goal)"
        silent = [self.index_of_id[i] for i in self.bus.missing if self.seen[self.index_of_id[i]]]
        if silent:
            text += (
                f"; SILENT {self.joint_text(silent)}: left out, last value held (stale), probed every "
                f"{self.table['reconnect_period']:g} s"
            )
        return text

    def _check_reboots(self, h) -> None:
        """Servos of health read ``h`` that rebooted by themselves: set-up lost, or torque off unasked."""
        lost = np.zeros(len(h.ids), dtype=bool) if h.setup_lost is None else h.setup_lost.copy()
        why = np.where(lost, "RAM at defaults (indirect map lost)", "")
        if h.torque is not None and self.torque_wanted and self.active:
            off = h.valid & (h.torque == 0) & (h.hw_error == 0) & self.seen[self._rows(h.ids)]
            off &= ~self._protective_shutdowns(h)
            why = np.where(off & ~lost, "torque off without a request", why)
            lost |= off
        if lost.any():
            self.unpowered.update(int(k) for k in self._rows(h.ids)[lost])
            self.publish_torque_state()  # false now: a brown-out is seen only here (see the module docstring)
            self._restore_rebooted([i for i, x in zip(h.ids, lost) if x], [w for w, x in zip(why, lost) if x])

    def _protective_shutdowns(self, h) -> np.ndarray:
        """Per entry of health read ``h``: torque off with an alarm bit now or seen since the last healthy torque-on
        read, or output cut by the servo's alarm shutdown (``h.shutdown``) — the servo's own shutdown, latched in
        :attr:`shut_down` (one ERROR line), never restored."""
        rows = self._rows(h.ids)
        err = h.valid & (h.hw_error > 0)
        self.alarm_bits[rows[err]] |= h.hw_error[err]
        cut = h.valid & (False if h.shutdown is None else h.shutdown)
        on = h.valid & (h.torque != 0) & ~cut
        self.alarm_bits[rows[on & (h.hw_error == 0)]] = 0  # healthy with torque on: earlier bits explain nothing
        shut = h.valid & ((h.torque == 0) & (self.alarm_bits[rows] > 0) | cut) & self.seen[rows]
        now = time.monotonic()
        for k in rows[shut]:
            if int(k) not in self.shut_down:
                bits = int(self.alarm_bits[k])
                bits = self.ct.hardware_error_text(bits) if bits else "its alarm bit already gone"
                why = f"torque off by its own protective shutdown ({bits})"
                self.shut_down[int(k)] = (now, why)
                self.get_logger().error(
                    f"{self.joint_text([k])}: {why}: kept off, not restored as a reboot; "
                    f"{self.names['reboot']} or {self.names['torque_enable']} turns it on again"
                )
        return shut | np.isin(rows, list(self.shut_down))

    def shutdown_text(self, k: int, now: float) -> str | None:
        """What /diagnostics says of joint ``k`` while its protective shutdown is latched."""
        note = self.shut_down.get(k)
        if note is None:
            return None
        return (
            f"{note[1]} {now - note[0]:.1f} s ago: torque kept off until {self.names['reboot']} or "
            f"{self.names['torque_enable']}"
        )

    def _hold_text(self) -> str:
        """Which joints ``on_exit: hold`` leaves torque on (at their held goal [rad]) and which are off and why (a
        latched protective shutdown, rebooted by itself and not restored yet, a servo not on the bus)."""
        on = [k for i in self._ready_ids() if (k := self.index_of_id[i]) not in self.unpowered]
        goals = ", ".join(f"{self.joints[k]} {self.gate.goal[k]:.4f}" for k in on)
        text = f"torque left ON for {self.joint_text(on)}, holding {goals} rad" if on else "torque ON for no joint"
        off = [k for k in range(len(self.ids)) if k not in on]
        why = {
            k: "protective shutdown latched"
            if k in self.shut_down
            else "rebooted by itself, not restored"
            if k in self.unpowered
            else "refused at set-up, left out"
            if self.ids[k] in self.refused
            else "not read: silent or missing"
            for k in off
        }
        return text + "".join(f"; OFF for {self.joint_text([k])} ({why[k]})" for k in off)

    def _restore_rebooted(self, ids: list[int], why: list[str]) -> None:
        """Set-up of ``ids`` written again, read afresh, held there (goal + P gain written), then torque on if
        wanted. A failure leaves the servo torque off; the next health read tries again."""
        rows = self._rows(ids)
        text = self.joint_text(rows)
        log = self.get_logger()
        log.warning(f"{text} rebooted by itself ({', '.join(why)}): restoring its set-up before it moves")
        try:
            self.bus.setup(ids)  # torque off, return delay, indirect addresses, limit check
            self._store(self._fresh_rows(ids))
            self._hold_fresh(rows, f"{text} rebooted by itself")
            self.bus.write_goals(*self._goal_args())  # goal = fresh reading, P gain
            self.rewrite_limits(ids)  # the velocity / effort limits commands wrote (RAM at defaults)
            if self.torque_wanted:  # not one kept off by its protective shutdown
                self.bus.torque(True, [i for i in ids if self.index_of_id[i] not in self.shut_down])
            self.unpowered.difference_update(int(k) for k in rows)  # torque as wanted again
        except BUS_OR_VALUE_FAILURES as e:
            self.throttle("reboot-restore", log.error, f"{text} rebooted: restoring its set-up failed: {e}; retrying")
            return
        now = time.monotonic()
        for k, w in zip(rows, why):
            self.reboot_note[int(k)] = (
                now,
                f"rebooted by itself ({w}); set-up restored (return delay, indirect map, P gain, limits), holding "
                f"its fresh reading {self.pos[k]:.4f} rad, torque {'on' if self.torque_wanted else 'off'}",
            )
            self.unrequested_reboots[k] += 1  # last: whoever sees the count (diagnostics, a test) finds its note
        log.warning(f"{text}: set-up restored, holding {np.round(self.pos[rows], 4).tolist()} rad")

    def _fresh_rows(self, ids: list[int]):
        """A state read with a valid reply from each of ``ids`` (``retries`` more tries); BusError otherwise."""
        want = set(ids)
        for _ in range(int(self.table["retries"]) + 1):
            state = self.bus.read_state()
            if want <= {i for i, v in zip(state.ids, state.valid) if v}:
                return state
        raise self.bus_mod.BusError(f"no valid reply from {self.joint_text(self._rows(ids))} after its set-up")

    def reboot_text(self, k: int, now: float) -> str | None:
        """What /diagnostics says of joint ``k`` for ``REBOOT_NOTE_S`` after an unrequested reboot."""
        note = self.reboot_note.get(k)
        return None if note is None or now - note[0] > REBOOT_NOTE_S else f"{note[1]} ({now - note[0]:.1f} s ago)"
