"""The ILC result file written by ``servo_ilc_node`` and read by ``servo_fit_node`` (ROS-free, ``.npz``).

Arrays: ``t`` (T,) [s]; ``reference_q/dq/ddq`` (T,) [rad, rad/s, rad/s²]; ``commands`` and ``measured``
(K+1, T) [rad] of every iteration; ``errors`` (K+1,) windowed error q_max [rad] (seed 002 Eq. 28);
``supply`` (K+1,) mean supply voltage per trial [V]. Scalars: ``joint``, ``kp`` (register units), ``dt`` [s],
``delay`` t_d [s], ``converged_iteration`` (−1: not converged).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class ILCRecord:
    joint: str
    t: np.ndarray
    reference_q: np.ndarray
    reference_dq: np.ndarray
    reference_ddq: np.ndarray
    commands: np.ndarray
    measured: np.ndarray
    errors: np.ndarray
    supply: np.ndarray
    kp: float
    dt: float
    delay: float
    converged_iteration: int

    @property
    def final_command(self) -> np.ndarray:
        return self.commands[-1]

    @property
    def final_measured(self) -> np.ndarray:
        return self.measured[-1]


def save_ilc_record(rec: ILCRecord, path: str | Path) -> Path:
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_suffix(".npz")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".partial.npz")
    np.savez(tmp, **{k: np.asarray(v) for k, v in rec.__dict__.items()})
    tmp.replace(path)  # readers never see half a file
    return path


def load_ilc_record(path: str | Path) -> ILCRecord:
    """Read and check an ILC result file; errors name the file and the key."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"ILC result file not found: {path}")
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a readable .npz ILC result ({e})") from None
    missing = [k for k in ILCRecord.__dataclass_fields__ if k not in data.files]
    if missing:
        raise ValueError(f"{path}: missing key(s) {', '.join(missing)}")
    d = {k: data[k] for k in ILCRecord.__dataclass_fields__}
    n = d["t"].shape[0]
    for k in ("reference_q", "reference_dq", "reference_ddq"):
        if d[k].shape != (n,):
            raise ValueError(f"{path}: {k} has shape {d[k].shape}, expected ({n},)")
    for k in ("commands", "measured"):
        if d[k].ndim != 2 or d[k].shape[1] != n:
            raise ValueError(f"{path}: {k} has shape {d[k].shape}, expected (iterations, {n})")
    for k, v in d.items():
        if v.dtype.kind == "f" and not np.isfinite(v).all():
            raise ValueError(f"{path}: {k} contains non-finite values")
    return ILCRecord(joint=str(d["joint"]), t=d["t"], reference_q=d["reference_q"], reference_dq=d["reference_dq"],
                     reference_ddq=d["reference_ddq"], commands=d["commands"], measured=d["measured"],
                     errors=d["errors"], supply=d["supply"], kp=float(d["kp"]), dt=float(d["dt"]),
                     delay=float(d["delay"]), converged_iteration=int(d["converged_iteration"]))
