"""Servo physics of the virtual bus: a :class:`~servo_ff.models.servo_bank.ServoBank` wired to the register memory.

The registers are the only copy of the servos' inputs: before every advance the bank's goal, torque enable, firmware
P gain (Position P Gain ÷ 16, see :mod:`.control_table`) and duty limit (PWM Limit) are derived from them
(:meth:`VirtualServos.inputs`); after it the present values are written back (:meth:`VirtualServos.publish`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..models import slots
from ..models.params import ActuatorParams
from ..models.servo_bank import ServoBank, ServoLoad, pendulum_of
from . import control_table as ct
from .operating_modes import goal_modes
from .registers import RegisterMemory


class VirtualServos:
    """The bank of the servos in ``regs`` (one :class:`ServoLoad` each, one actuator model ``params``)."""

    def __init__(self, regs: RegisterMemory, params: ActuatorParams, loads: Sequence[ServoLoad], supply_voltage: float):
        self.regs = regs
        # the compiled kernel where numba is installed: a catch-up of 0.25 s (250 steps) of 8 servos costs it ~0.15 ms,
        # numpy ~57 ms (~0.25 ms per simulated ms, ~1 ms under load): replies waited for it (seen 10-300 ms late)
        self.bank = ServoBank(params, regs.n, pendulum_of(loads), backend="auto")
        self._spare = (params, list(loads))  # what :meth:`warm_up` builds its throwaway bank from
        self.bank.supply_voltage = supply_voltage
        self.max_pwm = float(self.bank.packed[0, slots.MAXPWM])  # the actuator's own duty limit
        self.inputs()

    def inputs(self) -> None:
        """Registers → the bank's inputs: Goal Position (followed in Operating Mode 3, 4, 5; in 0, 1, 16 the servo
        stays where it is: current, velocity and PWM control are not emulated), Torque Enable, Position P Gain, PWM
        Limit."""
        r, b = self.regs, self.bank
        goal = ct.counts_to_rad(r.get("Goal Position"))
        b.goal = np.where(np.isin(r.get("Operating Mode"), goal_modes("dxl2")), goal, b.theta)
        b.enable = (r.get("Torque Enable") != 0).astype(np.float64)
        b.packed[:, slots.KP] = ct.p_gain_to_kp(r.get("Position P Gain"), r.table)
        b.packed[:, slots.MAXPWM] = np.maximum(np.minimum(self.max_pwm, r.get("PWM Limit") / ct.PWM_FULL_SCALE), 1e-6)

    def warm_up(self) -> None:
        """Compile (or load from numba's disk cache, ~0.6 s) the bank's multi-step kernel on a throwaway copy, so
        that the first packet is not answered after it."""
        params, loads = self._spare
        ServoBank(params, self.regs.n, pendulum_of(loads), backend="auto").advance(2e-3, 2)

    def amps(self) -> np.ndarray:
        """Motor current per servo [A]."""
        return self.bank.tau_m / self.bank.packed[:, slots.KT]

    def publish(self, vin: float, temp: np.ndarray, elapsed: float) -> None:
        """The present values into the registers: PWM, current (MX-28: load), velocity, position, input voltage
        ``vin`` [V], temperature ``temp`` [°C], Moving, Realtime Tick (``elapsed`` [s] since the bus opened)."""
        r, b, tbl = self.regs, self.bank, self.regs.table
        if tbl.has_current:
            r.set("Present Current", np.clip(np.rint(self.amps() / tbl.current_unit), -32768, 32767))
        else:  # MX-28: Present Load, 0.1 % of stall torque, sign = direction
            r.set("Present Load", np.clip(np.rint(b.tau_m / (tbl.stall_torque or 1.0) * 1000), -1000, 1000))
        duty = np.where(vin > 0, b.volts / max(vin, 1e-9), 0.0)
        r.set("Present PWM", np.clip(np.rint(duty * ct.PWM_FULL_SCALE), -ct.PWM_FULL_SCALE, ct.PWM_FULL_SCALE))
        r.set("Present Velocity", np.rint(b.dtheta / ct.RAD_S_PER_VELOCITY_UNIT))
        r.set("Present Position", np.rint(b.theta / ct.RAD_PER_COUNT + ct.CENTER_COUNTS))
        r.set("Present Input Voltage", round(vin / ct.VOLTAGE_UNIT))
        r.set("Present Temperature", np.clip(np.rint(temp), 0, 255))
        r.set("Moving", (np.abs(b.dtheta) > 10 * ct.RAD_S_PER_VELOCITY_UNIT).astype(np.int64))
        r.set("Realtime Tick", int(elapsed * 1000) % 32768)

    def reboot(self, k: int) -> None:
        """After the registers' REBOOT: torque off, Goal Position register = present position."""
        self.bank.reboot([k])
        self.regs.set("Goal Position", int(round(self.bank.theta[k] / ct.RAD_PER_COUNT + ct.CENTER_COUNTS)), [k])
        self.inputs()
