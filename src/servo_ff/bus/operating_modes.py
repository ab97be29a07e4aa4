"""Operating Mode (an EEPROM item) of each family: which modes follow Goal Position — the only ones a bus drives —
and why each other one is refused at set-up (:func:`check`, from ``_setup_one`` of the Dynamixel 2.0 and STS buses:
read, kept in the bus's ``modes``, never written; a refused servo fails the set-up, or with ``setup(leave_out=True)``
— the hardware node's ``missing_ids: continue`` — is left out as a missing one). The effort limit of a 2.0 command
(:func:`servo_ff.bus.command_limits.effort_limit`) needs mode 5 of these, read from the same ``modes``.

* Dynamixel 2.0 (ROBOTIS e-manual, Operating Mode (11)): 3 position, 4 extended position, 5 current-based
  position follow Goal Position; 0 current, 1 velocity, 16 PWM follow Goal Current (102), Goal Velocity (104),
  Goal PWM (100) and ignore it.
* Feetech STS (memory table, Operating Mode (0x21)): 0 position; 1 turns at Goal Velocity (0x2E), 2 drives an
  open-loop duty from Goal Time (0x2C), 3 (step) takes Goal Position (0x2A) as a number of steps to move by.
"""

from __future__ import annotations

from .bus_types import GoalRejected
from .control_table import OPERATING_MODES as DXL2

IGNORES = "would ignore every goal position"

#: protocol → {mode: (name, "" when it follows Goal Position, else why the bus cannot drive it)}
MODES: dict[str, dict[int, tuple[str, str]]] = {
    "dxl2": {
        DXL2["current"]: ("current", f"it follows Goal Current (102) and {IGNORES}"),
        DXL2["velocity"]: ("velocity", f"it follows Goal Velocity (104) and {IGNORES}"),
        DXL2["position"]: ("position", ""),
        DXL2["extended_position"]: ("extended position", ""),
        DXL2["current_based_position"]: ("current-based position", ""),
        DXL2["pwm"]: ("PWM", f"it follows Goal PWM (100) and {IGNORES}"),
    },
    "sts": {
        0: ("position", ""),
        1: ("wheel / constant speed", f"it turns at Goal Velocity (46) and {IGNORES}"),
        2: ("PWM (open loop)", f"it drives the open-loop duty of Goal Time (44) and {IGNORES}"),
        3: ("step", "Goal Position (42) is a number of steps to move by there: it would move by each goal, not to it"),
    },
}
#: protocol → its table, for a mode it does not have
TABLE = {"dxl2": "the 2.0 control table (0, 1, 3, 4, 5, 16)", "sts": "the STS memory table (0-3)"}
#: protocol → how the user sets it (the bus never writes it)
SET_IT = {
    "dxl2": "set Operating Mode (11) to 3, 4 or 5 with torque off (DYNAMIXEL Wizard)",
    "sts": "set Operating Mode (33) to 0 with torque off (Feetech FD, or a write with Lock (55) = 0 to keep it)",
}


def goal_modes(protocol: str) -> list[int]:
    """The Operating Modes of ``protocol`` that go to Goal Position (the set-up check, the emulators)."""
    return [m for m, (_name, why) in MODES[protocol].items() if not why]


def check(protocol: str, mode: int, who: str) -> None:
    """Raise :class:`GoalRejected` naming ``who`` (id and joint), the mode and why, when ``mode`` does not follow
    Goal Position."""
    modes = MODES[protocol]
    if mode in goal_modes(protocol):
        return
    driven = ", ".join(f"{m} ({modes[m][0]})" for m in goal_modes(protocol))
    name, why = modes.get(int(mode), ("unknown", f"not a mode of {TABLE[protocol]}"))
    raise GoalRejected(f"{who} is in Operating Mode {mode} ({name}), not {driven}: {why}; {SET_IT[protocol]}")


__all__ = ["MODES", "check", "goal_modes"]
