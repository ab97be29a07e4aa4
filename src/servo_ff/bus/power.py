"""The servos' supply as power for their electronics: a supply that falls below :data:`BROWNOUT_VOLTS` (a sag to
0 V, a supply resistance that pulls it down under load) switches every servo off, and it comes back rebooted.

While off a servo drives nothing (torque released, the load moves under gravity alone) and answers nothing; when
the supply is back it restarts as after a brown-out (the bus's ``brown_out``: RAM at defaults, torque off, goal =
present position). Between :data:`BROWNOUT_VOLTS` and the Min Voltage Limit the servo stays on and reports the
Input Voltage error (the firmware's rule).
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

#: [V] below it the servo's electronics are off (an emulator assumption: low enough that the Input Voltage error
#: of a supply 1 V above 0 stays observable)
BROWNOUT_VOLTS = 0.5


class SupplyPower:
    """Whether the servos are powered, from the supply voltage step by step; counts the brown-outs."""

    def __init__(self) -> None:
        self.on = True
        self.brownouts = 0

    def update(self, vin: float, t: float) -> str | None:
        """Follow the supply ``vin`` [V] at ``t`` [s]; returns ``"off"`` / ``"on"`` at an edge, else None."""
        on = vin >= BROWNOUT_VOLTS
        if on == self.on:
            return None
        self.on = on
        if not on:
            self.brownouts += 1
            log.warning(
                "virtual bus: supply %.2f V below %.1f V at t=%.3f s: servos off (torque released, no replies)",
                vin,
                BROWNOUT_VOLTS,
                t,
            )
            return "off"
        log.warning("virtual bus: supply back at %.2f V at t=%.3f s: servos reboot (torque off)", vin, t)
        return "on"

    @staticmethod
    def physics_volts(vin: float) -> float:
        """The supply the physics sees [V]: ``vin``, at least :data:`BROWNOUT_VOLTS` (below it the torque is off
        and the value drives nothing; the model needs it > 0)."""
        return max(vin, BROWNOUT_VOLTS)
