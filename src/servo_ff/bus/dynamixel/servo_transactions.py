"""Single-servo transactions of the Dynamixel bus, with retries: ping, scan, connect, control-table items by name,
torque, reboot, and the per-servo setup (Return Delay Time, indirect addresses, position limits).

:class:`ServoTransactions` is a part of :class:`~.bus.DynamixelBus` (it uses the bus's ``port``, ``ph``,
``config``, ``table``, ``stats``, ``ids``/``missing``, ``lower``/``upper`` and ``_build_groups``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

import dynamixel_sdk as sdk

from .. import control_table as ct
from ..bus_types import GAIN_GOAL_INDIRECT, HEALTH_INDIRECT, BusError, GoalRejected
from ..transactions import CommStats
from . import protocol as pr

log = logging.getLogger(__name__)

COMM_SUCCESS = sdk.COMM_SUCCESS
RETRY_BACKOFF_S = 0.005  # first pause before a single-servo retry [s]; doubles per retry


class ServoTransactions:
    """One servo at a time, each call with up to ``config.retries`` retries."""

    transactions: int

    def _count(self, i: int, result: int, error: int = 0) -> bool:
        st = self.stats.setdefault(i, CommStats())
        if result == COMM_SUCCESS:
            if error & 0x7F:
                st.status_errors += 1
                st.last_error = self.ph.getRxPacketError(error)
                return False
            st.ok += 1
            return True
        if result == sdk.COMM_RX_TIMEOUT:
            st.timeouts += 1
        elif result == sdk.COMM_RX_CORRUPT:
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
            self.transactions += 1
            res = out if isinstance(out, tuple) else (out,)
            result, error = (res[-2], res[-1]) if len(res) >= 2 else (res[0], 0)
            if self._count(i, result, error):
                return out
            if attempt < self.config.retries:
                self.stats[i].retries += 1
        return out

    def ping(self, dxl_id: int) -> int | None:
        """Model number of ``dxl_id``, or None if it does not answer (after retries)."""
        model, result, error = self._retry(dxl_id, self.ph.ping)
        return model if result == COMM_SUCCESS else None

    def scan(self, ids: Iterable[int] = range(0, pr.MAX_ID + 1), broadcast: bool = False) -> dict[int, int]:
        """{id: model number} of the servos that answer: one PING per id (no retries), or with
        ``broadcast=True`` one broadcast PING (the SDK then listens for ~0.8 s, the time 252 replies take)."""
        if broadcast:
            data, result = self.ph.broadcastPing(self.port)
            self.transactions += 1
            wanted = set(ids)
            return {i: v[0] for i, v in sorted(data.items()) if i in wanted}
        found = {}
        for i in ids:
            model, result, _ = self.ph.ping(self.port, i)
            self.transactions += 1
            if result == COMM_SUCCESS:
                found[i] = model
        return found

    def connect(self) -> tuple[list[int], list[int]]:
        """Ping the configured ids; missing ones are logged (found and missing listed) and left out of every
        later transaction. Raises :class:`BusError` if none answers or a model number is unexpected."""
        found, missing, wrong = [], [], []
        for i in self.config.ids:
            model = self.ping(i)
            if model is None:
                missing.append(i)
                continue
            if model != self.table.model_number:
                wrong.append(f"{i} (model {model})")
            found.append(i)
        return self._adopt_scan(found, missing, wrong)

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
                "%s bus %s: found ids %s, MISSING ids %s (not answering)",
                kind,
                self.config.port,
                found,
                missing,
            )
        self.ids, self.missing = found, missing
        if self._is_open:
            self._build_groups()
        return found, missing

    def read_item(self, dxl_id: int, name: str) -> int:
        """Raw value of control-table item ``name`` (signed where the item is); raises BusError on failure."""
        it = self.table.item(name)
        fn = {1: self.ph.read1ByteTxRx, 2: self.ph.read2ByteTxRx, 4: self.ph.read4ByteTxRx}[it.size]
        value, result, error = self._retry(dxl_id, fn, it.address)
        if result != COMM_SUCCESS or error & 0x7F:
            raise BusError(f"read {name!r} from id {dxl_id}: {self.stats[dxl_id].last_error}")
        if it.signed and value >= 1 << (8 * it.size - 1):
            value -= 1 << (8 * it.size)
        return int(value)

    def write_item(self, dxl_id: int, name: str, value: int) -> None:
        it = self.table.item(name)
        if not it.writable:
            raise ValueError(f"{name!r} is read-only")
        value = int(value)
        lo, hi = (-(1 << (8 * it.size - 1)), (1 << (8 * it.size - 1)) - 1) if it.signed else (0, (1 << 8 * it.size) - 1)
        if not lo <= value <= hi:
            raise ValueError(f"{name!r} value {value} outside {lo}..{hi}")
        fn = {1: self.ph.write1ByteTxRx, 2: self.ph.write2ByteTxRx, 4: self.ph.write4ByteTxRx}[it.size]
        result, error = self._retry(dxl_id, fn, it.address, value & ((1 << 8 * it.size) - 1))
        if result != COMM_SUCCESS or error & 0x7F:
            raise BusError(f"write {name!r}={value} to id {dxl_id}: {self.stats[dxl_id].last_error}")

    def torque(self, enable: bool, ids: Iterable[int] | None = None) -> None:
        for i in self.ids if ids is None else ids:
            self.write_item(i, "Torque Enable", 1 if enable else 0)

    def reboot(self, dxl_id: int) -> None:
        """REBOOT instruction (clears a latched hardware error; torque comes back off)."""
        result, error = self._retry(dxl_id, self.ph.reboot)
        if result != COMM_SUCCESS:
            raise BusError(f"reboot id {dxl_id}: {self.stats[dxl_id].last_error}")

    def hardware_error(self, dxl_id: int) -> int:
        """Hardware Error Status (address 70) of one servo; decode with ``control_table.hardware_error_text``."""
        return self.read_item(dxl_id, "Hardware Error Status")

    def setup(self, ids: Iterable[int] | None = None) -> None:
        """Per servo (default: every active, not skipped one): torque off, Return Delay Time, indirect addresses for
        :meth:`read_health` (and the P-gain write), and a check of its Min/Max Position Limit against the joint
        limits. Each servo gets ``retries`` more attempts; raises :class:`BusError` naming the one that failed."""
        todo = [i for i in self.ids if not self.stats[i].skipping] if ids is None else list(ids)
        for i in todo:
            for attempt in range(self.config.retries + 1):
                try:
                    self._setup_one(i)
                    break
                except BusError as e:
                    if attempt == self.config.retries:
                        raise BusError(
                            f"setup of id {i}{self._name(i)} failed after {attempt + 1} attempt(s): {e}"
                        ) from None
                    log.warning("setup of id %d: %s; retrying", i, e)
                    time.sleep(4 * RETRY_BACKOFF_S * 2**attempt)
        if self._delays:
            self.port.set_return_delay(max(self._delays.values()) * ct.RETURN_DELAY_UNIT)

    def _setup_one(self, i: int) -> None:
        mapping = list(HEALTH_INDIRECT) + (list(GAIN_GOAL_INDIRECT) if self.config.p_gain else [])
        self.write_item(i, "Torque Enable", 0)
        if self.config.return_delay is not None:
            self.write_item(i, "Return Delay Time", self.config.return_delay)
            self._delays[i] = self.config.return_delay
        else:
            self._delays[i] = self.read_item(i, "Return Delay Time")
        for k, addr in enumerate(mapping, start=1):
            self.write_item(i, f"Indirect Address {k}", addr)
        lo_c, hi_c = self.read_item(i, "Min Position Limit"), self.read_item(i, "Max Position Limit")
        lo, hi = ct.counts_to_rad([lo_c, hi_c], self.config.center)
        if self.lower[i] < lo or self.upper[i] > hi:
            raise GoalRejected(
                f"id {i}{self._name(i)}: joint limits ({self.lower[i]:.6g}, {self.upper[i]:.6g}) rad "
                f"exceed the servo's Min/Max Position Limit ({lo:.6g}, {hi:.6g}) rad "
                f"(counts {lo_c}..{hi_c})"
            )

    def _name(self, i: int) -> str:
        names = self.config.names or {}
        return f" (joint {names[i]!r})" if i in names else ""
