"""The one ILC record format (``.npz``), written by ``servo-ff ilc`` and ``servo_ilc_node``, read by ``servo-ff fit``
and ``servo_fit_node``.

Arrays: ``t`` (T,) [s], stepping by ``dt``; ``reference_q/dq/ddq`` (T,) [rad, rad/s, rad/s²]; ``commands`` and
``measured`` (K+1, T) [rad] of every iteration; ``errors`` (K+1,) windowed error q_max [rad] (Schwarz & Behnke,
Compliant Robot Behavior using Servo Actuator Models identified by Iterative Learning Control, Eq. 28); ``supply``
(K+1,) mean supply voltage per trial [V]; optional ``pendulum`` (3,) mass [kg], length [m], arm mass [kg] of the bench
the run drove (else a fit takes τ_o from a URDF). Scalars: ``joint``, ``kp`` (firmware gain),
``dt`` [s], ``delay`` t_d [s], ``converged_iteration`` (−1: not converged); optional ``stopped`` (text): why the run
stopped before converging or its iteration cap (a learned command beyond the joint limits, divergence, an
interrupt), the trials it holds being the ones done until then (absent or '': the run ended normally).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from servo_ff.safe_parse import finite_scalar, load_npz

from ..errors import ServoFFError
from .atomic import atomic_path


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
    pendulum: np.ndarray | None = None  # (mass [kg], length [m], arm mass [kg]) of the bench, when ran on one
    stopped: str = ""  # why the run stopped early ('': it ended normally)

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
    with atomic_path(path) as tmp:  # readers never see half a file, a kill leaves the previous one whole
        np.savez(tmp, **{k: np.asarray(v) for k, v in rec.__dict__.items() if v is not None})
    return path


class ILCFileError(ServoFFError, ValueError):
    """An ILC result file is unreadable or malformed; the message names the file and the key."""


_SCALARS = {"kp": "f", "dt": "f", "delay": "f", "converged_iteration": "i"}
#: Largest relative difference between a step of ``t`` and ``dt`` (a grid k·dt in float64 is within 1e-12)
GRID_TOLERANCE = 1e-6


def check_time_grid(source: str, t: np.ndarray, dt: float) -> None:
    """ILCFileError unless ``t`` [s] increases by ``dt`` [s] at every sample (the fit differentiates and shifts the
    samples by ``dt``: a record whose ``dt`` is not its samples' spacing gives wrong rates and t_d)."""
    step = np.diff(t)
    if (step <= 0).any():
        i = int(np.argmax(step <= 0)) + 1
        raise ILCFileError(f"{source}: key t is not strictly increasing at sample {i} ({t[i - 1]:g} then {t[i]:g})")
    off = np.abs(step - dt) > GRID_TOLERANCE * dt
    if off.any():
        i = int(np.argmax(off))
        raise ILCFileError(
            f"{source}: key t steps by {step[i]:.6g} s at sample {i + 1}, but key dt is {dt:.6g} s: "
            "the record's samples must be dt apart"
        )


def load_ilc_record(path: str | Path) -> ILCRecord:
    """Read and check an ILC result file; errors (:class:`ILCFileError`) name the file and the key."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"ILC result file not found: {path}")
    d = load_npz(path, ILCFileError)  # garbage, truncated zip, pickles, oversized: one line naming the file
    optional = ("pendulum", "stopped")
    missing = [k for k in ILCRecord.__dataclass_fields__ if k not in optional and k not in d]
    if missing:
        raise ILCFileError(f"{path}: missing key(s) {', '.join(missing)}")
    for k, v in d.items():
        if k in ILCRecord.__dataclass_fields__ and k not in ("joint", "stopped") and v.dtype.kind not in "iufb":
            raise ILCFileError(f"{path}: {k} must hold numbers, got dtype {v.dtype}")
    if d["joint"].size != 1 or d["joint"].dtype.kind not in "US":
        raise ILCFileError(
            f"{path}: joint must be one name, got an array of shape {d['joint'].shape} and dtype {d['joint'].dtype}"
        )
    if "stopped" in d and (d["stopped"].size != 1 or d["stopped"].dtype.kind not in "US"):
        raise ILCFileError(
            f"{path}: stopped must be one text, got shape {d['stopped'].shape} dtype {d['stopped'].dtype}"
        )
    scalars = {k: finite_scalar(d, k, str(path), ILCFileError) for k in _SCALARS}
    for k in ("kp", "dt"):  # a period or a gain of 0 (or below) is no record: a division by zero in the fit
        if scalars[k] <= 0:
            raise ILCFileError(f"{path}: {k} must be > 0, got {scalars[k]:g}")
    if d["t"].ndim != 1 or d["t"].shape[0] < 2:
        raise ILCFileError(f"{path}: t has shape {d['t'].shape}, expected (samples,) with at least 2 samples")
    n = d["t"].shape[0]
    if "pendulum" in d and (d["pendulum"].shape != (3,) or (d["pendulum"] < 0).any()):
        raise ILCFileError(f"{path}: pendulum must be (mass, length, arm mass) >= 0, got {d['pendulum']}")
    for k in ("reference_q", "reference_dq", "reference_ddq"):
        if d[k].shape != (n,):
            raise ILCFileError(f"{path}: {k} has shape {d[k].shape}, expected ({n},)")
    for k in ("commands", "measured"):
        if d[k].ndim != 2 or d[k].shape[1] != n or d[k].shape[0] < 1:
            raise ILCFileError(f"{path}: {k} has shape {d[k].shape}, expected (iterations, {n})")
    if d["measured"].shape != d["commands"].shape:
        raise ILCFileError(f"{path}: measured has shape {d['measured'].shape}, commands {d['commands'].shape}")
    k_it = d["commands"].shape[0]
    for k in ("errors", "supply"):
        if d[k].shape != (k_it,):
            raise ILCFileError(f"{path}: {k} has shape {d[k].shape}, expected ({k_it},): one per iteration")
    for k, v in d.items():
        if v.dtype.kind == "f" and not np.isfinite(v).all():
            raise ILCFileError(f"{path}: {k} contains non-finite values")
    check_time_grid(str(path), np.asarray(d["t"], float), scalars["dt"])
    return ILCRecord(
        joint=str(d["joint"].reshape(())),
        t=d["t"],
        reference_q=d["reference_q"],
        reference_dq=d["reference_dq"],
        reference_ddq=d["reference_ddq"],
        commands=d["commands"],
        measured=d["measured"],
        errors=d["errors"],
        supply=d["supply"],
        kp=scalars["kp"],
        dt=scalars["dt"],
        delay=scalars["delay"],
        converged_iteration=int(scalars["converged_iteration"]),
        pendulum=d.get("pendulum"),
        stopped=str(d["stopped"].reshape(())) if "stopped" in d else "",
    )
