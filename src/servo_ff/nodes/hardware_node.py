"""``servo_hardware_node``: the servo interface of :mod:`.servo_base` on a Dynamixel Protocol 2.0 bus
(:class:`servo_ff.bus.dynamixel.bus.DynamixelBus`, dynamixel-sdk).

Each tick is one bus cycle: one sync read (present current, velocity, position) and one sync write (P gain +
goal position through indirect addresses). Every ``health_period`` one more sync read gives input voltage,
temperature and Hardware Error Status. ``/diagnostics`` has one status per servo: temperature, hardware-error
bits, communication errors and the age of its last valid reply. ``/joint_states`` carries every configured
joint in every message: a servo without a valid reply this cycle keeps its last value and is flagged stale
(with its age) in ``/diagnostics``, never dropped; NaN only for a joint not read since configure (a servo
missing at configure under ``missing_ids: continue``, :mod:`.hardware_readings`). The stamp is the state read's
time. A cycle no servo answers publishes no ``/joint_states``. When the port fails (unplugged adapter, no servo
answering for ``stale_cycles`` cycles) the node publishes none (before: every last value under fresh stamps),
aborts a follow_joint_trajectory goal and rejects new ones, keeps publishing ERROR diagnostics and reconnects
every ``reconnect_period`` seconds (a servo still silent then is left out and probed); after
reconnection each joint holds its fresh reading and the torque state is restored. A servo that rebooted by itself
is set up again before it moves (:mod:`.hardware_recovery`).

Managed (lifecycle, :mod:`.servo_base`): configure opens the port, scans the ids, sets the servos up (torque
off, return delay, indirect addresses), reads a full state and holds it (goal written, torque off); inactive,
the loop reads and publishes without writing goals; activate reads afresh, writes that reading as the goal and
turns torque on (a joint that fell with torque off is held where it is now); deactivate holds the present
position, then turns torque off; cleanup / shutdown close the port. ``on_exit`` (SIGINT, process exit,
destroy): ``hold`` leaves torque on at the held goal, ``torque_off`` holds the present position and turns
torque off. The constructor never touches the bus. With ``autostart`` (default) configure is retried every
``reconnect_period`` until the bus answers, then the node activates.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus

from servo_ff.bus import bus_types
from servo_ff.bus import control_table as ct
from servo_ff.bus.bus_interface import make_bus
from servo_ff.bus.bus_types import BUS_FAILURES, BUS_OR_VALUE_FAILURES
from servo_ff.models.thermal import TemperatureTrend
from servo_ff.ros.common import ParameterTable, per_joint, spin_node
from servo_ff.ros.servo_diagnostics import servo_diagnostics

from .hardware_commands import HardwareCommands
from .hardware_params import hardware_refusal, parameter_specs
from .hardware_readings import HardwareReadings
from .hardware_recovery import HardwareRecovery
from .servo_base import ServoInterfaceNode, validate_interface
from .servo_ranges import default_kp_of_servo, default_limits_from_table, servo_table


class HardwareNode(HardwareCommands, HardwareReadings, HardwareRecovery, ServoInterfaceNode):
    status_name = "dynamixel"
    reads_while_inactive = True  # inactive = torque off, still read and published (as joint_state_broadcaster)

    def __init__(self, name: str = "servo_hardware", **kwargs: Any):
        super().__init__(name, **kwargs)
        self.bus_mod, self.ct = bus_types, ct
        table = ParameterTable(self, parameter_specs(), validate=self._validate, apply=self._apply)
        v = table.values
        self.ids = [int(i) for i in v["ids"]]
        self.bus = None
        self.connected = False
        self.disconnect_reason = "not connected yet"
        self.torque_wanted = False  # torque comes on with the lifecycle transition activate
        self.failed_cycles = 0
        self.reconnects = 0
        self._prev_failures: dict[int, int] = {}
        self._last_attempt = -math.inf
        self._last_health = -math.inf  # [s] monotonic start of the last health read (schedules the next)
        self.health_reads = 0  # health reads completed (counted once their readings are stored)
        self._exit_done = False
        n = len(self.ids)
        self._init_readings()
        self._init_recovery()
        self.temperature = np.full(n, np.nan)
        self.temperature_trend = TemperatureTrend(n, table["thermal_time_constant"])  # time to temperature_limit
        self.voltage = np.full(n, np.nan)
        self.voltage_at = np.full(n, np.nan)  # [s, node clock] of each servo's voltage reading
        self.hw_error = np.full(n, -1, dtype=np.int64)
        self.limits_written: dict[tuple[str, str], int] = {}  # (joint, item) → raw: the last velocity/effort limit
        self.limits_clamped: set[str] = set()  # joints whose effort limit was clamped to full scale (warned once)
        self._setup_interface(table)
        default_limits_from_table(self, servo_table(self.table["servo"], required=True))
        default_kp_of_servo(self, self.table["servo"])
        self._built = True

    # ------------------------------------------------------------------ parameters
    def _validate(self, values: dict[str, Any]) -> str | None:
        """The interface's checks, then the bus's (:func:`.hardware_params.hardware_refusal`); the joint limits
        against the servo's range once the node is built (declared, the interface's ±π is wider than a 4096-count
        servo's: :func:`.servo_ranges.default_limits_from_table` replaces what was not given; given, configure
        refuses it once: :meth:`config_refusal`)."""
        built = getattr(self, "_built", False)  # the last bus opened: its servos' ranges, during an outage too
        return validate_interface(values) or hardware_refusal(values, getattr(self, "_limits_bus", None), built)

    def config_refusal(self) -> str:
        return hardware_refusal(self.table.values) or ""  # the limits given against the servo type's range

    def _apply(self, changed: set[str]) -> None:
        if changed & {"position_min", "position_max"} and self.bus is not None:  # before the gate moves the goal
            self.bus.set_joint_limits(self._config().joint_limits)  # checked by _validate: the goals of the cycle
        self._apply_interface(changed)

    # ------------------------------------------------------------------ connection
    def _config(self):
        v = self.table.values
        lo = per_joint(v["position_min"], self.n, "position_min")
        hi = per_joint(v["position_max"], self.n, "position_max")
        return self.bus_mod.BusConfig(
            port=v["port"],
            ids=self.ids,
            baud=int(v["baud"]),
            model=v["servo"],
            protocol=v["protocol"],
            joint_limits={i: (float(lo[k]), float(hi[k])) for k, i in enumerate(self.ids)},
            latency_timer_ms=float(v["latency_timer_ms"]),
            timeout_ms=float(v["timeout_ms"]) or None,
            retries=int(v["retries"]),
            p_gain=True,
            return_delay=None if v["return_delay"] < 0 else v["return_delay"],
            names=dict(zip(self.ids, self.joints)),
        )

    def _open(self, reconnect: bool = False) -> tuple[bool, str]:
        """Open the port, scan the ids, set the servos up (torque off) and read a complete first state of those
        that answer; an id missing fails unless ``missing_ids`` is ``continue`` or this is a ``reconnect`` (a servo
        silent then is left out and probed: :mod:`.hardware_recovery`)."""
        self._last_attempt = time.monotonic()
        bus = None
        try:
            bus = make_bus(self._config()).open()
            found, missing = bus.connect()
            if missing and self.table["missing_ids"] == "fail" and not reconnect:
                raise self.bus_mod.BusError(
                    f"{self.joint_text(self._rows(missing))} not answering (found ids {found}); missing_ids=fail "
                    "(missing_ids:=continue starts without them)"
                )
            self._set_up(bus)  # torque off, return delay, indirect addresses; mode and range checked
            state = self._fresh_state(bus)
        except BUS_OR_VALUE_FAILURES as e:
            if bus is not None:
                bus.close()
            self.disconnect_reason = f"connect to {self.table['port']} failed: {e}"
            return False, self.disconnect_reason
        self.bus = self._limits_bus = bus
        self._store(state)
        self.failed_cycles = 0  # (connected: set by the caller once its own writes are done)
        text = f"connected to {self.table['port']}: ids {self.ids} as {self.joints}"
        return True, text + self._left_out_text(missing)

    def _write_goal_and_torque(self) -> None:
        self.bus.write_goals(*self._goal_args())
        self.bus.torque(self.torque_wanted, self._ready_ids() if self.torque_wanted else None)

    def _try_reconnect(self) -> None:
        if time.monotonic() - self._last_attempt < self.table["reconnect_period"]:
            return
        ok, msg = self._open(reconnect=True)
        if not ok:
            self.throttle(
                "connect", self.get_logger().error, f"{msg}; retrying every {self.table['reconnect_period']:g} s"
            )
            return
        held = self._after_reconnect()  # the joints may have moved while the bus was away: hold where they are
        try:  # the fresh reading is the held goal; the torque state and the velocity / effort limits come back
            self._release_asked(self._ready_ids())  # a torque request made while away (1.0: Torque Limit back)
            self._write_goal_and_torque()
            self.rewrite_limits()
        except BUS_OR_VALUE_FAILURES as e:
            self._disconnect(f"setup write failed: {e}")
            return
        self.connected = True  # last: a reader that sees it connected sees the hold, the torque and the limits
        self.get_logger().info(
            f"reconnected to {self.table['port']} (ids {self.ids}), torque {'on' if self.torque_wanted else 'off'}"
            + held
        )

    # ------------------------------------------------------------------ lifecycle hooks
    def autostart_retry_period(self) -> float:
        return float(self.table["reconnect_period"])

    def hw_configure(self) -> tuple[bool, str]:
        self._forget_readings()
        self._release_shutdowns()
        self.torque_wanted = False
        ok, msg = self._open()
        if ok:  # the fresh reading is the held goal (written, torque stays off)
            self._say_effort_unknown()
            try:
                self.bus.write_goals(*self._goal_args())
            except BUS_OR_VALUE_FAILURES as e:
                self._disconnect(f"goal write failed: {e}")
                return False, f"holding the first reading failed: {e}"
            self.connected = True
            return True, msg + f", holding {self.gate.goal.round(4).tolist()} rad, torque off"
        return False, f"{msg} (autostart retries every {self.table['reconnect_period']:g} s)" if self.table[
            "autostart"
        ] else msg

    def hw_refresh(self) -> tuple[bool, str]:
        """A fresh reading of every servo that answers (before activate holds it): a joint that moved while
        torque was off is held where it is now, not where it was read before."""
        if not self.connected:
            return True, "bus not connected"
        try:
            self._store(self._fresh_state(self.bus))
        except BUS_FAILURES as e:
            return False, f"no fresh reading before torque on: {e}"
        return True, "read"

    def hw_activate(self) -> tuple[bool, str]:
        self.torque_wanted = True
        self._release_shutdowns(later=not self.connected)
        if not self.connected:
            return True, f"bus not connected ({self.disconnect_reason}); torque on after reconnection"
        try:  # never jump: the held goal (present position) is written before torque on
            self.bus.clear_shutdown(self._ready_ids())  # the user's request (1.0: torque limit back)
            self._write_goal_and_torque()
        except BUS_OR_VALUE_FAILURES as e:  # inactive again: off on the servos it came on for (before: left on)
            self.torque_wanted = False
            try:
                self._write_goal_and_torque()
            except BUS_OR_VALUE_FAILURES as off:
                return False, f"torque on failed: {e}; torque off again FAILED ({off}): a servo may hold torque"
            return False, f"torque on failed: {e}; torque off again on ids {self._ready_ids()}"
        return True, f"torque on at {self.gate.goal.round(4).tolist()} rad on ids {self._ready_ids()}"

    def hw_deactivate(self) -> tuple[bool, str]:
        self.torque_wanted = False
        if not self.connected:
            return True, f"bus not connected ({self.disconnect_reason}); torque off after reconnection"
        error = None
        for _ in range(3):  # hold the present position, then release: worth more than one try
            try:
                self._write_goal_and_torque()
                error = None
                break
            except BUS_OR_VALUE_FAILURES as e:
                error = e
        if error is not None:
            self._disconnect(f"torque off failed: {error}")
            return True, f"torque off FAILED ({error}); bus closed, reconnecting turns torque off"
        return True, f"held {self.gate.goal.round(4).tolist()} rad, then torque off on ids {self.bus.ids}"

    def hw_cleanup(self) -> None:
        if self.bus is not None:
            try:
                self.bus.close()
            except BUS_FAILURES:
                pass
        self.bus = None
        self.valid[:] = False
        self.torque_wanted = False
        self.disconnect_reason = "port closed (lifecycle cleanup)"
        self.connected = False  # after what a reader of a lost bus reads
        self.temperature[:], self.voltage[:], self.voltage_at[:], self.hw_error[:] = np.nan, np.nan, np.nan, -1
        self.temperature_trend = TemperatureTrend(len(self.ids), self.table["thermal_time_constant"])  # no old trend

    def destroy_node(self) -> None:
        self.apply_exit_policy()
        super().destroy_node()

    def apply_exit_policy(self) -> None:
        """``on_exit`` at SIGINT / process exit / destroy (once): ``hold`` leaves torque on at the held goal,
        ``torque_off`` holds the present position, then turns torque off."""
        if self._exit_done or not (self.connected and self.torque_wanted):
            self._exit_done = True
            return
        self._exit_done = True
        policy = self.table["on_exit"]
        log = self.get_logger()
        if policy == "hold":
            log.warning(f"exit with on_exit=hold: {self._hold_text()}")
            return
        self._stop_loop()
        try:
            self._store(self.bus.read_state())
            for line in self.gate.hold_readings(np.flatnonzero(self.valid), self.pos):
                log.warning(f"exit: {line}")
            self.torque_wanted = False
            self._write_goal_and_torque()
        except BUS_OR_VALUE_FAILURES as e:
            log.error(f"exit with on_exit=torque_off: torque off FAILED: {e}")
            return
        log.info(f"exit with on_exit=torque_off: held {self.gate.goal.round(4).tolist()} rad, then torque off")

    def _disconnect(self, reason: str) -> None:
        self.get_logger().error(
            f"Dynamixel bus {self.table['port']} lost: {reason}; reconnecting every "
            f"{self.table['reconnect_period']:g} s"
        )
        self.disconnect_reason = reason
        self.states_lost(f"the bus {self.table['port']} was lost ({reason})")
        self.valid[:] = False
        self.connected = False  # after the reason and the readings marked invalid: what a reader of it reads
        self.reconnects += 1
        if self.bus is not None:
            try:
                self.bus.close()
            except BUS_FAILURES:
                pass
        self.bus = None
        self._last_attempt = time.monotonic()

    # ------------------------------------------------------------------ hooks
    def hw_tick(self) -> bool:
        """One bus cycle (inactive: a read only, no goal written). True when a servo answered this cycle: a servo
        without a fresh reply keeps its last value (flagged stale in the diagnostics), one never read is NaN, so
        /joint_states carries every joint. False (nothing published) while the bus is lost and for a cycle no
        servo answered: repeating every last value under a new stamp would report stale data as fresh."""
        if not self.connected:
            self._try_reconnect()
            return False
        state = None
        try:
            state = self._cycle() if self.active else self.bus.read_state()
            new = self._store(state)
            if new.size:
                self._joined(new)
            self._probe_missing()
        except ValueError as e:  # GoalRejected or a P gain refused: a joining servo's (the gate checks the same)
            self._goal_refused(e)
        except BUS_FAILURES as e:
            self._disconnect(str(e))
            return False
        if state is None or not state.valid.any():
            self.failed_cycles += 1
            if self.failed_cycles >= self.table["stale_cycles"]:
                self._disconnect(f"no servo answered for {self.failed_cycles} cycles")
            return False
        self.failed_cycles = 0
        if time.monotonic() - self._last_health >= self.table["health_period"]:
            self._read_health()
        return True

    def _cycle(self):
        """The state read, then the held goal written; a goal or P gain the bus refuses (GoalRejected, ValueError:
        the gate and the kp check refuse the same, so should not happen) is said, never raised out of the executor,
        and the state is read all the same (never a stale reading as fresh)."""
        try:
            return self.bus.cycle(*self._goal_args())
        except ValueError as e:
            self._goal_refused(e)
            return self.bus.read_state()

    def _goal_refused(self, e: Exception) -> None:
        self.throttle("goal", self.get_logger().error, f"bus refused the held goal or P gain, none written: {e}")

    def _read_health(self) -> None:
        self._last_health = time.monotonic()
        try:
            h = self.bus.read_health()
        except BUS_FAILURES as e:
            self._disconnect(str(e))
            return
        ok = h.valid
        k = self._rows(h.ids)[ok]
        self.voltage[k], self.temperature[k], self.hw_error[k] = h.voltage[ok], h.temperature[ok], h.hw_error[ok]
        self.voltage_at[k] = self.now_s()
        self._check_reboots(h)
        fresh = np.full(len(self.ids), np.nan)  # this read's temperatures, per joint (NaN: no valid reply)
        fresh[k] = h.temperature[ok]
        self.temperature_trend.add(time.monotonic(), fresh)
        self.health_reads += 1

    def hw_write_goal(self, goal: np.ndarray) -> None:
        pass  # written by the next cycle (one sync write per cycle)

    def hw_write_kp(self, kp: np.ndarray) -> None:
        pass  # written with the goals by the next cycle

    def hw_diagnostics(self) -> list[DiagnosticStatus]:
        return servo_diagnostics(self)


def main(args: list[str] | None = None) -> int:
    return spin_node(HardwareNode, args)


if __name__ == "__main__":
    import sys

    sys.exit(main())
