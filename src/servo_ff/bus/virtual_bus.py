"""The virtual bus every servo family shares: a pseudo-terminal whose servos are the simulated actuators.

:class:`VirtualBus` serves the slave end of a pty (``.device``, e.g. ``/dev/pts/7``); a family's subclass (its
row's ``virtual_bus``: :class:`servo_ff.bus.dynamixel.virtual_bus.VirtualBus2`, ``.virtual_p1.VirtualBus1``,
:class:`servo_ff.bus.feetech.virtual_bus.StsVirtualBus`) gives its packets: decoder, instruction handlers,
status packets, byte-wise register rules. Shared, one module per concept: :mod:`.pty_transport` (the pty),
:mod:`.registers` (the register memory, the only copy of every register), :mod:`.virtual_servos` (the physics: the
shared :class:`~servo_ff.models.servo_bank.ServoBank`, advanced by wall-clock time in sub-steps ≤ ``dt_max`` before
every packet and on an idle tick), :mod:`.faults` (reply faults: drop, corrupt, late; scheduled: silence, overload,
supply sag), :mod:`.thermal`, :mod:`.virtual_options` (what the bus is made of); ``truth=True`` keeps a
:class:`.truth.TruthRecord` of every sync read / reply / sync write.

``VirtualBus(ids=range(1, 21), model="mx106")`` builds the bus of the model's family (here Protocol 2.0); use it in
tests as ``with VirtualBus(...) as vb: PortHandler(vb.device) ...``, or in another process:
:func:`spawn_virtual_bus` runs ``python -m servo_ff virtual-bus`` and returns the path.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import sys
import threading
import time

import numpy as np

from ..models import slots
from ..models.servo_bank import ServoLoad  # noqa: F401 (re-exported)
from . import control_table as ct
from .families import load
from .faults import Faults, ReplyFaults, ScheduledFaults  # noqa: F401 (Faults re-exported)
from .injection import InjectionApi
from .power import SupplyPower
from .pty_transport import PtyTransport
from .registers import RegisterMemory
from .thermal import ThermalModel
from .truth import TruthRecord
from .virtual_options import BusStats, VirtualBusOptions
from .virtual_process import VirtualBusProcess, spawn_virtual_bus  # noqa: F401 (re-exported)
from .virtual_servos import VirtualServos

log = logging.getLogger(__name__)


class VirtualBus(InjectionApi):
    """N emulated servos on a pty. ``start()`` serves in a daemon thread; ``serve_forever()`` in the caller.

    ``VirtualBus(options)`` with a :class:`~.virtual_options.VirtualBusOptions`, or ``VirtualBus(**keywords)``
    (:meth:`~.virtual_options.VirtualBusOptions.of`: e.g. ``ids=[1, 2], loads=ServoLoad.pendulum(0.5, 0.2),
    return_delay=0, thermal=True``).

    A family's subclass gives ``answers(k, inst)`` (Status Return Level; never while silent), ``send_status(k,
    error, params)`` (its status packet, through :meth:`emit_status`), ``_instruction(pkt)`` (None: not an
    instruction, e.g. an echo), ``_execute(pkt)`` (its handler table) and the class attributes below.
    """

    # the parts a family's bus gives or replaces
    truth_class = TruthRecord
    registers_class: type[RegisterMemory]  # with the family's byte-wise read / write
    servos_class = VirtualServos
    decoder_class: type  # the stream decoder of its instruction packets: feed(bytes) -> packets, pending, drop_partial
    overload_bit = ct.HW_OVERLOAD  # the error bit a scheduled overload sets
    instruction_names: dict[int, str] = {}  # instruction → name, for the statistics
    title = "servo"  # the family, for the log

    def __new__(cls, options: VirtualBusOptions | None = None, **keywords):
        """``VirtualBus(...)`` itself builds the virtual bus of the family of ``model`` (its row's ``virtual_bus``)."""
        if cls is VirtualBus:
            model = keywords.get("model", VirtualBusOptions.model if options is None else options.model)
            cls = load(ct.control_table(model).protocol, "virtual_bus")
        return super().__new__(cls)

    def __init__(self, options: VirtualBusOptions | None = None, **keywords):
        o = VirtualBusOptions.of(**keywords) if options is None else dataclasses.replace(options, **keywords)
        self.options = o
        self.table = ct.control_table(o.model)
        self._check_table(o)
        self.model = o.model
        self.params = self._actuator(o)
        self.faults = o.faults
        self.rng = np.random.default_rng(self.faults.seed)
        self.reply_faults = ReplyFaults(self.faults, self.rng)
        self.truth: TruthRecord | None = self.truth_class() if o.truth else None
        self.regs = self.registers_class(self.table, o.ids)
        self.n = self.regs.n
        if o.return_delay is not None:
            self.regs.set("Return Delay Time", o.return_delay)
        self.regs.set("Baud Rate", self._baud_code(o.baud))
        self._registers_set()
        self.supply_voltage = float(self.params.firmware.vin if o.supply_voltage is None else o.supply_voltage)
        self.servos = self.servos_class(self.regs, self.params, [o.load_of(i) for i in o.ids], self.supply_voltage)
        self.thermal = ThermalModel(o.thermal, self.n)
        self.scheduled = ScheduledFaults(self.faults, self.n)
        self.power = SupplyPower()
        self.stats = BusStats()
        self.transport = PtyTransport(o.link, self.stats, o.echo)
        self.decoder = self.decoder_class()
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._old_switch: float | None = None
        self._t0 = self._t_last = time.monotonic()
        self._last_rx = 0.0
        self._publish()

    def _check_table(self, o: VirtualBusOptions) -> None:
        """Refuse a control table of another protocol."""

    def _actuator(self, o: VirtualBusOptions):
        return o.actuator()

    def _baud_code(self, baud: int) -> int:
        return ct.BAUD_CODES[baud]

    def _registers_set(self) -> None:
        """The registers hold their power-up values (Return Delay Time, Baud Rate set)."""

    # ------------------------------------------------------------------ views of the parts
    ids = property(lambda self: self.regs.ids, doc="Servo ids (they follow writes of the ID item).")
    index = property(lambda self: self.regs.index, doc="id → servo index.")
    mem = property(lambda self: self.regs.mem, doc="The register memory, (n, TABLE_SIZE) bytes.")
    device = property(lambda self: self.transport.device, doc="The pty's slave path once open.")
    silent = property(
        lambda self: self.scheduled.silent if self.power.on else np.ones(self.n, dtype=bool),
        doc="Servos that do not answer (all while the supply is browned out).",
    )
    theta = property(lambda self: self.servos.bank.theta, doc="Positions [rad] (writable in place).")
    dtheta = property(lambda self: self.servos.bank.dtheta, doc="Velocities [rad/s].")
    tau_m = property(lambda self: self.servos.bank.tau_m, doc="Motor torques [N·m].")
    temp = property(lambda self: self.thermal.temp, doc="Temperatures [°C].")

    @property
    def goal(self) -> np.ndarray:
        """Goal positions [rad] (the Goal Position registers)."""
        return self.table.position_to_rad(self.regs.get("Goal Position"))

    @property
    def enable(self) -> np.ndarray:
        """Torque enable per servo, 0.0 or 1.0 (the Torque Enable registers)."""
        return (self.regs.get("Torque Enable") != 0).astype(np.float64)

    @property
    def hw_error(self) -> np.ndarray:
        """Hardware Error Status per servo (the register)."""
        return self.regs.get("Hardware Error Status")

    @property
    def p(self) -> np.ndarray:
        """Packed actuator parameters per servo, as the registers set them (P gain, PWM limit)."""
        with self._lock:
            self.servos.inputs()
            return self.servos.bank.packed

    # ------------------------------------------------------------------ lifecycle
    def open(self) -> str:
        """Open the pty pair and return the slave device path."""
        if self.device is not None:
            return self.device
        self._warm_up()
        self.transport.open()
        self._t0 = self._t_last = time.monotonic()
        if self.truth is not None:
            self.truth.t0 = self._t0  # the fault clock's origin
        log.info("virtual %s bus on %s: %d × %s, ids %s", self.title, self.device, self.n, self.table.name, self.ids)
        return self.device

    def _warm_up(self) -> None:
        """Compile what serving needs before the pty opens: the physics kernel."""
        self.servos.warm_up()

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
        self.transport.close()

    close = stop

    def __enter__(self) -> VirtualBus:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Read the pty, answer packets, advance physics on an idle tick until :meth:`stop`."""
        if self.device is None:
            self.open()
        idle_tick = self.options.clock.idle_tick
        while not self._stop.is_set():
            try:
                data = self.transport.receive(idle_tick)
            except EOFError:
                break
            now = time.monotonic()
            with self._lock:
                if data:
                    self._last_rx = now
                    for pkt in self.decoder.feed(data):
                        try:
                            self.handle(pkt, time.monotonic())
                        except Exception:  # the bus must outlive one bad packet or physics error
                            self._internal_error(f"error handling {pkt}")
                elif data is None:
                    if self.decoder.pending and now - self._last_rx > 0.02:
                        self.decoder.drop_partial()  # a packet that never finished: like the firmware timeout
                    try:
                        self.advance(now)
                    except Exception:
                        self._internal_error("physics step failed")
                        self._t_last = now

    def _internal_error(self, what: str) -> None:
        """Count an exception caught in the serve loop; its traceback is logged the 1st, 10th, 100th… time."""
        n = self.stats.internal_errors = self.stats.internal_errors + 1
        if math.log10(n).is_integer():
            log.exception("virtual bus: %s (internal error #%d)", what, n)

    # ------------------------------------------------------------------ introspection / injection API
    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    def _k(self, dxl_id: int) -> int:
        if dxl_id not in self.index:
            raise KeyError(f"no servo with id {dxl_id} on this bus (ids {self.ids})")
        return self.index[dxl_id]

    # ------------------------------------------------------------------ physics
    def supply_now(self, t: float) -> float:
        return self.scheduled.supply(t, self.supply_voltage, float(np.abs(self.servos.amps()).sum()))

    def advance(self, now: float) -> None:
        """Advance all servos from the last update to ``now`` (wall clock) in sub-steps ≤ dt_max."""
        elapsed = now - self._t_last
        if elapsed <= 0:
            return
        self._t_last = now
        clock = self.options.clock
        if elapsed > clock.max_catch_up:
            self.stats.clock_jumps += 1
            log.warning("virtual bus: %.3f s without service, simulating only %.3f s", elapsed, clock.max_catch_up)
            elapsed = clock.max_catch_up
        t = now - self._t0
        hw = self.hw_error
        for i in self.scheduled.tick(t, self.index):
            hw[self.index[i]] |= self.overload_bit
            log.info("virtual bus: overload injected on id %d at t=%.2f s", i, t)
        for i in self.scheduled.brownouts(t, self.index):
            self.brown_out(i)
            log.info("virtual bus: id %d browned out and rebooted by itself at t=%.2f s", i, t)
        vin = self.supply_now(t)
        if self.power.update(vin, t) == "on":  # back from a brown-out: every servo restarts by itself
            for i in self.ids:
                self.brown_out(i)
        if not self.power.on:  # no electronics: nothing drives, nothing writes (the load falls under gravity)
            self.regs.set("Torque Enable", 0)
        bank = self.servos.bank
        bank.supply_voltage = self.power.physics_volts(vin)
        self.servos.inputs()
        self.stats.physics_steps += bank.advance_to(bank.time + elapsed, clock.dt_max)
        self.thermal.advance(
            elapsed, self.servos.amps(), bank.packed[:, slots.R], None if bank.thermal is None else bank.thermal.temp
        )
        if self.power.on:
            self._status_after_step(hw, vin)
        self._publish(vin)

    def _status_after_step(self, hw: np.ndarray, vin: float) -> None:
        """The error bits after a physics step: ``hw`` (with scheduled overloads), overheating (thermal model vs
        Temperature Limit), input voltage (supply ``vin`` vs Min/Max Voltage Limit); then the Shutdown rule."""
        if self.thermal.active:
            hw[self.thermal.overheated(self.regs.get("Temperature Limit"))] |= ct.HW_OVERHEATING
        vraw = vin / ct.VOLTAGE_UNIT
        bad_v = (vraw < self.regs.get("Min Voltage Limit")) | (vraw > self.regs.get("Max Voltage Limit"))
        self._apply_shutdown(np.where(bad_v, hw | ct.HW_INPUT_VOLTAGE, hw & ~ct.HW_INPUT_VOLTAGE))

    def _apply_shutdown(self, hw: np.ndarray) -> None:
        """Hardware Error Status := ``hw``; a bit the Shutdown register selects turns the torque off."""
        self.regs.set("Hardware Error Status", hw)
        trip = (hw & self.regs.get("Shutdown")) != 0
        if trip.any():
            self.regs.set("Torque Enable", 0, trip)

    def _publish(self, vin: float | None = None) -> None:
        self.servos.publish(self.supply_voltage if vin is None else vin, self.temp, time.monotonic() - self._t0)

    # ------------------------------------------------------------------ register access, REBOOT
    def read_bytes(self, k: int, addr: int, length: int) -> tuple[int, bytes]:
        return self.regs.read(k, addr, length)

    def write_bytes(self, k: int, addr: int, data: bytes) -> int:
        """Apply a WRITE to servo k; returns the protocol error number (0 = done)."""
        return self.regs.write(k, addr, data)

    def reboot(self, k: int) -> None:
        """RAM area back to defaults, errors cleared, torque off, goal = present position."""
        self.regs.reboot(k)
        self.servos.reboot(k)
        self._publish(self.servos.bank.supply_voltage)

    # ------------------------------------------------------------------ packet handling
    def emit_status(self, k: int, error: int, original: bytes, params: bytes) -> None:
        """Send servo k's status packet ``original`` (its error bits ``error`` counted, its data ``params``): reply
        faults, Return Delay Time (and wire time) before it leaves; the truth record sees it."""
        if error:
            self.stats.errors[error] = self.stats.errors.get(error, 0) + 1
        packet, fate, hold = self.reply_faults.apply(original, self.stats)
        if packet is None:
            if self.truth is not None:
                self.truth.reply(self.ids[k], fate, False, math.nan, params)
            return
        delay = self.regs.value(k, "Return Delay Time") * ct.RETURN_DELAY_UNIT + hold
        if self.options.wire_time:
            delay += len(packet) * 10.0 / self.options.baud
        self.stats.replies += 1
        if delay > 0:  # honour the delay: what is queued goes first, then wait, then this reply
            self.transport.flush()
            time.sleep(delay)
            self.stats.held_s += delay
            if self.truth is not None:  # stamped before the write: the client cannot have it earlier
                self.truth.reply(self.ids[k], fate, hold > 0, time.monotonic(), params)
            self.transport.write(packet)
        else:  # back-to-back replies leave in one write, as a USB adapter's latency timer would batch them
            if self.truth is not None:
                self.truth.reply(self.ids[k], fate, hold > 0, time.monotonic(), params)
            self.transport.queue(packet)

    def reply(self, k: int, inst: int, err: int, data: bytes = b"", broadcast: bool = False) -> None:
        if broadcast or not self.answers(k, inst):
            return
        self.send_status(k, err, data)

    def handle(self, pkt, now: float | None = None) -> None:
        """Execute one instruction packet (replies go to the pty)."""
        try:
            inst = self._instruction(pkt)
            if inst is None:
                return
            name = self.instruction_names.get(inst, f"0x{inst:02x}")
            self.stats.instructions[name] = self.stats.instructions.get(name, 0) + 1
            self.advance(time.monotonic() if now is None else now)
            self._execute(pkt)
        finally:
            self.transport.flush()
