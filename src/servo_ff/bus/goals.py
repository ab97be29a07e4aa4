"""Goals of the Dynamixel bus: joint limits per servo, checked before anything is written, and the sync-write
parameter block (id, data…) built with numpy."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np

from . import control_table as ct
from .bus_types import GAIN_GOAL_DATA_ADDR, HEALTH_INDIRECT, BusConfig, GoalRejected

log = logging.getLogger(__name__)


class GoalLimits:
    """``lower``/``upper`` [rad] per configured id: ``config.joint_limits`` or the table's position range."""

    def __init__(self, table: ct.ControlTable, config: BusConfig):
        self.config = config
        lo_default, hi_default = ct.position_range_rad(table, config.center)
        self.count_range = ct.position_range_counts(table)
        self.rad_per_count = table.rad_per_count
        lim = dict(config.joint_limits or {})
        unknown = sorted(set(lim) - set(config.ids))
        if unknown:
            raise ValueError(f"joint_limits for ids {unknown} not in ids {config.ids}")
        self.lower = {i: lim.get(i, (lo_default, hi_default))[0] for i in config.ids}
        self.upper = {i: lim.get(i, (lo_default, hi_default))[1] for i in config.ids}
        # P gain + goal through indirect data after the health bytes (230; XL330/XC330: 214)
        ind = table.by_name.get("Indirect Data 1")
        self.gain_goal_addr = GAIN_GOAL_DATA_ADDR if ind is None else ind.address + len(HEALTH_INDIRECT)
        self._ids: tuple[int, ...] = ()
        self._lo = self._hi = np.zeros(0)

    def check(self, goals, active: Sequence[int], missing: Sequence[int]) -> tuple[tuple[int, ...], np.ndarray]:
        """Validate goals ({id: rad} or an array aligned with ``active``) against finiteness and joint limits;
        returns (ids, goals [rad]); goals for ``missing`` ids are dropped with a warning. Raises
        :class:`GoalRejected` (and logs) without writing anything."""
        if isinstance(goals, Mapping):
            g = {int(i): float(v) for i, v in goals.items()}
            unknown = [i for i in g if i not in self.lower]
            if unknown:
                raise GoalRejected(f"goals for unknown ids {unknown}; configured ids {self.config.ids}")
            skipped = [i for i in g if i in missing]
            if skipped:
                log.warning("goals for missing ids %s not sent (servos not answering)", skipped)
            ids = tuple(i for i in g if i not in missing)
            arr = np.array([g[i] for i in ids], dtype=np.float64)
            lo = np.array([self.lower[i] for i in ids])
            hi = np.array([self.upper[i] for i in ids])
        else:
            arr = np.asarray(goals, dtype=np.float64).ravel()
            if arr.size != len(active):
                raise GoalRejected(f"goals: {arr.size} values for {len(active)} active servos {list(active)}")
            ids = tuple(active)
            if self._ids != ids:
                self._ids = ids
                self._lo = np.array([self.lower[i] for i in ids])
                self._hi = np.array([self.upper[i] for i in ids])
            lo, hi = self._lo, self._hi
        ok = (arr >= lo) & (arr <= hi)  # False for NaN; ±inf fail the bounds
        if not ok.all():
            msg = "; ".join(
                f"id {ids[k]} goal {arr[k]:.4g} rad outside [{lo[k]:.4g}, {hi[k]:.4g}]"
                if np.isfinite(arr[k])
                else f"id {ids[k]} goal {arr[k]} is not finite"
                for k in np.flatnonzero(~ok)
            )
            log.error("refusing goal write: %s", msg)
            raise GoalRejected(f"goal refused, nothing written: {msg}")
        return ids, arr

    def sync_write_block(self, ids: tuple[int, ...], arr: np.ndarray, p_gains=None) -> tuple[int, int, np.ndarray]:
        """(address, data length, block of ``(id, data…)`` rows) of the sync write of checked goals ``arr`` [rad],
        with the P gains (raw register) first when ``config.p_gain``."""
        counts = self.goal_counts(ids, arr).astype("<i4").view(np.uint8).reshape(-1, 4)
        if self.config.p_gain:
            if p_gains is None:
                raise ValueError("p_gains: required when the bus is configured with p_gain=True")
            pg = np.asarray([p_gains[i] for i in ids] if isinstance(p_gains, Mapping) else p_gains).ravel()
            if pg.size != len(ids) or not np.all((pg >= 0) & (pg <= 16383) & (pg == np.rint(pg))):
                raise ValueError(f"p_gains: need {len(ids)} integers in 0..16383, got {pg}")
            data = np.concatenate([pg.astype("<u2").view(np.uint8).reshape(-1, 2), counts], axis=1)
            addr = self.gain_goal_addr
        else:
            data, addr = counts, ct.ADDR_GOAL_POSITION
        return addr, data.shape[1], id_rows(ids, data)

    def goal_counts(self, ids: tuple[int, ...], arr: np.ndarray) -> np.ndarray:
        """Checked goals ``arr`` [rad] → position counts of the table; any count outside its position range is
        refused (unreachable after :meth:`check`, but a count must never wrap in its register)."""
        c = np.rint(arr / self.rad_per_count + self.config.center)  # arr is finite (check)
        lo_c, hi_c = self.count_range
        if not (c.min() >= lo_c and c.max() <= hi_c):
            raise GoalRejected(f"goal counts {c.tolist()} outside {lo_c}..{hi_c} for ids {list(ids)}; nothing written")
        return c


def id_rows(ids: Sequence[int], data: np.ndarray) -> np.ndarray:
    """The ``(id, data…)`` rows of a sync-write parameter block (uint8)."""
    block = np.empty((len(ids), 1 + data.shape[1]), dtype=np.uint8)
    block[:, 0] = ids
    block[:, 1:] = data
    return block
