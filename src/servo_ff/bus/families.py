"""The servo families: one row per bus protocol — its control tables, bus class, virtual bus, vendor SDK and the
limits a position goal's velocity/effort are written to. Adding a family is one row here and a package
``bus/<package>/`` beside :mod:`.dynamixel` and :mod:`.feetech` (docs/architecture.md).

Classes are named ``"module:Class"`` and imported on use (:func:`load`): each bus needs its own vendor SDK, and this
module imports nothing of servo_ff, so every layer can read it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Family:
    """One bus protocol and the parts that speak it."""

    protocol: str  # key of BusConfig.protocol, of the control tables' ``protocol:`` and of the node parameter
    title: str  # the servos it drives, for docs and errors
    package: str  # bus/<package>/: the family's code; its control tables in bus/<package>/tables/*.yaml
    bus_class: str  # "module:Class" of its ServoBus
    virtual_bus: str  # "module:Class" of its virtual bus on a pty
    default_servo: str  # the control table of its virtual bus when none is given
    sdk: str  # the vendor SDK module its bus and adapters subclass
    sdk_pip: str  # the pip package of that SDK
    port_handler: str  # "module:Class": the SDK PortHandler adapter (reply timing, late-reply ledger)
    velocity_limit: tuple[str, int]  # item bounding a goal's velocity, and its largest value
    torque_limit: tuple[str, int] | None  # item bounding a goal's effort (None: per operating mode, command_limits)
    baud_grid: str | None = None  # "module:function"(baud, table) → Baud Rate code, when a formula and not the table's

    @property
    def tables_dir(self) -> Path:
        return Path(__file__).parent / self.package / "tables"


FAMILIES: dict[str, Family] = {
    f.protocol: f
    for f in (
        Family(
            "dxl2",
            "Dynamixel Protocol 2.0 (MX 2.0 firmware, X series)",
            "dynamixel",
            "servo_ff.bus.dynamixel.bus:DynamixelBus",
            "servo_ff.bus.dynamixel.virtual_bus:VirtualBus2",
            "mx106",
            "dynamixel_sdk",
            "dynamixel-sdk",
            "servo_ff.bus.dynamixel.sdk_adapters:PortHandler",
            ("Profile Velocity", 32767),
            None,
        ),
        Family(
            "dxl1",
            "Dynamixel Protocol 1.0 (MX 1.0 firmware, AX)",
            "dynamixel",
            "servo_ff.bus.dynamixel.bus_p1:DynamixelBus1",
            "servo_ff.bus.dynamixel.virtual_p1:VirtualBus1",
            "mx106-p1",
            "dynamixel_sdk",
            "dynamixel-sdk",
            "servo_ff.bus.dynamixel.sdk_adapters_p1:PortHandler1",
            ("Moving Speed", 1023),
            ("PWM Limit", 1023),
            "servo_ff.bus.dynamixel.p1_units:baud_code",
        ),
        Family(
            "sts",
            "Feetech SCS/STS (STS3215, STS3250)",
            "feetech",
            "servo_ff.bus.feetech.bus:FeetechBus",
            "servo_ff.bus.feetech.virtual_bus:StsVirtualBus",
            "sts3215",
            "scservo_sdk",
            "feetech-servo-sdk",
            "servo_ff.bus.feetech.port:StsPortHandler",
            ("Goal Velocity", 32767),
            ("Torque Limit", 1000),
        ),
    )
}
PROTOCOLS: tuple[str, ...] = tuple(FAMILIES)
DEFAULT_PROTOCOL = "dxl2"  # of a BusConfig, a control table or a virtual bus that does not say
#: one directory of control tables per family package
TABLES_DIRS: tuple[Path, ...] = tuple(dict.fromkeys(f.tables_dir for f in FAMILIES.values()))


def family(protocol: str) -> Family:
    """The row of ``protocol`` (ValueError listing the known protocols)."""
    try:
        return FAMILIES[protocol]
    except KeyError:
        raise ValueError(f"unknown bus protocol {protocol!r}; known: {', '.join(PROTOCOLS)}") from None


def load(protocol: str, part: str):
    """The class (or function) ``part`` (``bus_class``, ``virtual_bus``, ``port_handler``, ``baud_grid``) of
    ``protocol``, imported now (ValueError naming the vendor SDK when it is not installed)."""
    f = family(protocol)
    module, _, name = getattr(f, part).partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as e:
        raise ValueError(
            f"bus protocol {protocol} needs {module}, not importable ({e}); install {f.sdk_pip} (module {f.sdk})"
        ) from None
