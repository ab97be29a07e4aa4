"""Single-servo transactions every bus shares, with retries: ping, scan, connect, torque, the per-servo setup loop and
its position-limit check.

:class:`ServoTransactions` is a part of every bus (it uses the bus's ``port``, ``ph`` (the SDK packet handler),
``config``, ``table``, ``stats``, ``ids``/``missing``, ``lower``/``upper`` and ``_build_groups``). A family's
subclass (:class:`servo_ff.bus.dynamixel.servo_transactions.DynamixelTransactions`,
:class:`servo_ff.bus.feetech.transactions.StsTransactions`) gives what its protocol decides: the SDK's failure
codes, what a reply's status byte means (:meth:`~ServoTransactions._status_failed`), a broadcast scan, items by
name, reboot, the hardware error and ``_setup_one``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from . import control_table as ct
from . import operating_modes
from .bus_types import BusError, GoalRejected
from .transactions import CommStats

log = logging.getLogger(__name__)

COMM_SUCCESS = 0  # the SDKs' (dynamixel_sdk, scservo_sdk) result of a transaction that got its reply
RETRY_BACKOFF_S = 0.005  # first pause before a single-servo retry [s]; doubles per retry


class ServoTransactions:
    """One servo at a time, each call with up to ``config.retries`` retries."""

    rx_timeout: int  # the SDK's result codes of a missing and of a garbled reply
    rx_corrupt: int
    max_id: int  # the largest servo id of the protocol (a scan's default range)

    def _count_transaction(self) -> None:
        """One instruction sent (a bus whose port counts them overrides this)."""
        self.transactions += 1

    def _status_failed(self, i: int, error: int) -> bool:
        """Whether a reply's status byte ``error`` makes it a failure (counted and noted in ``stats[i]``)."""
        raise NotImplementedError

    def _count(self, i: int, result: int, error: int = 0) -> bool:
        st = self.stats.setdefault(i, CommStats())
        if result == COMM_SUCCESS:
            if self._status_failed(i, error):
                return False
            st.ok += 1
            return True
        if result == self.rx_timeout:
            st.timeouts += 1
        elif result == self.rx_corrupt:
            st.corrupt += 1
        st.last_error = self.ph.getTxRxResult(result)
        return False

    def _retry(self, i: int, fn, *args):
        """Run one SDK call with up to ``retries`` retries, 5 ms · 2^k apart (a device that stalls for a moment
        would fail quick retries too); returns its full result tuple (last attempt)."""
        for attempt in range(self.config.retries + 1):
            if attempt:
                time.sleep(RETRY_BACKOFF_S * 2 ** (attempt - 1))
            out = fn(self.port, i, *args)
            self._count_transaction()
            res = out if isinstance(out, tuple) else (out,)
            result, error = (res[-2], res[-1]) if len(res) >= 2 else (res[0], 0)
            if self._count(i, result, error):
                return out
            if attempt < self.config.retries:
                self.stats[i].retries += 1
        return out

    def ping(self, servo_id: int) -> int | None:
        """Model number of ``servo_id``, or None if it does not answer (after retries)."""
        model, result, _ = self._retry(servo_id, self.ph.ping)
        return model if result == COMM_SUCCESS else None

    def _broadcast_scan(self, ids: Iterable[int]) -> dict[int, int]:
        raise ValueError(f"{self.table.protocol}: no broadcast PING; scan id by id")

    def scan(self, ids: Iterable[int] | None = None, broadcast: bool = False) -> dict[int, int]:
        """{id: model number} of the servos that answer (default ids: all of the protocol): one PING per id (no
        retries), or with ``broadcast=True`` one broadcast PING where the protocol has one."""
        ids = list(range(0, self.max_id + 1) if ids is None else ids)
        if ids:
            self._refuse_echo(ids[0])
        if broadcast:
            return self._broadcast_scan(ids)
        found = {}
        for i in ids:
            model, result, _ = self.ph.ping(self.port, i)
            self._count_transaction()
            if result == COMM_SUCCESS:
                found[i] = model
        return found

    def _refuse_echo(self, servo_id: int) -> None:
        """Before anything is written: an adapter that echoes what it sends raises BusError (on Protocol 1.0 and STS
        an instruction's echo is a valid status packet, read as the servo's reply; on 2.0 one longer than the reply
        is taken for a garbled reply); the port then refuses every instruction."""
        echo = self.port.echoes(servo_id)
        if echo is None:
            return
        self.port.refusal = (
            f"the adapter on {self.config.port} echoes what it sends (READ {echo.hex(' ')} came back byte for byte, "
            "and an echo passes for the servo's reply): use one with direction control, e.g. U2D2 / URT-1"
        )
        raise BusError(self.port.refusal)

    def connect(self) -> tuple[list[int], list[int]]:
        """An echoing adapter refused (:meth:`_refuse_echo`); then ping the configured ids; missing ones are logged
        (found and missing listed) and left out of every later transaction. A model number without a control table
        of this protocol raises :class:`BusError` naming the id, the number and the known tables; so does another
        model whose table puts the bus's items elsewhere (its registers would be misread); another model of the same
        layout is logged. Raises if none answers."""
        self._refuse_echo(self.config.ids[0])
        found, missing, other = [], [], []
        protocol = self.table.protocol
        known = {t.model_number: k for k, t in ct.CONTROL_TABLES.items() if t.protocol == protocol}
        listing = ", ".join(f"{n} ({k})" for n, k in sorted(known.items()))
        for i in self.config.ids:
            model = self.ping(i)
            if model is None:
                missing.append(i)
                continue
            where = f"id {i}{self._name(i)} on {self.config.port} reports model number {model}"
            if model not in known:
                raise BusError(f"{where}: no control table for it over protocol {protocol}; known: {listing}")
            if model != self.table.model_number:
                if not same_layout(self.table, ct.CONTROL_TABLES[known[model]]):
                    raise BusError(
                        f"{where} ({known[model]}), whose control table differs from {self.config.model} "
                        f"({self.table.name}, {self.table.model_number}) the bus is configured for; known: {listing}"
                    )
                other.append(f"{i} ({known[model]})")
            found.append(i)
        return self._adopt_scan(found, missing, other)

    def _adopt_scan(self, found: list[int], missing: list[int], other: list[str]) -> tuple[list[int], list[int]]:
        """The end of every bus's ``connect``: log the servos of another known model (``other``), raise when none
        answered, log the missing ids (the caller decides whether to go on without them), keep ``found`` as the
        active ids."""
        kind, logger = getattr(self, "_port_kind", "servo"), getattr(self, "_log", log)
        if other:
            logger.warning(
                "ids %s report another model than %s (%d)", ", ".join(other), self.table.name, self.table.model_number
            )
        if not found:
            raise BusError(
                f"no {kind} servo answered on {self.config.port} at {self.config.baud} baud; "
                f"expected ids {self.config.ids}"
            )
        if missing:
            logger.error(
                "%s bus %s: found ids %s, MISSING ids %s (not answering)", kind, self.config.port, found, missing
            )
        self.ids, self.missing = found, missing
        if self._is_open:
            self._build_groups()
        return found, missing

    def torque(self, enable: bool, ids: Iterable[int] | None = None) -> None:
        """Torque Enable of ``ids`` (default: every active servo); :attr:`torque_on` follows each write."""
        for i in self.ids if ids is None else ids:
            self.torque_on.discard(i)
            self.write_item(i, "Torque Enable", 1 if enable else 0)
            if enable:
                self.torque_on.add(i)

    def clear_shutdown(self, ids: Iterable[int] | None = None) -> None:
        """Undo the servos' own alarm shutdown where it lives in a register the user's torque-on must restore
        (Protocol 1.0: Torque Limit, :meth:`.dynamixel.bus_p1.DynamixelBus1.clear_shutdown`); nothing here (2.0:
        REBOOT; STS: a write of Torque Enable)."""

    def setup(self, ids: Iterable[int] | None = None, leave_out: bool = False) -> None:
        """Per servo (default: every active, not skipped one) the family's ``_setup_one`` (torque off, Return Delay
        Time, its own registers, the position limits checked against the joint limits). Each servo gets
        ``retries`` more attempts; raises :class:`BusError` naming the one that failed. A servo whose own
        configuration is refused (:class:`GoalRejected`: an Operating Mode that ignores Goal Position, a Min/Max
        Position Limit narrower than its joint limits) raises it, or with ``leave_out`` is left out as a missing one
        is (:meth:`_leave_out`); BusError when that leaves no servo."""
        todo = [i for i in self.ids if not self.stats[i].skipping] if ids is None else list(ids)
        for i in todo:
            self.torque_on.discard(i)  # every family's set-up turns torque off
            try:
                self._setup_retried(i)
            except GoalRejected as e:
                if not leave_out:
                    raise
                self._leave_out(i, str(e))
        if self._delays:
            self.port.set_return_delay(max(self._delays.values()) * ct.RETURN_DELAY_UNIT)
        if leave_out and not self.ids:
            raise BusError("no servo left to drive: " + "; ".join(self.refused.values()))

    def _setup_retried(self, i: int) -> None:
        """``_setup_one(i)`` with ``retries`` more attempts on a BusError (GoalRejected is not retried)."""
        for attempt in range(self.config.retries + 1):
            try:
                self._setup_one(i)
                return
            except BusError as e:
                if attempt == self.config.retries:
                    raise BusError(
                        f"setup of id {i}{self._name(i)} failed after {attempt + 1} attempt(s): {e}"
                    ) from None
                log.warning("setup of id %d: %s; retrying", i, e)
                time.sleep(4 * RETRY_BACKOFF_S * 2**attempt)

    def _leave_out(self, i: int, why: str) -> None:
        """Servo ``i``, refused at set-up (``why``), left out of every later read, write and torque switch (out of
        ``ids`` and ``missing``: never probed, its EEPROM item is the user's to set) with torque off as its set-up
        wrote it; ``refused`` keeps why until a new bus sets it up (configure). Its range and mode are forgotten:
        the joint limits are not checked against a servo never driven."""
        self.refused[i] = why
        self.ids = [j for j in self.ids if j != i]
        self.missing = [j for j in self.missing if j != i]
        self.servo_ranges.pop(i, None)
        self.modes.pop(i, None)
        if self._is_open:
            self._build_groups()

    def _check_operating_mode(self, i: int) -> None:
        """Operating Mode of servo ``i`` read and kept (``modes``); one that does not go to Goal Position is refused,
        :class:`GoalRejected` naming the id, joint, mode and why (:mod:`.operating_modes`). Never written (an EEPROM
        item): the user sets it."""
        self.modes[i] = mode = self.read_item(i, "Operating Mode")
        operating_modes.check(self.table.protocol, mode, f"id {i}{self._name(i)}")

    def _answer_every_instruction(self, i: int, level: int) -> None:
        """Status Return Level of servo ``i`` raised to ``level`` (every instruction answered), before any write
        that waits for its status: read first (a READ is answered below that level), and if lower or unanswered
        written without waiting for a status (the level before a write decides whether it is answered), then read
        back; not saved where the protocol has an EPROM lock. BusError naming Status Return Level otherwise."""
        try:
            was: int | None = self.read_item(i, "Status Return Level")
        except BusError:
            was = None  # Protocol 1.0 at 0 answers PING only
        if was is not None and was >= level:
            return
        it = self.table.item("Status Return Level")
        result = self.ph.write1ByteTxOnly(self.port, i, it.address, level)
        self._count_transaction()
        try:
            now = self.read_item(i, "Status Return Level") if result == COMM_SUCCESS else None
        except BusError as e:
            now, why = None, str(e)
        else:
            why = "" if result == COMM_SUCCESS else self.ph.getTxRxResult(result)
        if now is None or now < level:
            raise BusError(
                f"Status Return Level of id {i}{self._name(i)} is {'unreadable' if was is None else was}; writing "
                f"{level} (every instruction answered) failed: {why or f'it reads {now}'}"
            )
        log.info("id %d%s: Status Return Level %s -> %d (every instruction answered)", i, self._name(i), was, level)

    def _return_delay(self, i: int, **write) -> None:
        """Read servo ``i``'s Return Delay Time [2 µs]; write the configured one only when it differs (an EEPROM
        item: no write, no wear, at a set-up that finds it in place), one info line when written; remember it."""
        now = self.read_item(i, "Return Delay Time")
        want = self.config.return_delay
        if want is not None and now != want:
            self.write_item(i, "Return Delay Time", want, **write)
            log.info("id %d%s: Return Delay Time %d -> %d (2 µs units)", i, self._name(i), now, want)
            now = want
        self._delays[i] = now

    def _check_position_limits(self, i: int, limit: str = "Min/Max Position Limit") -> None:
        """Raise :class:`GoalRejected` when the joint limits of servo ``i`` exceed its Min/Max Position Limit
        (``limit``: the register's name in the servo's manual)."""
        lo_c, hi_c = self.read_item(i, "Min Position Limit"), self.read_item(i, "Max Position Limit")
        self.servo_ranges[i] = (lo_c, hi_c, limit)  # kept: new joint limits are checked against it (no bus read)
        refusal = self._servo_range_refusal(i, self.lower[i], self.upper[i])
        if refusal:
            raise GoalRejected(refusal)

    def _servo_range_refusal(self, i: int, lower: float, upper: float) -> str | None:
        """Why joint limits (``lower``, ``upper``) [rad] of servo ``i`` exceed the Min/Max Position Limit it
        reported at set-up (None: within, or not read)."""
        if i not in self.servo_ranges:
            return None
        lo_c, hi_c, limit = self.servo_ranges[i]
        rpc, c = self.table.rad_per_count, self.config.center
        lo, hi = (lo_c - c) * rpc, (hi_c - c) * rpc
        if lower < lo or upper > hi:
            return (
                f"id {i}{self._name(i)}: joint limits ({lower:.6g}, {upper:.6g}) rad "
                f"exceed the servo's {limit} ({lo:.6g}, {hi:.6g}) rad (counts {lo_c}..{hi_c})"
            )
        return None

    def _name(self, i: int) -> str:
        names = self.config.names or {}
        return f" (joint {names[i]!r})" if i in names else ""


def same_layout(bus: ct.ControlTable, servo: ct.ControlTable) -> bool:
    """Whether every item of the ``bus``'s table is at the same address and size in the ``servo``'s table."""
    return all(
        (o := servo.by_name.get(it.name)) is not None and (o.address, o.size) == (it.address, it.size)
        for it in bus.items
    )
