"""``servo-ff virtual-bus``: N simulated servos on a pseudo-terminal: Dynamixel Protocol 2.0 (``--protocol dxl2``),
Dynamixel Protocol 1.0 (``dxl1``, with a 1.0 table: ``--servo mx106-p1``, ``mx64-p1``, ``ax12a``) or Feetech
SCS/STS (``sts``).

Prints ``DEVICE /dev/pts/N`` as its first line, then serves until Ctrl-C / SIGTERM (or ``--duration``).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import signal
import sys
import threading
from pathlib import Path

from ..bus.families import DEFAULT_PROTOCOL, FAMILIES, PROTOCOLS, family, load
from ..models.friction_models import MODEL_NAMES
from ._params import add_firmware_argument


def parse_ids(text: str) -> list[int]:
    """``"1-20"``, ``"1,2,5"`` or ``"1-3,7"`` → sorted unique ids."""
    ids: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            if "-" in part:
                a, b = (int(x) for x in part.split("-", 1))
                if b < a:
                    raise ValueError
                ids.extend(range(a, b + 1))
            else:
                ids.append(int(part))
    except ValueError:
        raise ValueError(f"--ids {text!r}: expected e.g. '1-20' or '1,2,5'") from None
    if not ids:
        raise ValueError("--ids is empty")
    return sorted(set(ids))


def _id_at(flag: str, text: str) -> tuple[int, float]:
    try:
        i, t = text.split("@")
        return int(i), float(t)
    except ValueError:
        raise ValueError(f"{flag} {text!r}: expected ID@SECONDS, e.g. 3@2.5") from None


def _silent(text: str) -> tuple[int, float, float | None]:
    """``ID@START[+DURATION]``."""
    try:
        i, rest = text.split("@")
        start, _, dur = rest.partition("+")
        return int(i), float(start), float(dur) if dur else None
    except ValueError:
        raise ValueError(f"--silent {text!r}: expected ID@START[+DURATION], e.g. 3@2.5+1") from None


def _sag(text: str) -> tuple[float, float, float]:
    """``VOLTS@START[+DURATION]``."""
    try:
        v, rest = text.split("@")
        start, _, dur = rest.partition("+")
        return float(v), float(start), float(dur) if dur else math.inf
    except ValueError:
        raise ValueError(f"--sag {text!r}: expected VOLTS@START[+DURATION], e.g. 3@1+0.5") from None


def _check_on_bus(flag: str, named, ids: list[int], ids_text: str) -> None:
    """Ids a fault or load flag names must be servos of ``--ids`` (before: ``--silent 9@0`` on ids 1-3 was taken and
    did nothing, unsaid)."""
    unknown = sorted(set(named) - set(ids))
    if unknown:
        raise ValueError(f"{flag} given for ids {unknown} that are not in --ids {ids_text}")


def check_duration(duration: float | None) -> None:
    """``--duration`` [s]: left out (serve until Ctrl-C / SIGTERM) or finite and > 0 (before: 0 served for ever)."""
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise ValueError(
            f"--duration {duration:g}: expected a number of seconds > 0 (leave it out to serve until Ctrl-C)"
        )


def virtual_bus_class(protocol: str) -> type:
    """The virtual bus of ``protocol`` (its row of :data:`servo_ff.bus.families.FAMILIES`)."""
    return load(protocol, "virtual_bus")


def build_bus(args):
    from ..bus import control_table as ct
    from ..bus.thermal import ThermalOptions
    from ..bus.virtual_bus import Faults, ServoLoad
    from ..bus.virtual_options import Clock, VirtualBusOptions
    from ._params import resolve_params

    protocol = getattr(args, "protocol", None) or (
        ct.control_table(args.servo).protocol if args.servo else DEFAULT_PROTOCOL
    )
    servo = args.servo or family(protocol).default_servo
    table = ct.control_table(servo)
    if table.protocol != protocol:
        raise ValueError(
            f"--servo {servo} ({table.name}) speaks protocol {table.protocol}, not --protocol {protocol}; servos of "
            f"{protocol}: " + ", ".join(k for k, t in ct.CONTROL_TABLES.items() if t.protocol == protocol)
        )

    ids = parse_ids(args.ids)
    loads: dict[int, ServoLoad] = {}
    default = ServoLoad.fixed_inertia(0.0)
    for spec in args.load or []:
        head, sep, rest = spec.partition("=")
        if sep and head.strip().isdigit():
            loads[int(head)] = ServoLoad.parse(rest)
        else:
            default = ServoLoad.parse(spec)
    per = {i: loads.get(i, default) for i in ids}
    silent = [_silent(s) for s in args.silent or []]
    overload = dict(_id_at("--overload", s) for s in args.overload or [])
    brownout = dict(_id_at("--brownout", s) for s in getattr(args, "brownout", None) or [])
    for flag, named in (("--load", loads), ("--silent", [i for i, _, _ in silent]), ("--overload", overload),
                        ("--brownout", brownout)):  # fmt: skip
        _check_on_bus(flag, named, ids, args.ids)
    sag = dict(zip(("sag_volts", "sag_start", "sag_duration"), _sag(args.sag))) if args.sag else {}
    faults = Faults(  # built whole: its own checks see every value (the sag's too)
        **sag,
        drop_rate=args.drop_rate,
        corrupt_rate=args.corrupt_rate,
        late_rate=args.late_rate,
        late_s=args.late_ms / 1000.0,
        silent_after={i: t for i, t, _ in silent},
        silent_for={i: d for i, _, d in silent if d is not None},
        overload_at=overload,
        brownout_at=brownout,
        supply_resistance=args.supply_resistance,
        seed=args.seed,
    )
    if args.firmware and not args.params:
        raise ValueError("--firmware needs --params FILE (the actuator the law drives)")
    params = resolve_params(args.params, None, args.firmware) if args.params else None
    return virtual_bus_class(protocol)(
        VirtualBusOptions(
            ids=ids,
            model=servo,
            params=params,
            friction_model=args.model,
            loads=per,
            supply_voltage=args.supply,
            return_delay=args.return_delay,
            baud=args.baud,
            wire_time=args.wire_time,
            echo=args.echo,
            link=args.link,
            truth=bool(args.truth),
            faults=faults,
            thermal=ThermalOptions(ambient=args.temperature, enabled=args.thermal),
            clock=Clock(dt_max=args.dt_max),
        )
    )


def run(args) -> int:
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(asctime)s %(name)s: %(message)s"
    )
    check_duration(args.duration)
    if args.truth:  # before: a directory or a name without .npz became <name>.npz, said nowhere
        truth = Path(args.truth)
        if truth.is_dir() or truth.suffix != ".npz":
            raise ValueError(f"--truth {truth}: give a FILE.npz path")
    bus = build_bus(args)
    dev = bus.open()
    print(f"DEVICE {dev}", flush=True)
    print(
        f"# {bus.n} × {bus.table.name} ids {bus.ids[0]}..{bus.ids[-1]}, actuator {bus.params.actuator}/"
        f"{bus.params.model}, supply {bus.supply_voltage:g} V, return delay "
        f"{bus.regs.value(0, 'Return Delay Time') * 2} µs" + (f", link {args.link}" if args.link else ""),
        flush=True,
    )
    stop = threading.Event()

    def _term(*_):
        stop.set()
        bus._stop.set()

    signal.signal(signal.SIGTERM, _term)
    timer = threading.Timer(math.inf if args.duration is None else args.duration, _term)
    timer.daemon = True  # a Ctrl-C before it fires does not wait for it
    if args.duration is not None:
        timer.start()
    try:  # a Ctrl-C goes on to the CLI's rule (exit 130, servo_ff.cli.run_command) after the stats
        bus.serve_forever()
    finally:
        timer.cancel()
        st = bus.stats
        print(
            json.dumps(
                {
                    "instructions": st.instructions,
                    "replies": st.replies,
                    "dropped": st.dropped,
                    "corrupted": st.corrupted,
                    "overflow": st.overflow,
                    "errors": st.errors,
                    "decoder": vars(bus.decoder.stats),
                    "physics_steps": st.physics_steps,
                    "held": st.held,
                    "clock_jumps": st.clock_jumps,
                    "brownouts": bus.power.brownouts,
                    "internal_errors": st.internal_errors,
                }
            ),
            file=sys.stderr,
            flush=True,
        )
        if bus.truth is not None:
            bus.truth.save(args.truth)
        bus.stop()
    if bus.stats.internal_errors:  # the emulator itself failed: its results are not the servos'
        print(f"virtual-bus: {bus.stats.internal_errors} internal errors (tracebacks in the log)", file=sys.stderr)
        return 1
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "virtual-bus",
        help="simulated servos on a pty (" + ", ".join(f.title.split(" (")[0] for f in FAMILIES.values()) + ")",
        description=__doc__,
    )
    p.add_argument("--ids", default="1-6", help="servo ids, e.g. 1-20 or 1,2,5")
    p.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        help="bus protocol (default: the --servo table's, else dxl2): dxl2 Dynamixel Protocol 2.0, dxl1 Dynamixel "
        "Protocol 1.0 (MX 1.0, AX), sts Feetech SCS/STS",
    )
    p.add_argument(
        "--servo",
        help="servo type (its control table): mx28, mx64, mx106, xm430, xm430-w210, xl330-m288, … (dxl2; default "
        "mx106), mx106-p1, mx64-p1, ax12a (dxl1; default mx106-p1), sts3215, sts3250 (sts; default sts3215)",
    )
    p.add_argument(
        "--model",
        default="m4",
        choices=MODEL_NAMES,
        help="friction model of the servo's published parameter file",
    )
    p.add_argument("--params", help="actuator parameter file (json/yaml) instead of the preset")
    add_firmware_argument(p)
    p.add_argument(
        "--load",
        action="append",
        metavar="[ID=]SPEC",
        help="pendulum:MASS,LENGTH[,ARM_MASS] or inertia:J, for all servos or ID=… for one "
        "(repeatable; default inertia:0)",
    )
    p.add_argument("--supply", type=float, help="supply voltage [V] (default: the preset's vin)")
    p.add_argument(
        "--return-delay",
        type=int,
        help="Return Delay Time register, 2 µs units (default: the table's, 250 Dynamixel, 0 STS)",
    )
    p.add_argument(
        "--baud", type=int, default=1_000_000, help="baud rate the servos report (Baud Rate register; its codes only)"
    )
    p.add_argument("--wire-time", action="store_true", help="delay replies by their wire time at --baud")
    p.add_argument(
        "--echo", action="store_true", help="echo every instruction back first (an adapter without direction control)"
    )
    p.add_argument("--temperature", type=float, default=30.0, help="ambient / constant temperature [°C]")
    p.add_argument("--thermal", action="store_true", help="first-order thermal model instead of constant")
    p.add_argument("--drop-rate", type=float, default=0.0, help="probability a status packet is not sent")
    p.add_argument("--corrupt-rate", type=float, default=0.0, help="per-byte probability of a flipped byte")
    p.add_argument(
        "--late-rate",
        type=float,
        default=0.0,
        help="probability a status packet is held back by --late-ms (and everything after it)",
    )
    p.add_argument("--late-ms", type=float, default=0.0, help="hold-back of a late reply [ms]")
    p.add_argument(
        "--silent",
        action="append",
        metavar="ID@T[+D]",
        help="servo ID stops answering after T s (for D s; default: for good)",
    )
    p.add_argument(
        "--overload",
        action="append",
        metavar="ID@T",
        help="overload on ID at T s: HW error bit 5, torque off until REBOOT",
    )
    p.add_argument(
        "--brownout",
        action="append",
        metavar="ID@T",
        help="servo ID browns out at T s and reboots by itself: RAM at defaults, torque off",
    )
    p.add_argument("--sag", metavar="V@T[+D]", help="supply sags by V volts from T s for D s")
    p.add_argument("--supply-resistance", type=float, default=0.0, help="supply resistance [Ω]: sag ∝ Σ|I|")
    p.add_argument("--seed", type=int, help="random seed of the fault injection")
    p.add_argument("--dt-max", type=float, default=1e-3, help="largest physics sub-step [s]")
    p.add_argument("--link", help="also create this symlink to the pty (e.g. /tmp/ttyDXL)")
    p.add_argument(
        "--duration", type=float, help="exit after this many seconds, > 0; None: serve until Ctrl-C / SIGTERM"
    )
    p.add_argument(
        "--truth",
        metavar="FILE.npz",
        help="keep a truth record (every sync read, reply fate and sync write) and save it here on exit",
    )
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=run)


def main(argv=None) -> int:
    """``python -m servo_ff.cli.virtual_bus …``: the same command without loading the other sub-commands
    (faster start-up for :func:`servo_ff.bus.virtual_bus.spawn_virtual_bus`)."""
    from ._help import apply_help_rule

    parser = argparse.ArgumentParser(prog="servo-ff")
    register(parser.add_subparsers(dest="command", required=True))
    apply_help_rule(parser)
    args = parser.parse_args(["virtual-bus", *(sys.argv[1:] if argv is None else argv)])
    from . import run_command

    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
