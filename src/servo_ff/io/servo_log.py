"""Servo logs as identification sees them: one joint on a uniform time grid, resampled exactly as bam does.

A :class:`ServoLog` is one recording of one joint on a uniform time grid (``dt``, default 5 ms as bam):
measured position [rad] and speed [rad/s], the goal position sent [rad], torque enable (1/0), the supply
voltage [V], and the bench metadata (pendulum ``mass`` [kg], ``arm_mass`` [kg], ``length`` [m], firmware
``kp`` in register units, nominal ``vin`` [V], ``motor``, ``trajectory``). Raw recordings have irregular
timestamps; :func:`resample` puts them on the grid exactly as bam.process does (a grid from t = 0, linear
interpolation, torque_enable thresholded at 0.5), so a raw recording and bam's processed file of it give the
same samples. A recorder gap in the measured samples is not interpolated across: the log's :attr:`ServoLog.segments`
are the stretches around it (:mod:`.sample_gaps`). :class:`LogBatch` pads logs of different lengths for batched
rollouts. The file formats are in :mod:`servo_ff.io`. Bad input raises :class:`LogError` naming the file, key and
sample.
"""

from __future__ import annotations

import difflib
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from ..errors import ServoFFError
from ..models.schema import implausible_supply
from ..safe_parse import as_float
from .sample_gaps import MIN_STRETCH, Spans, gap_bound, gradient_within, measured_spans

DEFAULT_DT = 0.005  # [s] bam's processed logs
#: [s] resampling periods accepted: the fit node's ``dt`` range and ``servo-ff fit``/``identify --dt`` (below 0.1 ms
#: a 10 s log is 100 000 samples per rollout; above 1 s no servo motion is resolved)
DT_MIN, DT_MAX = 1e-4, 1.0
META_KEYS: tuple[str, ...] = ("mass", "arm_mass", "length", "kp", "vin", "motor", "trajectory")
ENTRY_KEYS: tuple[str, ...] = (
    "timestamp",
    "position",
    "speed",
    "load",
    "input_volts",
    "temp",
    "goal_position",
    "torque_enable",
)
REQUIRED_ENTRY_KEYS: tuple[str, ...] = ("timestamp", "position", "goal_position")
#: entry keys a log may lack, and what the fits use instead
DEFAULTED_KEYS: dict[str, str] = {
    "speed": "the speed derived from the positions",
    "torque_enable": "torque on throughout",
    "input_volts": "the supply of the metadata's vin",
}
_log = logging.getLogger(__name__)
_NUMERIC_META = ("mass", "arm_mass", "length", "kp", "vin")


class LogError(ServoFFError, ValueError):
    """A log file is malformed; the message names the file and the key/sample/topic."""


@dataclass(frozen=True)
class ServoLog:
    """One joint's recording on a uniform grid ``t = 0, dt, …`` (SI units)."""

    t: np.ndarray  # [s]
    position: np.ndarray  # measured θ [rad]
    speed: np.ndarray  # measured θ̇ [rad/s]
    goal_position: np.ndarray  # θd sent to the servo [rad]
    torque_enable: np.ndarray  # 1 powered, 0 released
    input_volts: np.ndarray  # supply voltage [V]
    mass: float = 0.0  # pendulum mass [kg]
    arm_mass: float = 0.0  # arm mass [kg]
    length: float = 0.0  # pendulum length [m]
    kp: float = 32.0  # firmware P gain (register units)
    vin: float = 15.0  # nominal supply voltage [V]
    motor: str = ""
    trajectory: str = ""
    source: str = "<memory>"
    extra: Mapping[str, np.ndarray] = field(default_factory=dict)  # load, temp, … when present
    kp_source: str = ""  # where kp came from (a bag: given, /servo_ff/log_meta or the recorded gains topic)
    vin_source: str = ""  # where the supply came from (a bag: given, the recorded supply topic, /servo_ff/log_meta)
    joint: str = ""  # the joint a rosbag2 recorded (other formats name none)
    bench_known: bool = True  # mass and length recorded (a rosbag2 without them in /servo_ff/log_meta: 0, unknown)
    segments: Spans | None = None  # [start, stop) samples between recorder gaps (None: no gap; sample_gaps.py)

    @property
    def dt(self) -> float:
        return float(self.t[1] - self.t[0]) if len(self.t) > 1 else DEFAULT_DT

    def __len__(self) -> int:
        return len(self.t)

    def spans(self) -> Spans:
        """[start, stop) sample ranges of measured motion: the stretches between recorder gaps (the whole log when it
        has none; none when every stretch was too short)."""
        return ((0, len(self.t)),) if self.segments is None else self.segments

    def meta(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in META_KEYS}

    def with_(self, **changes: Any) -> ServoLog:
        return replace(self, **changes)


# --------------------------------------------------------------------------- validation / resampling
def _check_finite(source: str, key: str, values: np.ndarray) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.argmax(bad))
        raise LogError(f"{source}: key {key!r} has a non-finite value ({values[i]}) at sample {i}")


def check_dt(dt: float, name: str = "dt", where: str = "") -> float:
    """``dt`` [s] when it is a finite period in [DT_MIN, DT_MAX]; else LogError naming ``name`` (and ``where``)."""
    if not (isinstance(dt, (int, float, np.floating, np.integer)) and DT_MIN <= dt <= DT_MAX):  # NaN fails too
        prefix = f"{where}: " if where else ""
        raise LogError(f"{prefix}{name} must be a period in [{DT_MIN:g}, {DT_MAX:g}] s, got {dt}")
    return float(dt)


def check_timestamps(source: str, t: np.ndarray) -> None:
    """Timestamps must be finite and strictly increasing; the error names the first offending sample."""
    _check_finite(source, "timestamp", t)
    if len(t) < 2:
        raise LogError(f"{source}: needs at least 2 samples, got {len(t)}")
    step = np.diff(t)
    if (step <= 0).any():
        i = int(np.argmax(step <= 0)) + 1
        raise LogError(f"{source}: timestamps not strictly increasing at sample {i} ({t[i - 1]!r} then {t[i]!r})")


#: [s] a first timestamp later than this (or negative) is not "seconds since the recording started" (bam's
#: recorder starts a few ms after 0) but some other clock (e.g. Unix time): the grid then starts at it.
MAX_START_LEAD = 0.1


def grid_origin(t_raw: np.ndarray) -> float:
    """Start [s] of the resampling grid: 0 as bam.process, or the first timestamp when it is not near 0."""
    first = float(t_raw[0])
    return 0.0 if 0.0 <= first <= MAX_START_LEAD else first


def is_uniform_grid(t_raw: np.ndarray, dt: float) -> bool:
    """True when ``t_raw`` already is ``0, dt, 2·dt, …`` (a processed log): it is then read as is."""
    k = np.arange(len(t_raw))
    return bool(abs(t_raw[0]) <= 1e-9 and np.allclose(t_raw, k * dt, rtol=0.0, atol=1e-9 + 1e-12 * len(t_raw)))


def resample(
    source: str, t_raw: np.ndarray, columns: Mapping[str, np.ndarray], dt: float = DEFAULT_DT
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Resample columns recorded at ``t_raw`` [s] onto the uniform grid ``0, dt, …`` [s] as bam.process does.

    Rhoban/bam ``bam/process.py`` (Duclusaud et al., Extended Friction Models for the Physics Simulation of
    Servo Actuators): grid ``arange(0, t_last, dt)`` — from t = 0, not from the first timestamp, and ending
    before the last timestamp; every column linearly interpolated between the two raw samples around each
    grid time (``t_i < t <= t_{i+1}``), extrapolated linearly from the first two samples before the first
    timestamp; ``torque_enable`` then thresholded at 0.5. A log already on that grid (a processed file) is
    returned unchanged; see :func:`grid_origin` for timestamps that do not start near 0.
    """
    check_dt(dt, where=source)
    t_raw = np.asarray(t_raw, dtype=float)
    check_timestamps(source, t_raw)
    cols = {k: np.asarray(v, dtype=float) for k, v in columns.items()}
    for k, v in cols.items():
        _check_finite(source, k, v)
    if is_uniform_grid(t_raw, dt):
        t, out = t_raw.copy(), {k: v.copy() for k, v in cols.items()}
    else:
        origin = grid_origin(t_raw)
        t = np.arange(0.0, t_raw[-1] - origin, dt)
        if len(t) < 2:
            raise LogError(f"{source}: {t_raw[-1] - t_raw[0]:.4g} s of samples is shorter than two {dt:g} s steps")
        tq = t + origin
        i = np.clip(np.searchsorted(t_raw, tq, side="left") - 1, 0, len(t_raw) - 2)
        t1, t2 = t_raw[i], t_raw[i + 1]
        out = {k: v[i] + (v[i + 1] - v[i]) * (tq - t1) / (t2 - t1) for k, v in cols.items()}
    if "torque_enable" in out:
        out["torque_enable"] = (out["torque_enable"] > 0.5).astype(float)
    return t, out


def check_columns(source: str, names: Iterable[str]) -> None:
    """LogError for a column named like an entry key the log lacks and the fits would otherwise take a default for
    (``input_voltage`` for ``input_volts``: the metadata's vin would be used); one warning line naming the other
    columns that are no entry key (kept, not used), with the key each is close to (difflib)."""
    names = list(names)
    unknown = [c for c in names if c not in ENTRY_KEYS]
    said = []
    for c in unknown:
        close = difflib.get_close_matches(c, ENTRY_KEYS, n=1, cutoff=0.75)
        if close and close[0] in DEFAULTED_KEYS and close[0] not in names:
            raise LogError(
                f"{source}: column {c!r} is no log key; did you mean {close[0]!r}? (without it: "
                f"{DEFAULTED_KEYS[close[0]]}; keys: {', '.join(ENTRY_KEYS)})"
            )
        said.append(f"{c!r}" + (f" (close to {close[0]!r})" if close else ""))
    if said:
        _log.warning("%s: column(s) %s are no log keys (%s): not used", source, ", ".join(said), ", ".join(ENTRY_KEYS))


def log_from_columns(
    source: str, t_raw: np.ndarray, cols: Mapping[str, np.ndarray], meta: Mapping[str, Any], dt: float = DEFAULT_DT
) -> ServoLog:
    """Build a :class:`ServoLog` from raw columns + metadata (validated, resampled)."""
    cols = dict(cols)
    for key in ("position", "goal_position"):
        if key not in cols:
            raise LogError(f"{source}: missing key {key!r}")
    n = len(t_raw)
    for k, v in cols.items():
        if len(v) != n:
            raise LogError(f"{source}: column {k!r} has {len(v)} samples, timestamps have {n}")
    check_columns(source, cols)  # before: an unknown column silently kept aside, its default used
    m = clean_meta(source, meta)
    t_raw = np.asarray(t_raw, dtype=float)
    check_timestamps(source, t_raw)
    check_dt(dt, where=source)
    if "speed" not in cols:  # derive from position (central differences, never across a recorder gap)
        cols["speed"] = gradient_within(np.asarray(cols["position"], float), t_raw, gap_bound(t_raw, dt))
    cols.setdefault("torque_enable", np.ones(n))
    cols.setdefault("input_volts", np.full(n, m["vin"]))
    t, r = resample(source, t_raw, cols, dt)
    origin = grid_origin(t_raw)
    spans = None if is_uniform_grid(t_raw, dt) else measured_spans(source, "timestamp", t_raw, t + origin, dt, origin)
    main = ("position", "speed", "goal_position", "torque_enable", "input_volts")
    extra = {k: v for k, v in r.items() if k not in main}
    return ServoLog(t=t, **{k: r[k] for k in main}, **m, source=source, extra=extra, segments=spans)


def clean_meta(source: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    meta = dict(meta)
    if "arm_mass" not in meta and "arm-mass" in meta:
        meta["arm_mass"] = meta.pop("arm-mass")
    out: dict[str, Any] = {}
    for k in _NUMERIC_META:
        if k not in meta:
            if k == "arm_mass":
                out[k] = 0.0
                continue
            raise LogError(f"{source}: missing key {k!r}")
        if isinstance(meta[k], (bool, np.bool_)):  # JSON/YAML true would read as 1: kp 1, mass 1 kg
            raise LogError(f"{source}: key {k!r} must be a number, got a bool ({meta[k]})")
        v = as_float(meta[k], source, f"key {k!r}", LogError)
        if not math.isfinite(v) or v < 0:
            raise LogError(f"{source}: key {k!r} must be finite and >= 0, got {v}")
        out[k] = v
    if out["kp"] <= 0 or out["vin"] <= 0:
        raise LogError(f"{source}: keys 'kp' and 'vin' must be > 0, got kp={out['kp']}, vin={out['vin']}")
    if (why := implausible_supply(out["vin"])) is not None:  # before: vin 150 (decivolts) fitted α̂ 10x
        raise LogError(f"{source}: key 'vin': {why}")
    out["motor"] = str(meta.get("motor", ""))
    out["trajectory"] = str(meta.get("trajectory", ""))
    return out


# --------------------------------------------------------------------------- identifiability
MIN_DURATION = MIN_STRETCH  # [s] shortest log identification accepts (bam's bench logs: 6 s), and stretch it uses
MIN_MOTION = 0.01  # [rad] smallest measured position range (≈ 7 counts of a 4096-count encoder)
MIN_GOAL_RANGE = 1e-3  # [rad] smallest goal range: a constant goal does not excite the firmware law


def degenerate_reason(log: ServoLog) -> str | None:
    """Why ``log`` cannot inform an identification (bench unknown, too short, torque never on, constant goal, no
    motion), or None when it can."""
    if not log.bench_known:  # identification fits the pendulum's load: 0 kg would be a wrong model, said nowhere
        return (
            "the bench's mass and length are unknown (no mass/length in the bag's /servo_ff/log_meta); "
            "identification fits the pendulum load: record them there, or give a JSON/CSV log that has them"
        )
    duration = (len(log) - 1) * log.dt if len(log) > 1 else 0.0
    if duration < MIN_DURATION:
        return (
            f"too short: {len(log)} samples ({duration:.3g} s at dt {log.dt:g} s); identification needs "
            f">= {MIN_DURATION:g} s"
        )
    if not log.spans():
        return f"no stretch between recorder gaps lasts {MIN_DURATION:g} s (the gaps are not interpolated across)"
    if not (log.torque_enable > 0.5).any():
        return "torque never on (torque_enable is 0 throughout)"
    goal_range = float(np.ptp(log.goal_position))
    if goal_range < MIN_GOAL_RANGE:
        return f"constant goal (range {goal_range:.3g} rad < {MIN_GOAL_RANGE:g} rad): the firmware law is not excited"
    motion = float(np.ptp(log.position))
    if motion < MIN_MOTION:
        return f"no motion (measured position range {motion:.3g} rad < {MIN_MOTION:g} rad)"
    return None


def check_identifiable(logs: Sequence[ServoLog]) -> None:
    """Raise :class:`LogError` naming the first log :func:`degenerate_reason` refuses."""
    for lg in logs:
        reason = degenerate_reason(lg)
        if reason:
            raise LogError(f"{lg.source}: {reason}")


# --------------------------------------------------------------------------- padded batch
class LogBatch(NamedTuple):
    """Logs stacked along axis 1 and padded to the longest (mask 0 on padding): arrays (T, L). A log with recorder
    gaps gives one column per stretch between them (:meth:`ServoLog.spans`), each simulated from its own first
    sample: a rollout never runs through a gap. ``weight`` (L,): a column's share of its log's samples, so that the
    columns of one log weigh one log in all and each of its samples alike (:func:`log_mean`)."""

    position: np.ndarray
    speed: np.ndarray
    goal_position: np.ndarray
    torque_enable: np.ndarray
    input_volts: np.ndarray
    mask: np.ndarray  # 1 on real samples
    mass: np.ndarray  # (L,)
    arm_mass: np.ndarray
    length: np.ndarray
    kp: np.ndarray
    vin: np.ndarray
    dt: float
    weight: np.ndarray  # (L,) stretch samples / the log's samples in stretches: each log's columns sum to 1


def stack_logs(logs: Sequence[ServoLog]) -> LogBatch:
    """Pad logs of different lengths (hold the last sample) and stack them, a column per stretch between recorder
    gaps; all must share ``dt``."""
    if not logs:
        raise LogError("no logs given")
    dts = np.array([lg.dt for lg in logs])
    if np.ptp(dts) > 1e-9:
        i = int(np.argmax(np.abs(dts - dts[0]) > 1e-9))
        raise LogError(f"{logs[i].source}: dt {dts[i]} differs from {logs[0].source}: {dts[0]} (resample both)")
    for lg in logs:
        if not lg.spans():
            raise LogError(f"{lg.source}: no stretch between recorder gaps lasts {MIN_DURATION:g} s")
    columns = [(lg, a, b) for lg in logs for a, b in lg.spans()]
    n = max(b - a for _, a, b in columns)

    def col(name: str) -> np.ndarray:
        out = np.empty((n, len(columns)))
        for j, (lg, a, b) in enumerate(columns):
            v = getattr(lg, name)[a:b]
            out[: len(v), j] = v
            out[len(v) :, j] = v[-1]
        return out

    mask = np.zeros((n, len(columns)))
    for j, (_, a, b) in enumerate(columns):
        mask[: b - a, j] = 1.0
    meta = {k: np.array([getattr(lg, k) for lg, _, _ in columns], float) for k in _NUMERIC_META}
    used = {id(lg): sum(b - a for a, b in lg.spans()) for lg in logs}
    weight = np.array([(b - a) / used[id(lg)] for lg, a, b in columns])
    return LogBatch(
        col("position"),
        col("speed"),
        col("goal_position"),
        col("torque_enable"),
        col("input_volts"),
        mask,
        dt=float(dts[0]),
        weight=weight,
        **meta,
    )


def log_mean(per_column: np.ndarray, batch: LogBatch) -> np.ndarray:
    """Mean over the logs of a per-column figure (..., L) [e.g. rad]: Σ w_j·x_j / Σ w_j with ``batch.weight``, so
    that a log cut by recorder gaps into stretches counts once, its samples alike — a per-column MAE becomes the
    log's MAE over all its samples (before: each stretch weighed a whole log, a 5-sample stretch as much as the
    rest of its log)."""
    return (per_column * batch.weight).sum(axis=-1) / batch.weight.sum()


__all__ = [
    "ServoLog",
    "LogError",
    "LogBatch",
    "stack_logs",
    "log_mean",
    "resample",
    "log_from_columns",
    "clean_meta",
    "DEFAULT_DT",
    "DT_MIN",
    "DT_MAX",
    "check_dt",
    "degenerate_reason",
    "check_identifiable",
]
