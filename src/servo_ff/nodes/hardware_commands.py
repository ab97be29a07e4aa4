"""Commands of ``servo_hardware_node`` that go to the bus at once rather than with the next cycle: torque enable
(the held goal written first), reboot (set-up written again, goal = present position, torque off) and the
velocity / effort limits of a JointState command (each servo's limit register,
:mod:`servo_ff.bus.command_limits`).

A mixin of :class:`~.hardware_node.HardwareNode` (uses its bus, readings and gate).
"""

from __future__ import annotations

import time

import numpy as np

from servo_ff.bus.bus_types import BUS_FAILURES, BUS_OR_VALUE_FAILURES


class HardwareCommands:
    """Torque, reboot and command limits on the bus (refused with the reason while it is disconnected)."""

    def hw_torque_is_on(self) -> bool:
        """Wanted, and on everywhere: torque on after a protective shutdown holds the joints where they stand."""
        return self.torque_wanted and not self.shut_down

    def hw_torque_off(self) -> np.ndarray:
        """Per joint: torque asked off, or its servo kept off by a protective shutdown (goals naming it refused)."""
        off = np.full(len(self.ids), not self.torque_wanted)
        off[list(self.shut_down)] = True
        return off

    def hw_torque_all_on(self) -> bool:
        """Torque on everywhere, no servo rebooted by itself with its torque not restored yet, the bus connected (a
        lost bus reads nothing: its torque is not known on, and a consumer must read the pose again after it)."""
        return bool(self.configured and self.connected and self.hw_torque_is_on() and not self.unpowered)

    def hw_torque(self, enable: bool) -> tuple[bool, str]:
        if not self.configured:  # no port: no reconnection comes either (before: "applied after reconnection")
            return False, self.not_connected()
        before, self.torque_wanted = self.torque_wanted, bool(enable)
        if enable:  # the user's request: the protective shutdowns kept off until now come on too
            self._release_shutdowns(later=not self.connected)
        if not self.connected:
            return (
                False,
                f"bus not connected ({self.disconnect_reason}); torque {'on' if enable else 'off'} "
                f"will be applied after reconnection",
            )
        try:
            if enable:  # never jump: write the held goal first
                self.bus.write_goals(*self._goal_args())
        except BUS_OR_VALUE_FAILURES as e:
            self.torque_wanted = before  # no torque write went out: torque is as it was
            return False, f"torque enable failed before any torque write: {e}"
        try:  # written servo by servo: a failure may come after some switched, so what was asked stays wanted
            if enable:  # the user's request releases a servo's own alarm shutdown (1.0: its torque limit back)
                self.bus.clear_shutdown(self._ready_ids())
            self.bus.torque(enable, self._ready_ids() if enable else None)  # (exit policy, reboot checks)
        except BUS_OR_VALUE_FAILURES as e:
            return False, f"torque {'enable' if enable else 'disable'} failed (perhaps part-way): {e}"
        ids = self._ready_ids() if enable else self.bus.ids  # a servo left out is never switched
        return True, f"torque {'enabled' if enable else 'disabled'} on ids {ids}"

    def hw_reboot(self) -> tuple[bool, str]:
        """REBOOT every servo on the bus, once each answers a ping: one silent (skipped, or no reply to its ping) is
        named and nothing is rebooted (before: the servos before it rebooted with torque off and fell, its timeout
        closed the bus, and the reconnection turned torque on again). Torque stays off after the request, also when
        the reboot fails part-way (the bus lost): never turned on again by a reconnection, only by a request."""
        if not self.connected:
            return False, f"bus not connected ({self.disconnect_reason})"
        try:
            silent = self._silent_before_reboot()
        except BUS_FAILURES as e:
            self._disconnect(f"ping before reboot failed: {e}")
            return False, f"reboot refused, nothing rebooted: ping failed ({e})"
        if silent:
            return False, (
                f"reboot refused, nothing rebooted: {self.joint_text(self._rows(silent))} not answering (skipped or "
                f"no reply to a ping); torque unchanged, check its power and cable"
            )
        errors = {i: int(e) for i, e in zip(self.ids, self.hw_error) if e > 0}
        self.torque_wanted = False  # asked off: a reboot turns torque off, and a reconnection must not turn it on
        try:
            for i in self.bus.ids:
                self.bus.reboot(i)
            time.sleep(0.05)
            self.bus.setup()  # reboot restores RAM defaults: indirect map, return delay
            self.rewrite_limits()  # and the velocity / effort limits commands wrote
            state = self.bus.read_state()
        except BUS_FAILURES as e:
            self._disconnect(f"reboot failed: {e}")
            return False, f"reboot failed: {e}; torque off on reconnection"
        self._store(state)  # the goal: the present position (the node's _on_reboot holds it, within the limits)
        self._release_shutdowns()
        self._read_health()
        text = ", ".join(f"id {i}: {self.ct.hardware_error_text(e)}" for i, e in errors.items()) or "none"
        missing = (
            f"; missing, not rebooted: {self.joint_text(self._rows(self.bus.missing))}" if self.bus.missing else ""
        )
        return True, (
            f"rebooted ids {list(self.bus.ids)} (hardware errors cleared: {text}); torque is off, goal = present "
            f"position{missing}"
        )

    def _silent_before_reboot(self) -> list[int]:
        """The servos on the bus that do not answer now: skipped by the bus, or no reply to a ping (with retries)."""
        stats = self.bus.stats
        return [i for i in self.bus.ids if (i in stats and stats[i].skipping) or self.bus.ping(i) is None]

    def hw_command_limits(self, names: list[str], velocity: list[float], effort: list[float], source: str) -> None:
        """Velocity / effort of a JointState command → each servo's limit register
        (:mod:`servo_ff.bus.command_limits`), written now (before the goal of the same message, which the
        next cycle writes); a refused or failed one is one warning naming the joint."""
        from servo_ff.bus.command_limits import LimitRefused, effort_limit, velocity_limit

        if not self.connected:
            self.refuse_limits(source, f"velocity/effort not written: bus not connected ({self.disconnect_reason})")
            return
        table, errors = self.bus.table, []
        for k, name in enumerate(names):
            i = self.ids[self.gate.index[name]]
            for field, values in (("velocity", velocity), ("effort", effort)):
                if not values:
                    continue
                try:
                    if field == "velocity":
                        w = velocity_limit(table, values[k])
                    else:
                        mode = self._operating_mode(i) if table.protocol == "dxl2" else None
                        vin = getattr(self.bus, "supply", {}).get(i)  # a duty limit's V_in (STS)
                        w = effort_limit(table, values[k], mode, self.bus.kt, vin=vin)
                    self.bus.write_item(i, w.item, w.raw)
                    self.limits_written[(name, w.item)] = w.raw
                    self._note_clamp(source, name, i, w.clamped)
                except (LimitRefused, *BUS_FAILURES) as e:
                    errors.append(f"{name} (id {i}) {field}: {e}")
        if errors:
            self.refuse_limits(source, "velocity/effort limit refused: " + "; ".join(errors))

    def _note_clamp(self, source: str, name: str, i: int, why: str) -> None:
        """A limit clamped to its register's full scale: one warning per joint until a limit fits again."""
        if not why:
            self.limits_clamped.discard(name)
        elif name not in self.limits_clamped:
            self.limits_clamped.add(name)
            self.get_logger().warning(f"{source}: {name} (id {i}) {why}")

    def rewrite_limits(self, ids=None) -> None:
        """The velocity / effort limits written by commands (:attr:`limits_written`), written again to ``ids``
        (default every servo on the bus): a reboot, a power loss or a reconnection leaves a servo's RAM at its
        defaults. A servo missing from the bus gets them when it joins (:meth:`_joined`)."""
        for (joint, item), raw in self.limits_written.items():
            i = self.ids[self.gate.index[joint]]
            if (ids is None or i in ids) and i in self.bus.ids:
                self.bus.write_item(i, item, raw)

    def _operating_mode(self, i: int) -> int:
        """Operating Mode of servo ``i`` as its set-up read and accepted it (``bus.modes``,
        :mod:`servo_ff.bus.operating_modes`); read now if the bus does not hold it."""
        if i not in self.bus.modes:
            self.bus.modes[i] = self.bus.read_item(i, "Operating Mode")
        return self.bus.modes[i]
