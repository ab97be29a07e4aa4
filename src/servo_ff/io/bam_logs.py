"""bam's JSON log format and CSV logs → :class:`~servo_ff.io.servo_log.ServoLog` (and back).

bam's JSON (Rhoban/bam ``bam/dynamixel/record.py``, ``bam/process.py``) is an object with the metadata keys
(the recorder writes ``arm-mass``, processed files ``arm_mass``) and ``entries``: a list of
``{timestamp, position, speed, load, input_volts, temp, goal_position, torque_enable}``. CSV logs have
``# key: value`` metadata lines, then a header row with bam's entry keys. Both are resampled on reading.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..safe_parse import as_float, describe, parse_json, read_text
from .atomic import atomic_path, atomic_write_text
from .servo_log import (
    DEFAULT_DT,
    ENTRY_KEYS,
    META_KEYS,
    REQUIRED_ENTRY_KEYS,
    LogError,
    ServoLog,
    log_from_columns,
)


def read_bam_json(path: str | Path, dt: float = DEFAULT_DT) -> ServoLog:
    """Read one bam JSON log (raw or processed) and resample it to ``dt``."""
    path = Path(path)
    src = str(path)
    data = parse_json(read_text(path, LogError, what="log file"), src, LogError)  # size/depth/huge-int limits
    if not isinstance(data, dict):
        raise LogError(f"{src}: expected a JSON object with key 'entries'")
    if "entries" not in data:
        raise LogError(f"{src}: missing key 'entries'")
    entries = data["entries"]
    if not isinstance(entries, list) or not entries:
        raise LogError(f"{src}: key 'entries' must be a non-empty list")
    if not isinstance(entries[0], dict):
        raise LogError(f"{src}: entries[0] is not an object")
    present = [k for k in ENTRY_KEYS if k in entries[0]]
    for k in REQUIRED_ENTRY_KEYS:
        if k not in present:
            raise LogError(f"{src}: entries[0] is missing key {k!r}")
    cols: dict[str, list] = {k: [] for k in present}
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise LogError(f"{src}: entries[{i}] is not an object")
        for k in present:
            if k not in e:
                raise LogError(f"{src}: entries[{i}] is missing key {k!r}")
            v = e[k]
            if v is None:
                raise LogError(f"{src}: entries[{i}] key {k!r} is null")
            if isinstance(v, (list, dict)):
                raise LogError(
                    f"{src}: entries[{i}] key {k!r} must be a number, got a {type(v).__name__} ({describe(v)})"
                )
            cols[k].append(as_float(v, src, f"entries[{i}] key {k!r}", LogError))
    arr = {k: np.asarray(v, dtype=float) for k, v in cols.items()}
    for k, v in arr.items():
        bad = ~np.isfinite(v)
        if bad.any():
            i = int(np.argmax(bad))
            raise LogError(f"{src}: entries[{i}] key {k!r} is not finite ({v[i]})")
    t_raw = arr.pop("timestamp")
    return log_from_columns(src, t_raw, arr, data, dt)


def write_bam_json(log: ServoLog, path: str | Path) -> None:
    """Write a processed bam JSON log (``dt`` and ``arm_mass`` keys, entries on the uniform grid)."""
    data: dict[str, Any] = {k: getattr(log, k) for k in META_KEYS}
    data["dt"] = log.dt
    cols = {
        "timestamp": log.t,
        "position": log.position,
        "speed": log.speed,
        "goal_position": log.goal_position,
        "input_volts": log.input_volts,
        **log.extra,
    }
    keys = list(cols)
    rows = np.column_stack([np.asarray(cols[k], float) for k in keys]).tolist()
    en = log.torque_enable > 0.5
    data["entries"] = [{**dict(zip(keys, r)), "torque_enable": bool(e)} for r, e in zip(rows, en)]
    atomic_write_text(path, json.dumps(data))


# --------------------------------------------------------------------------- CSV
def read_csv(path: str | Path, dt: float = DEFAULT_DT, meta: Mapping[str, Any] | None = None) -> ServoLog:
    """Read a CSV log: ``# key: value`` metadata lines, then a header row with bam's entry keys.

    ``meta`` supplies or overrides metadata (e.g. for a CSV exported by another tool).
    """
    path = Path(path)
    src = str(path)
    lines = read_text(path, LogError, what="log file").splitlines()
    m: dict[str, Any] = {}
    body = []
    for line in lines:
        if line.startswith("#"):
            if ":" in line:
                k, v = line[1:].split(":", 1)
                m[k.strip()] = v.strip()
        elif line.strip():
            body.append(line)
    m.update(meta or {})
    if not body:
        raise LogError(f"{src}: no header row")
    try:
        reader = csv.reader(body)
        header = [h.strip() for h in next(reader)]
        rows = list(reader)
    except csv.Error as e:
        raise LogError(f"{src}: malformed CSV ({e})") from None
    for k in REQUIRED_ENTRY_KEYS:
        if k not in header:
            raise LogError(f"{src}: header is missing column {k!r} (has {', '.join(header)})")
    if len(set(header)) != len(header):
        raise LogError(f"{src}: header names a column twice ({', '.join(header)})")
    data = np.empty((len(rows), len(header)))
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise LogError(f"{src}: data row {i} has {len(row)} fields, header has {len(header)}")
        for j, v in enumerate(row):
            try:
                data[i, j] = float(v)
            except ValueError:
                if v.strip().lower() in ("true", "false"):
                    data[i, j] = float(v.strip().lower() == "true")
                else:
                    raise LogError(f"{src}: data row {i} column {header[j]!r}: not a number ({v!r})") from None
    cols = {h: data[:, j] for j, h in enumerate(header)}
    for h, v in cols.items():
        bad = ~np.isfinite(v)
        if bad.any():
            raise LogError(f"{src}: data row {int(np.argmax(bad))} column {h!r} is not finite")
    t_raw = cols.pop("timestamp")
    return log_from_columns(src, t_raw, cols, m, dt)


def write_csv(log: ServoLog, path: str | Path) -> None:
    meta = "".join(f"# {k}: {v}\n" for k, v in log.meta().items())
    cols = {
        "timestamp": log.t,
        "position": log.position,
        "speed": log.speed,
        "goal_position": log.goal_position,
        "torque_enable": log.torque_enable,
        "input_volts": log.input_volts,
        **log.extra,
    }
    arr = np.column_stack([np.asarray(v, float) for v in cols.values()])
    with atomic_path(path) as tmp, open(tmp, "w") as f:
        f.write(meta)
        f.write(",".join(cols) + "\n")
        np.savetxt(f, arr, delimiter=",", fmt="%.17g")
