"""A virtual Dynamixel Protocol 2.0 bus on a pseudo-terminal whose servos are the simulated actuators.

:class:`VirtualBus` opens a pty pair, serves the slave end's path (``.device``, e.g. ``/dev/pts/7``) and answers
byte for byte as N servos: PING, READ, WRITE, SYNC_READ, SYNC_WRITE, BULK_READ, BULK_WRITE, REBOOT (and
REG_WRITE/ACTION), status packets with the error byte (bit 7 alert when Hardware Error Status ≠ 0), Status Return
Level and Return Delay Time honoured, EEPROM lock while torque is on, indirect addresses 168–/224–.

Motion: every servo is the core stepper :func:`servo_ff.models.stepper.step` (Algorithm 1 of seed 004) under the
firmware P law with one preset's :class:`~servo_ff.models.params.ActuatorParams`, vectorised over all servos;
physics advances by wall-clock time (sub-steps ≤ ``dt_max``) before every packet and on an idle tick. Per-servo
registers feed the law: Position P Gain → ``kp`` (register/16, see :mod:`.control_table`), PWM Limit → duty limit,
bus supply → ``vin``. Loads: a pendulum (θ = 0 hanging down) or a fixed inertia per servo.

Faults (:class:`.faults.Faults`): reply drop rate, corrupt-byte rate, late replies, servos that fall silent after
T s (for D s), overload at T s (Hardware Error Status bit 5, torque off until REBOOT), supply-voltage sag window and
supply resistance. ``truth=True`` keeps a :class:`.truth.TruthRecord` of every sync read / reply / sync write.

Use it in tests::

    with VirtualBus(ids=range(1, 21), model="mx106") as vb:
        port = PortHandler(vb.device) ...

or in another process: :func:`spawn_virtual_bus` runs ``python -m servo_ff virtual-bus`` and returns the path.
"""
from __future__ import annotations

import logging
import math
import os
import re
import select
import subprocess
import sys
import threading
import time
import tty
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..models.params import P_KP, P_KT, P_MAXPWM, P_QOFF, P_R, P_VIN, ActuatorParams
from ..models.presets import preset
from ..models.stepper import GRAVITY, ExternalLoad, step
from . import control_table as ct
from . import protocol as pr
from .faults import Faults, ReplyFaults  # noqa: F401 (Faults re-exported)
from .truth import TruthRecord

log = logging.getLogger(__name__)

_FW_VERSION = 45


@dataclass(frozen=True)
class ServoLoad:
    """A pendulum (point ``mass`` [kg] at ``length`` [m] on an arm of ``arm_mass`` [kg], θ = 0 hanging down)
    or, with ``length == 0``, a fixed extra ``inertia`` [kg·m²] and no gravity."""

    mass: float = 0.0
    length: float = 0.0
    arm_mass: float = 0.0
    inertia: float = 0.0

    @classmethod
    def pendulum(cls, mass: float, length: float, arm_mass: float = 0.0) -> "ServoLoad":
        return cls(mass=mass, length=length, arm_mass=arm_mass)

    @classmethod
    def fixed_inertia(cls, inertia: float) -> "ServoLoad":
        return cls(inertia=inertia)

    def __post_init__(self) -> None:
        for k in ("mass", "length", "arm_mass", "inertia"):
            v = getattr(self, k)
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"load.{k} must be finite and >= 0, got {v}")

    @property
    def gravity_amplitude(self) -> float:
        """(m + m_arm/2)·g·l [N·m]: τ_e = −amplitude·sin θ."""
        return (self.mass + self.arm_mass / 2) * GRAVITY * self.length

    @property
    def total_inertia(self) -> float:
        """Load inertia [kg·m²] (armature added by the stepper)."""
        return (self.mass + self.arm_mass / 3) * self.length ** 2 + self.inertia

    @classmethod
    def parse(cls, spec: str) -> "ServoLoad":
        """``pendulum:MASS,LENGTH[,ARM_MASS]`` or ``inertia:J`` (SI units)."""
        kind, _, rest = spec.partition(":")
        try:
            vals = [float(v) for v in rest.split(",")] if rest else []
        except ValueError:
            raise ValueError(f"--load {spec!r}: values must be numbers") from None
        if kind == "pendulum" and len(vals) in (2, 3):
            return cls.pendulum(*vals)
        if kind == "inertia" and len(vals) == 1:
            return cls.fixed_inertia(vals[0])
        raise ValueError(f"--load {spec!r}: expected 'pendulum:MASS,LENGTH[,ARM_MASS]' or 'inertia:J'")


@dataclass
class BusStats:
    instructions: dict[str, int] = field(default_factory=dict)
    replies: int = 0
    dropped: int = 0  # replies suppressed by drop_rate
    corrupted: int = 0  # replies with flipped bytes
    held: int = 0  # replies held back by late_s (late_rate)
    overflow: int = 0  # replies lost because nobody read the pty
    errors: dict[int, int] = field(default_factory=dict)  # error number → count of status packets
    physics_steps: int = 0
    clock_jumps: int = 0
    internal_errors: int = 0  # exceptions caught in the serve loop (logged with a traceback)


class VirtualBus:
    """N emulated servos on a pty. ``start()`` serves in a daemon thread; ``serve_forever()`` in the caller.

    Parameters: ``ids`` (1..252), ``model`` (control table name, see :func:`control_table.control_table`),
    ``params`` (one ActuatorParams for all servos; default: the ``preset(model, friction_model)``),
    ``loads`` (one :class:`ServoLoad` or a mapping id → load), ``supply_voltage`` [V] (default params' vin),
    ``return_delay`` raw units of 2 µs (default: the table's 250), ``temperature`` [°C] ambient and
    ``thermal`` (first-order model: C dT/dt = I²R − (T − T_amb)/R_th), ``baud`` (the Baud Rate the table
    reports; ``wire_time=True`` also delays replies by their 10 bits/byte wire time), ``dt_max`` [s],
    ``truth`` keep a :class:`.truth.TruthRecord` (``.truth``).
    """

    def __init__(self, ids: Iterable[int] = range(1, 7), model: str = "mx106", params: ActuatorParams | None = None,
                 friction_model: str = "m4", loads: ServoLoad | Mapping[int, ServoLoad] | None = None,
                 faults: Faults | None = None, supply_voltage: float | None = None,
                 return_delay: int | None = None, temperature: float = 30.0, thermal: bool = False,
                 thermal_resistance: float = 3.0, thermal_capacity: float = 200.0, baud: int = 1_000_000,
                 wire_time: bool = False, dt_max: float = 1e-3, max_catch_up: float = 0.25,
                 link: str | None = None, idle_tick: float = 0.005, truth: bool = False):
        self.ids = [int(i) for i in ids]
        if not self.ids:
            raise ValueError("ids: at least one servo id is needed")
        bad = [i for i in self.ids if not 0 <= i <= pr.MAX_ID]
        if bad:
            raise ValueError(f"ids: {bad} outside 0..{pr.MAX_ID}")
        if len(set(self.ids)) != len(self.ids):
            raise ValueError(f"ids: duplicates in {self.ids}")
        self.table = ct.control_table(model)
        self.model = model
        if params is None:
            servo = {"xm430": None, "xm430-w210": None}.get(model, model)
            if servo is None:
                raise ValueError(f"model {model!r} has no identified preset; pass params= (or --params FILE)")
            params = preset(servo, friction_model if servo in ("mx64", "mx106") else "m1")
        self.params = params
        self.faults = faults or Faults()
        self.rng = np.random.default_rng(self.faults.seed)
        self.reply_faults = ReplyFaults(self.faults, self.rng)
        self.truth: TruthRecord | None = TruthRecord() if truth else None
        n = len(self.ids)
        self.n = n
        self.index = {i: k for k, i in enumerate(self.ids)}
        # control tables (n, TABLE_SIZE) uint8
        self.mem = np.stack([np.frombuffer(self.table.defaults(i), dtype=np.uint8) for i in self.ids]).copy()
        if return_delay is not None:
            if not 0 <= return_delay <= 254:
                raise ValueError(f"return_delay must be 0..254 (2 µs units), got {return_delay}")
            self.mem[:, ct.ADDR_RETURN_DELAY] = return_delay
        self._baud_register(baud)
        self.baud = int(baud)
        self.wire_time = bool(wire_time)
        self.supply_voltage = float(params.firmware.vin if supply_voltage is None else supply_voltage)
        if not (math.isfinite(self.supply_voltage) and self.supply_voltage > 0):
            raise ValueError(f"supply_voltage must be > 0, got {supply_voltage}")
        self.t_ambient = float(temperature)
        self.thermal = bool(thermal)
        self.r_th, self.c_th = float(thermal_resistance), float(thermal_capacity)
        if not (dt_max > 0 and max_catch_up >= dt_max):
            raise ValueError(f"need dt_max > 0 and max_catch_up >= dt_max, got {dt_max}, {max_catch_up}")
        self.dt_max, self.max_catch_up = float(dt_max), float(max_catch_up)
        # loads
        if loads is None:
            loads = ServoLoad.fixed_inertia(0.0)
        per = {i: (loads.get(i, ServoLoad()) if isinstance(loads, Mapping) else loads) for i in self.ids}
        if isinstance(loads, Mapping):
            unknown = sorted(set(loads) - set(self.ids))
            if unknown:
                raise ValueError(f"loads given for unknown ids {unknown}; bus ids: {self.ids}")
        self.loads = per
        self.grav = np.array([per[i].gravity_amplitude for i in self.ids])
        self.inertia = np.array([per[i].total_inertia for i in self.ids])
        # physics state (rad, rad/s), goal (rad), outputs
        self.base = params.packed()
        self.p = np.broadcast_to(self.base, (n, self.base.size)).copy()
        self.theta = np.zeros(n)
        self.dtheta = np.zeros(n)
        self.goal = np.zeros(n)
        self.enable = np.zeros(n)
        self.tau_m = np.zeros(n)
        self.volts = np.zeros(n)
        self.temp = np.full(n, self.t_ambient)
        self.hw_error = np.zeros(n, dtype=np.int64)
        self.silent = np.zeros(n, dtype=bool)
        self._overload_done: set[int] = set()
        self._was_silent: dict[int, bool] = {}
        self._registered: dict[int, tuple[int, bytes]] = {}
        self.stats = BusStats()
        self.decoder = pr.StreamDecoder()
        self._lock = threading.RLock()
        self._master = self._slave = -1
        self._link = link
        self.device: str | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._idle_tick = float(idle_tick)
        self._old_switch: float | None = None
        self._out: list[bytes] = []
        self._t0 = self._t_last = time.monotonic()
        self._last_rx = 0.0
        for k in range(n):
            self._sync_params(k)
        self._publish()

    # ------------------------------------------------------------------ lifecycle
    def open(self) -> str:
        """Open the pty pair (raw, no echo) and return the slave device path."""
        if self.device is not None:
            return self.device
        pr.warm_up()
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo / line discipline: bytes pass unchanged
        os.set_blocking(self._master, False)
        self.device = os.ttyname(self._slave)
        if self._link:
            try:
                os.unlink(self._link)
            except FileNotFoundError:
                pass
            os.symlink(self.device, self._link)
        self._t0 = self._t_last = time.monotonic()
        if self.truth is not None:
            self.truth.t0 = self._t0  # the fault clock's origin
        log.info("virtual Dynamixel bus on %s: %d × %s, ids %s", self.device, self.n, self.table.name, self.ids)
        return self.device

    def start(self, switch_interval: float | None = 1e-4) -> str:
        """Open and serve in a daemon thread; returns the device path.

        ``switch_interval``: the stock SDK ``PortHandler`` polls the port in a busy loop; in the same process it
        would hand the GIL to this thread only every 5 ms (``sys.getswitchinterval()``), several times per packet,
        and the SDK's timeouts would fire. The interval is lowered while the bus runs (restored by ``stop``);
        pass None to leave it alone (e.g. when the client waits in ``select`` like :class:`.bus.PortHandler`).
        """
        dev = self.open()
        if switch_interval is not None and self._old_switch is None:
            self._old_switch = sys.getswitchinterval()
            sys.setswitchinterval(switch_interval)
        self._stop.clear()
        self._thread = threading.Thread(target=self.serve_forever, name="virtual-dxl-bus", daemon=True)
        self._thread.start()
        return dev

    def stop(self) -> None:
        self._stop.set()
        if self._old_switch is not None:
            sys.setswitchinterval(self._old_switch)
            self._old_switch = None
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        for fd in (self._master, self._slave):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = -1
        if self._link:
            try:
                os.unlink(self._link)
            except OSError:
                pass
        self.device = None

    close = stop

    def __enter__(self) -> "VirtualBus":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Read the pty, answer packets, advance physics on an idle tick until :meth:`stop`."""
        if self.device is None:
            self.open()
        master = self._master
        while not self._stop.is_set():
            try:
                r, _, _ = select.select([master], [], [], self._idle_tick)
            except (OSError, ValueError):
                break
            now = time.monotonic()
            with self._lock:
                if r:
                    try:
                        data = os.read(master, 65536)
                    except BlockingIOError:
                        data = b""
                    except OSError:  # EIO when no slave is open: keep waiting
                        time.sleep(self._idle_tick)
                        continue
                    if data:
                        self._last_rx = now
                        for pkt in self.decoder.feed(data):
                            try:
                                self.handle(pkt, time.monotonic())
                            except Exception:  # the bus must outlive one bad packet or physics error
                                self.stats.internal_errors += 1
                                log.exception("virtual bus: error handling %s", pkt)
                else:
                    if self.decoder.pending and now - self._last_rx > 0.02:
                        self.decoder.drop_partial()  # a packet that never finished: like the firmware timeout
                    try:
                        self.advance(now)
                    except Exception:
                        self.stats.internal_errors += 1
                        log.exception("virtual bus: physics step failed")
                        self._t_last = now

    # ------------------------------------------------------------------ introspection / injection API
    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    def inject_overload(self, dxl_id: int) -> None:
        """Set Hardware Error Status bit 5 (overload) on ``dxl_id``; torque goes off until REBOOT."""
        with self._lock:
            k = self._k(dxl_id)
            self.hw_error[k] |= ct.HW_OVERLOAD
            self._apply_shutdown()
            self._publish()

    def set_silent(self, dxl_id: int, silent: bool = True) -> None:
        with self._lock:
            self.silent[self._k(dxl_id)] = silent

    def snapshot(self) -> dict[str, np.ndarray]:
        """Copies of the physics state: theta, dtheta, goal [rad], enable, tau_m [N·m], temp, hw_error."""
        with self._lock:
            return {k: getattr(self, k).copy() for k in
                    ("theta", "dtheta", "goal", "enable", "tau_m", "temp", "hw_error")}

    def _k(self, dxl_id: int) -> int:
        if dxl_id not in self.index:
            raise KeyError(f"no servo with id {dxl_id} on this bus (ids {self.ids})")
        return self.index[dxl_id]

    # ------------------------------------------------------------------ physics
    def supply_now(self, t: float) -> float:
        f = self.faults
        v = self.supply_voltage
        if f.sag_start <= t < f.sag_start + f.sag_duration:
            v -= f.sag_volts
        if f.supply_resistance:
            v -= f.supply_resistance * float(np.abs(self.tau_m / self.p[:, P_KT]).sum())
        return max(v, 0.0)

    def advance(self, now: float) -> None:
        """Advance all servos from the last update to ``now`` (wall clock) in sub-steps ≤ dt_max."""
        elapsed = now - self._t_last
        if elapsed <= 0:
            return
        self._t_last = now
        if elapsed > self.max_catch_up:
            self.stats.clock_jumps += 1
            log.warning("virtual bus: %.3f s without service, simulating only %.3f s", elapsed, self.max_catch_up)
            elapsed = self.max_catch_up
        t = now - self._t0
        self._time_faults(t)
        vin = self.supply_now(t)
        self.p[:, P_VIN] = vin
        n_sub = max(1, math.ceil(elapsed / self.dt_max - 1e-9))
        dt = elapsed / n_sub
        load = ExternalLoad(inertia=self.inertia, tau_ext=0.0)
        for _ in range(n_sub):
            load = ExternalLoad(inertia=self.inertia, tau_ext=-self.grav * np.sin(self.theta + self.p[:, P_QOFF]))
            r = step(self.p, self.theta, self.dtheta, self.goal, dt, load=load, enable=self.enable,
                     backend="numpy")
            self.theta, self.dtheta, self.tau_m, self.volts = r.theta, r.dtheta, r.tau_m, r.volts
        self.stats.physics_steps += n_sub
        if self.thermal:
            amps = self.tau_m / self.p[:, P_KT]
            heat = amps ** 2 * self.p[:, P_R]
            self.temp += elapsed * (heat - (self.temp - self.t_ambient) / self.r_th) / self.c_th
            hot = self.temp > self.mem[:, 31]
            self.hw_error[hot] |= ct.HW_OVERHEATING
        vraw = vin / ct.VOLTAGE_UNIT
        lo = self.mem[:, 34].astype(np.int64) | (self.mem[:, 35].astype(np.int64) << 8)
        hi = self.mem[:, 32].astype(np.int64) | (self.mem[:, 33].astype(np.int64) << 8)
        bad_v = (vraw < lo) | (vraw > hi)
        self.hw_error = np.where(bad_v, self.hw_error | ct.HW_INPUT_VOLTAGE, self.hw_error & ~ct.HW_INPUT_VOLTAGE)
        self._apply_shutdown()
        self._publish(vin)

    def _time_faults(self, t: float) -> None:
        for i in self.faults.silent_after:
            if i in self.index:
                now_silent = self.faults.silent_at(i, t)
                if now_silent != self._was_silent.get(i):  # edges only: set_silent() stays in charge between them
                    self._was_silent[i] = now_silent
                    self.silent[self.index[i]] = now_silent
        for i, ts in self.faults.overload_at.items():
            if i in self.index and t >= ts and i not in self._overload_done:
                self._overload_done.add(i)
                self.hw_error[self.index[i]] |= ct.HW_OVERLOAD
                log.info("virtual bus: overload injected on id %d at t=%.2f s", i, t)

    def _apply_shutdown(self) -> None:
        trip = (self.hw_error & self.mem[:, 63]) != 0
        if trip.any():
            self.mem[trip, ct.ADDR_TORQUE_ENABLE] = 0
            self.enable[trip] = 0.0
        self.mem[:, ct.ADDR_HW_ERROR] = self.hw_error.astype(np.uint8)

    def _put(self, addr: int, size: int, values: np.ndarray) -> None:
        dt = {1: "<u1", 2: "<i2", 4: "<i4"}[size]
        raw = np.asarray(values).astype(dt)
        self.mem[:, addr: addr + size] = raw.view(np.uint8).reshape(self.n, size)

    def _publish(self, vin: float | None = None) -> None:
        """Write the present values of every servo into its control table (vectorised)."""
        vin = self.supply_voltage if vin is None else vin
        p = self.p
        tbl = self.table
        if tbl.has_current:
            cur = np.clip(np.rint(self.tau_m / p[:, 0] / tbl.current_unit), -32768, 32767)
        else:  # MX-28: Present Load, 0.1 % of stall torque, sign = direction
            cur = np.clip(np.rint(self.tau_m / (tbl.stall_torque or 1.0) * 1000), -1000, 1000)
        duty = np.where(vin > 0, self.volts / max(vin, 1e-9), 0.0)
        self._put(124, 2, np.clip(np.rint(duty * ct.PWM_FULL_SCALE), -ct.PWM_FULL_SCALE, ct.PWM_FULL_SCALE))
        self._put(126, 2, cur)
        self._put(128, 4, np.rint(self.dtheta / ct.RAD_S_PER_VELOCITY_UNIT))
        self._put(132, 4, np.rint(self.theta / ct.RAD_PER_COUNT + ct.CENTER_COUNTS))
        self._put(144, 2, np.full(self.n, round(vin / ct.VOLTAGE_UNIT)))
        self._put(146, 1, np.clip(np.rint(self.temp), 0, 255))
        self._put(122, 1, (np.abs(self.dtheta) > 10 * ct.RAD_S_PER_VELOCITY_UNIT).astype(np.int64))
        self._put(120, 2, np.full(self.n, int((time.monotonic() - self._t0) * 1000) % 32768))

    def _u(self, k: int, addr: int, size: int, signed: bool = False) -> int:
        return int.from_bytes(self.mem[k, addr: addr + size].tobytes(), "little", signed=signed)

    def _sync_params(self, k: int) -> None:
        """Registers → the firmware law of servo k: P gain → kp, PWM Limit → duty limit."""
        self.p[k, P_KP] = self._u(k, ct.ADDR_P_GAIN, 2) / ct.REGISTER_PER_BAM_KP
        self.p[k, P_MAXPWM] = max(min(self.base[P_MAXPWM], self._u(k, ct.ADDR_PWM_LIMIT, 2) / ct.PWM_FULL_SCALE),
                                  1e-6)
        self.goal[k] = (self._u(k, ct.ADDR_GOAL_POSITION, 4, True) - ct.CENTER_COUNTS) * ct.RAD_PER_COUNT
        self.enable[k] = float(self.mem[k, ct.ADDR_TORQUE_ENABLE] != 0)

    # ------------------------------------------------------------------ control-table access
    def _resolve(self, k: int, addr: int) -> int:
        """Indirect Data n reads/writes the address held in Indirect Address n."""
        if ct.INDIRECT_DATA_0 <= addr < ct.INDIRECT_DATA_0 + ct.N_INDIRECT:
            j = addr - ct.INDIRECT_DATA_0
            return self._u(k, ct.INDIRECT_ADDRESS_0 + 2 * j, 2)
        return addr

    def read_bytes(self, k: int, addr: int, length: int) -> tuple[int, bytes]:
        if addr + length > ct.TABLE_SIZE or length <= 0:
            return pr.ERR_DATA_RANGE, b""
        if addr + length <= ct.INDIRECT_DATA_0 or addr >= ct.INDIRECT_DATA_0 + ct.N_INDIRECT:
            return 0, self.mem[k, addr: addr + length].tobytes()
        out = bytearray()
        for a in range(addr, addr + length):
            t = self._resolve(k, a)
            out.append(int(self.mem[k, t]) if t < ct.TABLE_SIZE else 0)
        return 0, bytes(out)

    def write_bytes(self, k: int, addr: int, data: bytes) -> int:
        """Apply a WRITE to servo k; returns the protocol error number (0 = done)."""
        n = len(data)
        if n == 0 or addr + n > ct.TABLE_SIZE:
            return pr.ERR_DATA_RANGE
        targets = [self._resolve(k, a) for a in range(addr, addr + n)]
        if any(t >= ct.TABLE_SIZE for t in targets):
            return pr.ERR_ACCESS
        torque_on = self.mem[k, ct.ADDR_TORQUE_ENABLE] != 0
        # whole items only, writable, EEPROM (and indirect addresses) only with torque off
        pos = {t: b for t, b in zip(targets, data)}
        touched = {}
        for t in pos:
            it = self.table.at(t)
            if it is None:
                continue
            touched[it.name] = it
        new_vals = {}
        for it in touched.values():
            if not all(a in pos for a in range(it.address, it.address + it.size)):
                return pr.ERR_DATA_LENGTH
            if not it.writable:
                return pr.ERR_ACCESS
            if it.eeprom and torque_on and it.name != "Torque Enable":
                return pr.ERR_ACCESS
            raw = bytes(pos[a] for a in range(it.address, it.address + it.size))
            new_vals[it.name] = (it, int.from_bytes(raw, "little", signed=it.signed))
        if "Goal Position" in new_vals and self.mem[k, 11] == 3:
            v = new_vals["Goal Position"][1]
            if not self._u(k, 52, 4, True) <= v <= self._u(k, 48, 4, True):
                return pr.ERR_DATA_LIMIT
        if "Torque Enable" in new_vals and new_vals["Torque Enable"][1] not in (0, 1):
            return pr.ERR_DATA_RANGE
        if ("Torque Enable" in new_vals and new_vals["Torque Enable"][1] == 1
                and self.hw_error[k] & self.mem[k, 63]):
            return pr.ERR_RESULT_FAIL  # shutdown latched: only REBOOT restores torque
        if "ID" in new_vals:
            new_id = new_vals["ID"][1]
            if not 0 <= new_id <= pr.MAX_ID or (new_id in self.index and self.index[new_id] != k):
                return pr.ERR_DATA_RANGE
        for it, _v in new_vals.values():
            for a in range(it.address, it.address + it.size):
                self.mem[k, a] = pos[a]
        if "ID" in new_vals:
            old = self.ids[k]
            self.ids[k] = new_vals["ID"][1]
            del self.index[old]
            self.index[self.ids[k]] = k
        if "Torque Enable" in new_vals and new_vals["Torque Enable"][1] == 1 and not torque_on:
            pass  # the servo holds its Goal Position register (as the firmware does)
        self._sync_params(k)
        return 0

    def reboot(self, k: int) -> None:
        """RAM area back to defaults, errors cleared, torque off, goal = present position."""
        defaults = np.frombuffer(self.table.defaults(self.ids[k]), dtype=np.uint8)
        self.mem[k, 64:] = defaults[64:]
        self.hw_error[k] = 0
        self.mem[k, ct.ADDR_HW_ERROR] = 0
        counts = int(round(self.theta[k] / ct.RAD_PER_COUNT + ct.CENTER_COUNTS))
        self.mem[k, 116:120] = np.frombuffer(int(counts).to_bytes(4, "little", signed=True), dtype=np.uint8)
        self._registered.pop(k, None)
        self._sync_params(k)
        self._publish(self.p[k, P_VIN])

    # ------------------------------------------------------------------ packet handling
    def _answers(self, k: int, inst: int) -> bool:
        """Status Return Level: 0 → PING only, 1 → PING and reads, 2 → all."""
        if self.silent[k]:
            return False
        level = self.mem[k, 68]
        if inst == pr.INST_PING:
            return True
        if level == 0:
            return False
        if level == 1:
            return inst in (pr.INST_READ, pr.INST_SYNC_READ, pr.INST_BULK_READ)
        return True

    def _status(self, k: int, error: int, params: bytes = b"") -> bytes:
        if self.hw_error[k]:
            error |= pr.ERR_ALERT
        if error & 0x7F:
            self.stats.errors[error & 0x7F] = self.stats.errors.get(error & 0x7F, 0) + 1
        return pr.encode_status(self.ids[k], error, params)

    def _send(self, k: int, packet: bytes) -> None:
        original = packet
        packet, fate, hold = self.reply_faults.apply(packet, self.stats)
        if packet is None:
            if self.truth is not None:
                self.truth.reply(self.ids[k], fate, False, original, math.nan)
            return
        delay = int(self.mem[k, ct.ADDR_RETURN_DELAY]) * ct.RETURN_DELAY_UNIT + hold
        if self.wire_time:
            delay += len(packet) * 10.0 / self.baud
        self.stats.replies += 1
        if delay > 0:  # honour the delay: what is queued goes first, then wait, then this reply
            self._flush()
            time.sleep(delay)
            if self.truth is not None:  # stamped before the write: the client cannot have it earlier
                self.truth.reply(self.ids[k], fate, hold > 0, original, time.monotonic())
            self._write(packet)
        else:  # back-to-back replies leave in one write, as a USB adapter's latency timer would batch them
            if self.truth is not None:
                self.truth.reply(self.ids[k], fate, hold > 0, original, time.monotonic())
            self._out.append(packet)

    def _flush(self) -> None:
        if self._out:
            data = b"".join(self._out)
            self._out.clear()
            self._write(data)

    def _write(self, data: bytes) -> None:
        try:
            os.write(self._master, data)
        except OSError:  # EAGAIN: nobody reads the pty and its buffer is full
            self.stats.overflow += 1

    def handle(self, pkt: pr.Packet, now: float | None = None) -> None:
        """Execute one instruction packet (replies go to the pty)."""
        try:
            self._handle(pkt, now)
        finally:
            self._flush()

    def _handle(self, pkt: pr.Packet, now: float | None = None) -> None:
        if pkt.is_status:
            return  # our own echo or another device's status: not an instruction
        name = pr.INSTRUCTION_NAMES.get(pkt.instruction, f"0x{pkt.instruction:02x}")
        self.stats.instructions[name] = self.stats.instructions.get(name, 0) + 1
        self.advance(time.monotonic() if now is None else now)
        inst, prm, bid = pkt.instruction, pkt.params, pkt.id
        bcast = bid == pr.BROADCAST_ID
        if not bcast and bid not in self.index:
            return
        targets = list(range(self.n)) if bcast else [self.index[bid]]
        if inst == pr.INST_PING:
            model = pr.u16(self.table.model_number) + bytes((_FW_VERSION,))
            for k in sorted(targets, key=lambda k: self.ids[k]):
                if self._answers(k, inst):
                    self._send(k, self._status(k, 0, model))
        elif inst == pr.INST_READ:
            if bcast:
                return
            k = targets[0]
            if len(prm) != 4:
                return self._reply(k, inst, pr.ERR_DATA_LENGTH)
            addr, length = prm[0] | prm[1] << 8, prm[2] | prm[3] << 8
            err, data = self.read_bytes(k, addr, length)
            self._reply(k, inst, err, data)
        elif inst in (pr.INST_WRITE, pr.INST_REG_WRITE):
            if len(prm) < 3:
                for k in targets:
                    self._reply(k, inst, pr.ERR_DATA_LENGTH, broadcast=bcast)
                return
            addr = prm[0] | prm[1] << 8
            for k in targets:
                answers = self._answers(k, inst)  # the level before this write decides (e.g. writing 68)
                if inst == pr.INST_REG_WRITE:
                    self._registered[k] = (addr, bytes(prm[2:]))
                    self.mem[k, 69] = 1
                    err = 0
                elif self.silent[k]:
                    continue
                else:
                    err = self.write_bytes(k, addr, bytes(prm[2:]))
                if answers and not bcast:
                    self._send(k, self._status(k, err))
        elif inst == pr.INST_ACTION:
            for k in targets:
                if k in self._registered:
                    addr, data = self._registered.pop(k)
                    self.mem[k, 69] = 0
                    err = self.write_bytes(k, addr, data)
                else:
                    err = pr.ERR_INSTRUCTION
                self._reply(k, inst, err, broadcast=bcast)
        elif inst == pr.INST_REBOOT:
            for k in targets:
                self._reply(k, inst, 0, broadcast=bcast)
                if not self.silent[k]:
                    self.reboot(k)
        elif inst == pr.INST_SYNC_READ and bcast:
            if len(prm) < 5:
                return
            addr, length = prm[0] | prm[1] << 8, prm[2] | prm[3] << 8
            if self.truth is not None:
                self.truth.begin_read(addr, length, len(prm) - 4, time.monotonic())
            for i in prm[4:]:
                k = self.index.get(i)
                if k is not None and self._answers(k, inst):
                    err, data = self.read_bytes(k, addr, length)
                    self._send(k, self._status(k, err, data))
            if self.truth is not None:
                self.truth.end_read()
        elif inst == pr.INST_SYNC_WRITE and bcast:
            if len(prm) < 4:
                return
            addr, length = prm[0] | prm[1] << 8, prm[2] | prm[3] << 8
            body = prm[4:]
            if length == 0 or len(body) % (length + 1):
                return  # malformed: the firmware drops it (no status for broadcast)
            if self.truth is not None:
                self.truth.sync_write(addr, length, bytes(body), time.monotonic())
            for j in range(0, len(body), length + 1):
                k = self.index.get(body[j])
                if k is not None and not self.silent[k]:
                    self.write_bytes(k, addr, body[j + 1: j + 1 + length])
        elif inst == pr.INST_BULK_READ and bcast:
            if len(prm) % 5:
                return
            for j in range(0, len(prm), 5):
                k = self.index.get(prm[j])
                addr, length = prm[j + 1] | prm[j + 2] << 8, prm[j + 3] | prm[j + 4] << 8
                if k is not None and self._answers(k, inst):
                    err, data = self.read_bytes(k, addr, length)
                    self._send(k, self._status(k, err, data))
        elif inst == pr.INST_BULK_WRITE and bcast:
            j = 0
            while j + 5 <= len(prm):
                i, addr, length = prm[j], prm[j + 1] | prm[j + 2] << 8, prm[j + 3] | prm[j + 4] << 8
                data = prm[j + 5: j + 5 + length]
                if len(data) != length:
                    break
                k = self.index.get(i)
                if k is not None and not self.silent[k]:
                    self.write_bytes(k, addr, data)
                j += 5 + length
        else:
            for k in targets:
                self._reply(k, inst, pr.ERR_INSTRUCTION, broadcast=bcast)

    def _reply(self, k: int, inst: int, err: int, data: bytes = b"", broadcast: bool = False) -> None:
        if broadcast or not self._answers(k, inst):
            return
        self._send(k, self._status(k, err, data))

    def _baud_register(self, baud: int) -> None:
        codes = {9600: 0, 57600: 1, 115200: 2, 1_000_000: 3, 2_000_000: 4, 3_000_000: 5, 4_000_000: 6,
                 4_500_000: 7}
        if baud not in codes:
            raise ValueError(f"baud {baud} is not a Dynamixel rate; valid: {', '.join(map(str, codes))}")
        self.mem[:, 8] = codes[baud]


# ---------------------------------------------------------------------------------------- subprocess
_DEVICE_RE = re.compile(r"^DEVICE (\S+)")


class VirtualBusProcess:
    """``servo-ff virtual-bus ARGS`` (run as ``python -m servo_ff.cli.virtual_bus``) in a subprocess;
    ``.device`` is the pty path it printed."""

    def __init__(self, args: Sequence[str] = (), python: str | None = None, timeout: float = 20.0):
        env = dict(os.environ)
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen([python or sys.executable, "-m", "servo_ff.cli.virtual_bus", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.monotonic() + timeout
        self.device = None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = _DEVICE_RE.match(line)
            if m:
                self.device = m.group(1)
                break
        if self.device is None:
            self.proc.kill()
            err = self.proc.stderr.read()
            raise RuntimeError(f"virtual-bus did not report a device: {err.strip()[-800:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "VirtualBusProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def spawn_virtual_bus(args: Sequence[str] = (), **kw) -> VirtualBusProcess:
    """Start ``servo-ff virtual-bus`` with CLI ``args`` in a subprocess; use as a context manager."""
    return VirtualBusProcess(args, **kw)
