"""What the three buses (Dynamixel 2.0, Dynamixel 1.0, Feetech STS) share around their per-cycle sync read.

:class:`SyncReadBus` is a mixin of :class:`.bus.DynamixelBus` (and so :class:`.bus_p1.DynamixelBus1`) and
:class:`servo_ff.bus.feetech.bus.FeetechBus`: the port's open/close, the read groups of the servos not skipped, the
accounting of a missed reply, the skip of a servo that misses ``skip_after`` sync reads in a row and its re-probe
(one PING per ``probe_period_s``, round robin), goal checks and the cycle (read, then write).

A bus calls :meth:`SyncReadBus._init_bus` first (``config``, ``table``, ``kt``, ``port``, ``stats``), provides ``ph``,
``_name`` and:

* ``port_class`` — its SDK port adapter (a :class:`~.select_port.SelectPort`);

* ``_port_kind`` — "Dynamixel" / "Feetech", for the error messages; ``_log`` — the logger of its module;
* ``_build_groups()`` — its two readers (state, health) in ``_read`` / ``_health``, then :meth:`_fill_groups`;
* ``_answers_ping(i)`` — one PING of a skipped servo: did it answer?
* ``read_state`` (on :meth:`SyncReadBus._send_state_read`), ``write_goals``.
"""

from __future__ import annotations

import dataclasses
import logging
import termios
import time

from . import control_table as ct
from .bus_types import BusConfig, BusError, JointState, joint_state
from .goals import GoalLimits
from .transactions import CommStats


class SyncReadBus:
    _port_kind = "servo"
    _log = logging.getLogger(__name__)
    port_class: type

    def _init_bus(self, config: BusConfig) -> None:
        """``config``, its control ``table`` and ``kt``, the (closed) ``port`` and the per-servo bookkeeping. Until
        setup() has written (or read) Return Delay Time, replies are timed with the table's default (250 → 500 µs)."""
        self.config = config
        self.table = ct.control_table(config.model)
        self.kt = config.kt if config.kt is not None else self.table.kt
        delay = ct.RETURN_DELAY_UNIT * self.table.item("Return Delay Time").default
        self.port = self.port_class(config.port, config.latency_timer_ms, config.timeout_ms, delay)
        self._delays: dict[int, int] = {}  # Return Delay Time [2 µs] per servo, known after setup()
        self._init_servos(config)

    def _init_servos(self, config: BusConfig) -> None:
        """The per-servo bookkeeping (after ``self.port`` exists)."""
        self.ids: list[int] = list(config.ids)  # active (answering) servos
        self.missing: list[int] = []
        self.refused: dict[int, str] = {}  # id → why its set-up refused it, left out (setup(leave_out=True))
        self.stats: dict[int, CommStats] = {i: CommStats() for i in config.ids}
        self.port.stats = self.stats
        self.port.ledger.horizon_s = config.late_horizon_s
        self.cycles = 0
        self.state_reads = 0  # state sync reads sent
        self.implausible = 0  # state replies through the frame check whose values no servo reports (range check)
        self._asked: tuple[int, ...] = tuple(self.ids)  # ids in the sync reads (not skipped)
        self._next_probe = 0.0
        self._probe_turn = 0
        self._skipped_at: dict[int, float] = {}
        self.limits = GoalLimits(self.table, config)
        self.lower, self.upper = self.limits.lower, self.limits.upper
        self.servo_ranges: dict[int, tuple[int, int, str]] = {}  # id → Min/Max Position Limit counts read at set-up
        self.torque_on: set[int] = set()  # servos this bus last turned torque on (torque(), set-up and reboot clear)
        self.modes: dict[int, int] = {}  # id → Operating Mode read at set-up (2.0, STS; :mod:`.operating_modes`)
        self._read = None
        self._health = None
        self._is_open = False

    # --------------------------------------------------------------- port
    def _before_open(self) -> None:
        """Work to do before the port opens (e.g. compile the stream scanner)."""

    def open(self):
        self._before_open()
        try:
            ok = self.port.openPort() and self.port.setBaudRate(self.config.baud)
        except Exception as e:  # serial.SerialException, OSError
            raise BusError(f"cannot open {self._port_kind} port {self.config.port!r}: {e}") from None
        if not ok:
            raise BusError(f"cannot set baud {self.config.baud} on {self.config.port!r}")
        self._is_open = True
        self._build_groups()
        return self

    def close(self) -> None:
        if self._is_open:
            self.port.closePort()
            self._is_open = False

    def __enter__(self):
        return self.open() if not self._is_open else self

    def __exit__(self, *exc) -> None:
        self.close()

    def _fill_groups(self) -> None:
        """Put every servo not skipped into both readers."""
        self._asked = tuple(i for i in self.ids if not self.stats[i].skipping)
        self._stat_list = [self.stats[i] for i in self.ids]
        for i in self._asked:
            self._read.addParam(i)
            self._health.addParam(i)
        self._read.makeParam()
        self._health.makeParam()

    # --------------------------------------------------------------- skipped servos
    def _missed(self, st: CommStats, i: int, why: str, bus_alive: bool, stamp: float) -> None:
        """Count a sync read without a valid reply from servo ``i``; ``skip_after`` timeouts in a row skip it
        (unless nobody answered — a bus outage — or it is the last servo asked). "unreached" (a Protocol 1.0
        BULK_READ chain broken before it) is not its miss."""
        setattr(st, why, getattr(st, why) + 1)
        if why == "unreached":
            return
        st.last_error = why
        if why != "timeouts":
            st.misses = 0
        elif bus_alive:
            st.misses += 1
            if st.misses >= self.config.skip_after and len(self._asked) > 1:
                self._skip(i, stamp)

    def _skip(self, i: int, now: float) -> None:
        st = self.stats[i]
        st.skipping = True
        st.last_error = f"skipped after {st.misses} consecutive missed replies"
        self._skipped_at[i] = now
        self._log.warning(
            "id %d%s: %d consecutive sync reads without a reply; skipped, re-probed every %.3g s",
            i,
            self._name(i),
            st.misses,
            self.config.probe_period_s,
        )
        if self._next_probe <= now:
            self._next_probe = now + self.config.probe_period_s
        self._build_groups()

    def _probe(self, now: float) -> None:
        """PING one skipped servo (round robin) once per ``probe_period_s``; an answer puts it back."""
        skipped = [i for i in self.ids if self.stats[i].skipping]
        if not skipped or now < self._next_probe:
            return
        self._next_probe = now + self.config.probe_period_s
        i = skipped[self._probe_turn % len(skipped)]
        self._probe_turn += 1
        st = self.stats[i]
        st.probes += 1
        if self._answers_ping(i):
            st.skipping, st.misses, st.last_error = False, 0, ""
            self._log.warning(
                "id %d%s answers again after %.3g s; back in the sync reads",
                i,
                self._name(i),
                now - self._skipped_at.pop(i, now),
            )
            self._build_groups()

    def join(self, i: int, leave_out: bool = False) -> bool:
        """One PING of ``i``, an id missing at :meth:`connect`; if it answers, it is set up (torque off, …) and put
        back among the active ids (configured order), in the reads and writes from the next cycle. False: silent,
        or refused at set-up and left out (``leave_out``: see :meth:`setup`; ``refused`` says why)."""
        if i not in self.missing or not self._answers_ping(i):
            return False
        self.setup([i], leave_out)
        if i in self.refused:
            return False
        self.missing = [m for m in self.missing if m != i]
        self.ids = [j for j in self.config.ids if j in self.ids or j == i]
        self.stats[i].misses = 0
        if self._is_open:
            self._build_groups()
        return True

    def servo_status(self, i: int) -> str:
        """One line for diagnostics: "ok", or why the servo is skipped."""
        st = self.stats[i]
        if st.skipping:
            since = time.monotonic() - self._skipped_at.get(i, time.monotonic())
            return (
                f"not answering: skipped for {since:.3g} s after {self.config.skip_after} consecutive missed "
                f"replies; re-probed every {self.config.probe_period_s:g} s ({st.probes} probes)"
            )
        return "ok"

    @property
    def skipped(self) -> list[int]:
        return [i for i in self.ids if self.stats[i].skipping]

    # --------------------------------------------------------------- the cycle
    def _send_state_read(self) -> float:
        """The cycle's state sync read of the servos asked (none asked: nothing sent); ``state_reads`` counts the
        instructions actually written. Returns the time after it [s, monotonic]."""
        if self._asked:
            g = self._read
            sent = g.serial
            g.txRxPacket()
            self.state_reads += g.serial - sent
        return time.monotonic()

    def _all_answered(self) -> None:
        """Every servo's statistics after a sync read that they all answered in one block."""
        for st in self._stat_list:
            st.ok += 1
            st.misses = 0

    def stats_summary(self) -> str:
        return "; ".join(
            f"id {i}: ok {s.ok}, timeouts {s.timeouts}, corrupt {s.corrupt}, late {s.late}, wrong "
            f"length {s.wrong_length}, {self._status_summary(i, s)}, skipped {s.skipped}"
            + (" (SKIPPED)" if s.skipping else "")
            for i, s in self.stats.items()
        )

    def _status_summary(self, i: int, st: CommStats) -> str:
        """Servo ``i``'s status errors, for :meth:`stats_summary`."""
        return f"status errors {st.status_errors}"

    def _state(self, ids, raw, valid, stamp, stamps) -> JointState:
        return joint_state(self.table, self.kt, self.config.center, ids, raw, valid, stamp, stamps)

    def check_goals(self, goals):
        """Validate goals ({id: rad} or an array aligned with ``ids``) against finiteness and joint limits;
        returns (ids, goals [rad]). Raises :class:`GoalRejected` (and logs) without writing anything."""
        return self.limits.check(goals, self.ids, self.missing)

    def joint_limits_refusal(self, joint_limits: dict[int, tuple[float, float]]) -> str | None:
        """Why new joint limits {id: (lower, upper)} [rad] cannot be the bus's, checked as at open and set-up (the
        table's position range, each set-up servo's Min/Max Position Limit), or None."""
        try:
            dataclasses.replace(self.config, joint_limits=dict(joint_limits))  # the table's range, as at open
        except ValueError as e:
            return str(e)
        return next(filter(None, (self._servo_range_refusal(i, lo, hi) for i, (lo, hi) in joint_limits.items())), None)

    def set_joint_limits(self, joint_limits: dict[int, tuple[float, float]]) -> None:
        """New joint limits {id: (lower, upper)} [rad] for the goal check of every later write (a node's limits
        changed at run time); ValueError naming the id and joint (:meth:`joint_limits_refusal`), nothing changed."""
        refusal = self.joint_limits_refusal(joint_limits)
        if refusal:
            raise ValueError(refusal)
        self.config = dataclasses.replace(self.config, joint_limits=dict(joint_limits))
        self.limits = GoalLimits(self.table, self.config)
        self.lower, self.upper = self.limits.lower, self.limits.upper

    def cycle(self, goals, p_gains=None) -> JointState:
        """Read the state, then write the goals. Goals are checked before the read."""
        checked = self.check_goals(goals)
        try:
            state = self.read_state()
            self.write_goals(goals, p_gains, _checked=checked)
        except BusError:
            raise
        except (OSError, termios.error) as e:  # the adapter vanished (pyserial raises termios.error on a pty)
            raise BusError(f"{self._port_kind} port {self.config.port!r} failed: {e}") from e
        self.cycles += 1
        return state
