"""The fault-injection and introspection API of the virtual bus (a mixin of
:class:`~servo_ff.bus.virtual_bus.VirtualBus`): overloads and error bits, brown-outs, silence, a physics snapshot."""

from __future__ import annotations

import numpy as np


class InjectionApi:
    """Methods a test or the CLI calls on a running :class:`~servo_ff.bus.virtual_bus.VirtualBus` (under its lock)."""

    def inject_overload(self, dxl_id: int) -> None:
        """Set the overload bit (``overload_bit``) on ``dxl_id``; torque goes off (until REBOOT; on STS until Torque
        Enable is written; on 1.0 Torque Limit goes 0 until it is written non-zero or Torque Enable is written)."""
        with self._lock:
            hw = self.hw_error
            hw[self._k(dxl_id)] |= self.overload_bit
            self._apply_shutdown(hw)
            self._publish()

    def inject_error(self, dxl_id: int, bits: int, on: bool = True) -> None:
        """Raise error ``bits`` (the bus's own layout: Hardware Error Status, the 1.0 alarm bits, the STS status) on
        ``dxl_id`` as its firmware would, torque off where Shutdown selects it; for the faults without a physical
        cause in the emulator (encoder, electrical shock / over-current). ``on=False``: the cause is gone — clears
        ``bits`` (for a bit the firmware does not latch, e.g. the STS sensor bit)."""
        with self._lock:
            hw = self.hw_error
            k = self._k(dxl_id)
            hw[k] = hw[k] | int(bits) if on else hw[k] & ~int(bits)
            self._apply_shutdown(hw)
            self._publish()

    def brown_out(self, dxl_id: int) -> None:
        """``dxl_id`` reboots by itself (a supply brown-out): RAM back to defaults (torque off, indirect addresses,
        gains), goal = present position, as after a REBOOT nobody sent."""
        with self._lock:
            self.reboot(self._k(dxl_id))

    def set_silent(self, dxl_id: int, silent: bool = True) -> None:
        with self._lock:
            self.scheduled.silent[self._k(dxl_id)] = silent

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the physics state: theta, dtheta, goal [rad], enable, tau_m [N·m], temp, hw_error."""
        with self._lock:
            self.servos.inputs()
            b = self.servos.bank
            return {
                "theta": b.theta.copy(),
                "dtheta": b.dtheta.copy(),
                "goal": b.goal.copy(),
                "enable": b.enable.copy(),
                "tau_m": b.tau_m.copy(),
                "temp": self.temp.copy(),
                "hw_error": self.hw_error,
            }
