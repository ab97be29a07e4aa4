"""The readings of ``servo_hardware_node`` per joint, and the servos missing at configure (``missing_ids``).

A joint is *seen* once a valid reply gave its position since configure; until then /joint_states carries NaN for
it (as a ros2_control state interface starts), no goal is written to it and goals naming it are refused. Its
first valid reading becomes its held goal, so it joins where it stands. A servo missing at configure
(``missing_ids: continue``) is left out of the bus's reads and writes and PINGed once per ``reconnect_period``
(round robin); once it answers it is set up (torque off, …), read, and, if torque is on, torque on at its reading.
A servo whose set-up refuses its own configuration (an Operating Mode that ignores Goal Position, a Min/Max Position
Limit narrower than its joint limits: the user's EEPROM items, never written) fails configure under
``missing_ids: fail``; under ``continue`` it is left out as a missing one, torque off, never probed (nothing changes
it until the user does: configure again), one warning naming it and why, ERROR in /diagnostics.
A mixin of :class:`~.hardware_node.HardwareNode`.
"""

from __future__ import annotations

import math
import time

import numpy as np
from rclpy.time import Time

from servo_ff.bus.bus_types import BUS_OR_VALUE_FAILURES, GoalRejected


class HardwareReadings:
    """Per-joint readings (``pos``, ``vel``, ``eff`` in ``joints`` order) from the bus's per-id states."""

    def _drop_old_time(self) -> str:
        """The clock jumped back (:mod:`servo_ff.ros.clock_jump`): besides the servo node's drops, the supply
        readings go — stamped in the old time, ``servo_supply`` would carry them into the new clock's future until
        the next health read; none is published as present until then."""
        said = super()._drop_old_time()
        if not np.isfinite(self.voltage).any():
            return said
        self.voltage[:] = np.nan
        self.voltage_at[:] = np.nan
        what = "the supply readings (servo_supply waits for the next health read)"
        return f"{said}, {what}" if said else f"dropped {what}"

    def _init_readings(self) -> None:
        n = len(self.ids)
        self.index_of_id = {i: k for k, i in enumerate(self.ids)}
        self._rows_cache: dict[tuple[int, ...], np.ndarray] = {}
        self.pos = np.full(n, np.nan)
        self.vel = np.full(n, np.nan)
        self.eff = np.full(n, np.nan)
        self.valid = np.zeros(n, dtype=bool)  # a valid reply in the last read
        self.seen = np.zeros(n, dtype=bool)  # a valid reply since configure
        self.last_reply = np.full(n, -np.inf)
        self.effort_known = True  # the servo's reading gives effort (:meth:`_say_effort_unknown`, at configure)
        self._read_ns = 0  # [ns, node clock] when the last state read ended
        self._next_join = 0.0
        self._join_turn = 0
        self.refused: dict[int, str] = {}  # id → why its set-up refused it (left out under missing_ids: continue)

    def _forget_readings(self) -> None:
        """Configure starts from nothing: every joint NaN until its first valid reply."""
        self.pos[:] = self.vel[:] = self.eff[:] = np.nan
        self.valid[:] = self.seen[:] = False
        self.last_reply[:] = -np.inf
        self.refused = {}

    def _leaves_out(self) -> bool:
        """A servo refused at set-up is left out (``missing_ids: continue``) rather than failing configure."""
        return self.table["missing_ids"] == "continue"

    def _set_up(self, bus) -> None:
        """``bus.setup``; a servo refused for its own configuration fails it with the way out said (``fail``), or
        is left out (``continue``): :meth:`_refused`."""
        try:
            bus.setup(leave_out=self._leaves_out())
        except GoalRejected as e:
            raise GoalRejected(f"{e}; missing_ids=fail (missing_ids:=continue starts without it)") from None
        self.refused = {}
        for i, why in bus.refused.items():
            self._refused(i, why)

    def _refused(self, i: int, why: str) -> None:
        """Servo ``i`` left out at set-up (``why``): one warning; NaN in joint_states, goals naming it refused."""
        self.refused[i] = why
        k = self.index_of_id[i]
        self.seen[k] = self.valid[k] = False
        self.pos[k] = self.vel[k] = self.eff[k] = np.nan
        self.get_logger().warning(
            f"{why}: left out (missing_ids=continue): torque off, never driven, NaN in joint_states, goals naming "
            "it refused; configure again once it is set"
        )

    def _left_out_text(self, missing) -> str:
        """What the configure line says of the servos missing and refused (none: "")."""
        text = ""
        if missing:
            text += (
                f"; MISSING {self.joint_text(self._rows(missing))} (missing_ids=continue: NaN in joint_states, "
                f"goals naming them refused, probed every {self.table['reconnect_period']:g} s)"
            )
        if self.refused:
            text += f"; REFUSED at set-up {self.joint_text(self._rows(self.refused))} (left out, torque off)"
        return text

    def _rows(self, ids) -> np.ndarray:
        """Joint indices of bus ids ``ids``."""
        ids = tuple(ids)
        rows = self._rows_cache.get(ids)
        if rows is None:
            rows = self._rows_cache[ids] = np.array([self.index_of_id[i] for i in ids], dtype=np.intp)
        return rows

    def joint_text(self, ks) -> str:
        """``joint 'knee' (id 2)``, one per index in ``ks``."""
        return ", ".join(f"joint {self.joints[k]!r} (id {self.ids[k]})" for k in ks)

    def _store(self, state) -> np.ndarray:
        """A bus state into the readings; a joint's first valid reading becomes its held goal (within the limits).
        Returns the indices of the joints seen for the first time."""
        k = self._rows(state.ids)
        ok = state.valid
        kk = k[ok]
        self.valid[:] = False
        self.valid[kk] = True
        self.pos[kk], self.vel[kk], self.eff[kk] = state.position[ok], state.velocity[ok], state.effort[ok]
        self.last_reply[kk] = state.stamp if state.stamps is None else state.stamps[ok]  # when each reply arrived
        # the time /joint_states carries, on the node clock (not the goal write and health read after the read)
        lag_ns = int((time.monotonic() - state.stamp) * 1e9)  # µs: the read returned just now
        self._read_ns = max(0, self.get_clock().now().nanoseconds - lag_ns)  # (sim time near 0: never negative)
        new = kk[~self.seen[kk]]
        if new.size:
            self.seen[new] = True
            for line in self.gate.hold_readings(new, self.pos):
                self.get_logger().warning(line)
        return new

    def _fresh_state(self, bus):
        """A read with a valid reply from every active servo (``retries`` more tries); BusError naming the ones
        that never answered."""
        for _ in range(int(self.table["retries"]) + 1):
            state = bus.read_state()
            if state.valid.all():
                return state
        silent = self._rows(np.asarray(state.ids)[~state.valid])
        raise self.bus_mod.BusError(f"no valid reply from {self.joint_text(silent)}")

    def _goal_args(self):
        """(goals, P gain registers) of the active servos whose position was read: arrays in bus order, or
        {id: value} when some are not read yet (never a goal for a joint without a reading)."""
        ids = self.bus.ids
        k = self._rows(ids)
        reg = self.ct.kp_to_p_gain(self.kp, self.bus.table)
        ready = self.seen[k]
        if ready.all():
            return self.gate.goal[k], reg[k]
        use = [(i, j) for i, j, r in zip(ids, k, ready) if r]
        return {i: float(self.gate.goal[j]) for i, j in use}, {i: int(reg[j]) for i, j in use}

    def _ready_ids(self) -> list[int]:
        """Servos torque may go on for: read since configure, not kept off by a protective shutdown."""
        return [i for i in self.bus.ids if self.seen[k := self.index_of_id[i]] and k not in self.shut_down]

    def hw_seen(self) -> np.ndarray:
        return self.seen

    def hw_effort_known(self) -> bool:
        return self.effort_known

    def _say_effort_unknown(self) -> None:
        """At configure, from the first reading: a servo whose reading gives no effort (its control table has no
        torque constant kt for Present Current, no kt and R for a duty Present Load, no stall torque for a load) is
        said in one warning, and
        /joint_states carries effort NaN for it (freshness is the reading's: before, nothing was published)."""
        read = self.seen & np.isfinite(self.pos)
        self.effort_known = not np.isnan(self.eff[read]).any()
        if self.effort_known:
            return
        table = self.bus.table
        if table.load_is_duty:
            why = "no motor model kt, R (effort = kt·(duty·V_in − kt·θ̇)/R from Present Load, the drive duty)"
        elif table.has_current:
            why = "no torque constant kt (effort = kt·Present Current)"
        else:
            why = "no stall torque (effort = Present Load × stall torque)"
        self.get_logger().warning(
            f"effort is not known for servo {self.table['servo']} ({table.name}): its control table has {why}; "
            f"/joint_states carries effort NaN for joints {[self.joints[k] for k in np.flatnonzero(read)]}"
        )

    def hw_absent(self) -> dict[str, str]:
        if self.seen.all():
            return {}
        out = {self.joints[k]: self.joint_text([k]) for k in np.flatnonzero(~self.seen)}
        for i in self.refused:
            out[self.joints[self.index_of_id[i]]] += " (refused at set-up: left out)"
        return out

    def _joined(self, new: np.ndarray) -> None:
        """Joints read for the first time while the loop runs: they hold their reading; torque on if it is on."""
        text = self.joint_text(new)
        if self.traj is not None:
            self.traj = None
            self.get_logger().warning(f"{text} joined: the trajectory being followed is stopped (holding)")
        ids = [self.ids[k] for k in new]
        self.rewrite_limits(ids)  # the velocity / effort limits commands wrote while it was away
        self._release_asked(ids)  # a torque request made while it was away (1.0: Torque Limit back)
        latched = [self.ids[k] for k in new if int(k) in self.shut_down]  # a protective shutdown stays off
        if self.torque_wanted and len(latched) < len(ids):
            self.bus.write_goals(*self._goal_args())
            self.bus.torque(True, [i for i in ids if i not in latched])
        torque = "on" if self.torque_wanted else "off"
        torque = f"{torque}; ids {latched} kept off (protective shutdown)" if latched and self.torque_wanted else torque
        self.get_logger().warning(
            f"{text} answers: joined at {np.round(self.pos[new], 4).tolist()} rad, torque {torque}"
        )

    def _probe_missing(self) -> None:
        """PING one servo missing since configure, once per ``reconnect_period``; an answer sets it up, and it
        joins at its first valid reading."""
        missing = self.bus.missing
        now = time.monotonic()
        if not missing or now < self._next_join:
            return
        self._next_join = now + self.table["reconnect_period"]
        i = missing[self._join_turn % len(missing)]
        self._join_turn += 1
        try:
            if self.bus.join(i, self._leaves_out()):  # (re)joins at its next valid reading, as if never read
                self.seen[self.index_of_id[i]] = False
                self.get_logger().info(f"{self.joint_text([self.index_of_id[i]])} answers: set up, torque off")
            elif i in self.bus.refused:
                self._refused(i, self.bus.refused[i])
        except BUS_OR_VALUE_FAILURES as e:  # GoalRejected is a ValueError
            self.throttle(
                f"join:{i}",
                self.get_logger().error,
                f"{self.joint_text([self.index_of_id[i]])} answers but its setup failed: {e}; retrying",
            )

    # ------------------------------------------------------------------ what the servo interface reads
    def hw_read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.pos, self.vel, self.eff

    def hw_stamp(self):
        """The time of the last state read on the node's clock (the goal write and health read after it excluded)."""
        return Time(nanoseconds=self._read_ns).to_msg()

    def hw_states_refusal(self) -> str:
        lost = f"the bus {self.table['port']} is lost ({self.disconnect_reason}); reconnecting"
        return "" if self.connected else lost

    def hw_state_interfaces(self) -> dict[str, np.ndarray]:
        return {"temperature": self.temperature, "voltage": self.voltage}  # °C, V (every health_period)

    def hw_fresh(self) -> np.ndarray:
        return self.valid.copy()  # a valid reply in the last cycle

    def hw_stale(self) -> np.ndarray | None:
        """Joints read since configure without a valid reply in the last cycle (None: none): /joint_states gives
        them their last position and NaN velocity / effort."""
        return None if self.valid.all() else self.seen & ~self.valid

    def hw_silent_too_long(self, among: np.ndarray | None = None) -> str:
        """The joints (of ``among``, (J,) bool; None: all) without a valid reply for more than ``max_reply_age``
        [s, wall time] (their diagnostics' ERROR), said ("": none)."""
        stale = self.hw_stale()
        if stale is None:
            return ""
        age = time.monotonic() - self.last_reply
        ks = np.flatnonzero(stale & (age > self.table["max_reply_age"]) & (True if among is None else among))
        if not ks.size:
            return ""
        return (
            f"{self.joint_text(ks)} silent for {age[ks].max():.2f} s (max_reply_age "
            f"{self.table['max_reply_age']:g} s): its position is not known"
        )

    def hw_supply_voltage(self) -> float:
        ok = np.isfinite(self.voltage)
        return float(self.voltage[ok].mean()) if self.connected and ok.any() else math.nan

    def hw_supply_stamp(self):  # the oldest reading in that mean: servo_supply is republished between health reads
        ok = np.isfinite(self.voltage)
        return Time(nanoseconds=int(self.voltage_at[ok].min() * 1e9)).to_msg() if self.connected and ok.any() else None
