"""Fault injection for the virtual bus: what happens to a reply on its way out, and time-scheduled faults.

:class:`Faults` holds the options (times are seconds since the bus started); :class:`ReplyFaults` decides the fate
of each status packet: dropped, bytes flipped, or held back (late: the emulator stalls and every later byte waits
too, as a USB adapter's latency timer or a busy servo would do).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

INTACT = 0
DROPPED = 1
CORRUPTED = 2
FATES = {INTACT: "intact", DROPPED: "dropped", CORRUPTED: "corrupted"}


@dataclass
class Faults:
    """Fault injection. Times are seconds since the bus started."""

    drop_rate: float = 0.0  # probability that a status packet is not sent
    corrupt_rate: float = 0.0  # per-byte probability that a status byte is flipped
    late_rate: float = 0.0  # probability that a status packet is held back by late_s (and everything after it)
    late_s: float = 0.0  # [s]
    silent_after: Mapping[int, float] = field(default_factory=dict)  # id → t: stops answering
    silent_for: Mapping[int, float] = field(default_factory=dict)  # id → duration [s] of that silence (default ∞)
    overload_at: Mapping[int, float] = field(default_factory=dict)  # id → t: HW error bit 5, torque off
    brownout_at: Mapping[int, float] = field(default_factory=dict)  # id → t: reboots by itself (RAM to defaults)
    sag_volts: float = 0.0  # supply drop [V] during [sag_start, sag_start + sag_duration)
    sag_start: float = math.inf
    sag_duration: float = math.inf
    supply_resistance: float = 0.0  # [Ω]: V = V0 − R·Σ|I|
    seed: int | None = None

    def __post_init__(self) -> None:
        for k in ("drop_rate", "corrupt_rate", "late_rate"):
            v = getattr(self, k)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"faults.{k} must be in [0, 1], got {v}")
        for k in ("sag_volts", "supply_resistance", "late_s"):
            if not (math.isfinite(getattr(self, k)) and getattr(self, k) >= 0):
                raise ValueError(f"faults.{k} must be finite and >= 0, got {getattr(self, k)}")
        if not (self.sag_start >= 0 and self.sag_duration > 0):  # inf: no sag, or one to the end; NaN: refused
            raise ValueError(f"faults.sag_start must be >= 0 and sag_duration > 0, got {self.sag_start}, "
                             f"{self.sag_duration}")  # fmt: skip
        for i, d in self.silent_for.items():
            if i not in self.silent_after or not d > 0:
                raise ValueError(f"faults.silent_for[{i}] needs silent_after[{i}] and a duration > 0, got {d}")

    def silent_at(self, dxl_id: int, t: float) -> bool | None:
        """Whether ``dxl_id`` is silent at ``t`` [s]; None if no silence is scheduled for it."""
        start = self.silent_after.get(dxl_id)
        if start is None:
            return None
        return start <= t < start + self.silent_for.get(dxl_id, math.inf)


@dataclass
class ReplyStats:
    replies: int = 0
    dropped: int = 0
    corrupted: int = 0
    held: int = 0  # replies held back by late_s


class ReplyFaults:
    """Applies :class:`Faults` to outgoing status packets with its own random generator."""

    def __init__(self, faults: Faults, rng: np.random.Generator | None = None):
        self.f = faults
        self.rng = rng if rng is not None else np.random.default_rng(faults.seed)

    def apply(self, packet: bytes, stats) -> tuple[bytes | None, int, float]:
        """``(packet or None if dropped, fate, hold [s])`` for one status packet; counts into ``stats``
        (anything with ``dropped``/``corrupted``/``held`` attributes)."""
        f = self.f
        if f.drop_rate and self.rng.random() < f.drop_rate:
            stats.dropped += 1
            return None, DROPPED, 0.0
        fate = INTACT
        if f.corrupt_rate:
            hits = self.rng.random(len(packet)) < f.corrupt_rate
            if hits.any():
                arr = np.frombuffer(packet, dtype=np.uint8).copy()
                arr[hits] ^= self.rng.integers(1, 256, int(hits.sum()), dtype=np.uint8)
                packet = arr.tobytes()
                stats.corrupted += 1
                fate = CORRUPTED
        hold = 0.0
        if f.late_rate and self.rng.random() < f.late_rate:
            hold = f.late_s
            stats.held = getattr(stats, "held", 0) + 1
        return packet, fate, hold


class ScheduledFaults:
    """The time-scheduled faults of :class:`Faults` on one bus's servos: ``silent`` per servo (set at the edges of a
    scheduled silence only, so that a manual silence stays in charge between them), one-shot overloads, and the
    supply voltage under sag and supply resistance."""

    def __init__(self, faults: Faults, n: int):
        self.f = faults
        self.silent = np.zeros(n, dtype=bool)
        self._was_silent: dict[int, bool] = {}
        self._overload_done: set[int] = set()
        self._brownout_done: set[int] = set()

    def tick(self, t: float, index: Mapping[int, int]) -> list[int]:
        """Apply the schedule at ``t`` [s] to the servos ``index`` (id → servo index); returns the ids that get
        their overload now."""
        f = self.f
        for i in f.silent_after:
            if i in index:
                now_silent = f.silent_at(i, t)
                if now_silent != self._was_silent.get(i):
                    self._was_silent[i] = now_silent
                    self.silent[index[i]] = now_silent
        new = [i for i, ts in f.overload_at.items() if i in index and t >= ts and i not in self._overload_done]
        self._overload_done.update(new)
        return new

    def brownouts(self, t: float, index: Mapping[int, int]) -> list[int]:
        """The ids whose scheduled brown-out (a reboot nobody asked for) falls due at ``t`` [s]."""
        new = [i for i, ts in self.f.brownout_at.items() if i in index and t >= ts and i not in self._brownout_done]
        self._brownout_done.update(new)
        return new

    def supply(self, t: float, volts: float, amps_total: float) -> float:
        """Supply voltage [V] at ``t``: ``volts`` less the sag window and the drop across the supply resistance
        at ``amps_total`` [A] drawn by all servos."""
        f = self.f
        v = volts
        if f.sag_start <= t < f.sag_start + f.sag_duration:
            v -= f.sag_volts
        if f.supply_resistance:
            v -= f.supply_resistance * amps_total
        return max(v, 0.0)
