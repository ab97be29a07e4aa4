"""Servo physics of the virtual STS bus: :class:`~servo_ff.bus.virtual_servos.VirtualServos` (the shared
:class:`~servo_ff.models.servo_bank.ServoBank` under the servo's firmware law, e.g. bam's STS3215 law with its
3400 counts/s internal target) wired to the STS registers in the table's units.

Inputs (before every advance): Goal Position clipped to Min/Max Position Limit (position mode; both 0 = multi-turn,
no clip; Operating Mode ≠ 0 does not follow it: the servo stays where it is — as in wheel mode at Goal Velocity 0
and PWM mode at Goal Time 0; step mode (3), where the firmware moves by each Goal Position as a relative step, is
not emulated: it stays too; the bus refuses all three at set-up), Torque Enable = 1, the P coefficient (Position P Gain
÷ ``p_gain_per_kp`` = bam's kp) and the duty limit Torque Limit / 1000. Outputs: Present Position (modulo 4096:
single-turn feedback), Present Velocity [counts/s], Present Load (drive duty, 0.1 %), Present Current (6.5 mA),
voltage, temperature, Moving, Position Trajectory (the firmware's internal target) — sign-magnitude where the table
says so. Moving: |velocity| above Moving Threshold (taken as counts/s).
"""

from __future__ import annotations

import numpy as np

from ...models import slots
from .. import control_table as ct
from ..operating_modes import goal_modes
from ..virtual_servos import VirtualServos

DUTY_FULL_SCALE = 1000  # Torque Limit, PWM Limit (Max Torque Limit) and Present Load: 0.1 % of full duty
COUNTS_PER_REV = 4096


class StsServos(VirtualServos):
    """The bank of the servos of an :class:`~.registers.StsRegisterMemory`."""

    def inputs(self) -> None:
        r, b, t = self.regs, self.bank, self.regs.table
        goal = r.get("Goal Position")
        lo, hi = r.get("Min Position Limit"), r.get("Max Position Limit")
        bounded = (lo != 0) | (hi != 0)
        goal = t.position_to_rad(np.where(bounded, np.clip(goal, lo, np.maximum(lo, hi)), goal))
        b.goal = np.where(np.isin(r.get("Operating Mode"), goal_modes("sts")), goal, b.theta)
        b.enable = (r.get("Torque Enable") == 1).astype(np.float64)
        b.packed[:, slots.KP] = ct.p_gain_to_kp(r.get("Position P Gain"), t)
        duty = r.get("Torque Limit") / DUTY_FULL_SCALE
        b.packed[:, slots.MAXPWM] = np.maximum(np.minimum(self.max_pwm, duty), 1e-6)

    def _counts(self, rad: np.ndarray) -> np.ndarray:
        t = self.regs.table
        return np.rint(rad / t.rad_per_count + t.center).astype(np.int64)

    def publish(self, vin: float, temp: np.ndarray, elapsed: float) -> None:
        r, b, t = self.regs, self.bank, self.regs.table
        r.set("Present Position", self._counts(b.theta) % COUNTS_PER_REV)
        r.set("Position Trajectory", self._counts(b.target) % COUNTS_PER_REV)
        r.set("Present Velocity", np.rint(b.dtheta / t.velocity_unit))
        duty = np.where(vin > 0, b.volts / max(vin, 1e-9), 0.0)
        r.set("Present Load", np.clip(np.rint(duty * DUTY_FULL_SCALE), -DUTY_FULL_SCALE, DUTY_FULL_SCALE))
        if t.current_unit:
            r.set("Present Current", np.rint(self.amps() / t.current_unit))
        r.set("Present Input Voltage", round(vin / t.voltage_unit))
        r.set("Present Temperature", np.clip(np.rint(temp), 0, 255))
        r.set("Moving", (np.abs(b.dtheta) / t.velocity_unit > r.get("Moving Threshold")).astype(np.int64))

    def reboot(self, k: int) -> None:
        """After a power cycle: torque off, Goal Position register = present position."""
        self.bank.reboot([k])
        self.regs.set("Goal Position", int(self._counts(self.bank.theta[k : k + 1])[0] % COUNTS_PER_REV), [k])
        self.inputs()
