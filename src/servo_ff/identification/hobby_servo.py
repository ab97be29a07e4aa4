"""Physical parameters of a P-controlled hobby servo from its identified transfer function plus datasheets
(Santana et al. (MG995 Servomotor) §5, Eq. 24–29, Table 3: TowerPro MG995 with a Mabuchi RF-130CH motor).

The identified reference-to-angle model Θ_l/Θ_r = b_0/(s² + a_1 s + a_0) (Santana et al. Eq. 5) is matched to the
physical P-loop model with L ≈ 0 (Santana et al. Eq. 23):

    Θ_l/Θ_r = ηNK_tK_P / (R J_eq s² + (R b_eq + ηN²K_t²) s + ηNK_tK_P),   J_eq = J_l + J_mηN²,  b_eq = b_mηN²

with K_ω = 1/K_t (Santana et al. Eq. 11). N from tooth counts (Eq. 24), K_t from stall data (Eq. 25), η from stall
torques (Eq. 26), b_m from no-load data (Eq. 27); then a_1 gives J_m (Eq. 28) and a_0 gives K_P (Eq. 29).
K_P is in V/rad (the paper's 16.6742 with θ in rad).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..models.datasheet import MotorDatasheet
from ..models.params import ParameterError
from ..models.transfer_functions import (
    gear_ratio_from_teeth,
    gearbox_efficiency,
    motor_viscous_friction,
    torque_constant_from_stall,
)
from .tf_fit import UnstableModelError


@dataclass(frozen=True)
class HobbyServoData:
    """Datasheet/bench facts (Santana et al. Table 1–2): stall torques [N·m], stall current [A], no-load speed [rad/s]
    and current [A] of the motor, measured resistance [Ω] and gear tooth counts in transmission order."""

    tau_load_stall: float
    tau_motor_stall: float
    i_motor_stall: float
    speed_no_load: float
    i_no_load: float
    R: float
    teeth: Sequence[int]


#: Santana et al. Table 1 (MG995 + RF-130CH datasheets, R measured) and Table 2 (gear teeth G1..G8).
MG995_DATA = HobbyServoData(
    tau_load_stall=0.9218,
    tau_motor_stall=0.00412,
    i_motor_stall=0.7,
    speed_no_load=848.23,
    i_no_load=0.036,
    R=2.5,
    teeth=(12, 64, 12, 48, 12, 48, 13, 42),
)
#: Santana et al. Eq. 5: the MG995 transfer function identified from PRBS data (numerator, monic denominator).
MG995_IDENTIFIED_NUM = (224.8,)
MG995_IDENTIFIED_DEN = (1.0, 22.33, 225.4)


@dataclass(frozen=True)
class HobbyServoModel:
    """Datasheet-style motor model plus the embedded proportional gain K_P [V/rad]."""

    datasheet: MotorDatasheet
    KP: float


def physical_parameters_from_tf(den, data: HobbyServoData = MG995_DATA, J_l: float = 0.0) -> HobbyServoModel:
    """Santana et al. Eq. 24–29: N, K_t, η, b_m from ``data``; J_m and K_P from the identified monic denominator
    ``den`` = [1, a_1, a_0] measured with load inertia ``J_l`` [kg·m²] (0 for the bare servo)."""
    d = np.asarray(den, dtype=float).reshape(-1)
    if d.size != 3 or not np.all(np.isfinite(d)) or d[0] == 0:
        raise ValueError(f"den must be a second-order denominator [1, a1, a0], got {den!r}")
    d = d / d[0]
    if d[1] <= 0 or d[2] <= 0:
        raise UnstableModelError(f"identified denominator {d.tolist()} is not stable (a1, a0 must be > 0)")
    if not (np.isfinite(J_l) and J_l >= 0):
        raise ParameterError(f"J_l must be finite and >= 0, got {J_l}")
    a1, a0 = float(d[1]), float(d[2])
    N = gear_ratio_from_teeth(data.teeth)  # Eq. 24
    Kt = torque_constant_from_stall(data.tau_motor_stall, data.i_motor_stall)  # Eq. 25
    eta = gearbox_efficiency(data.tau_load_stall, data.tau_motor_stall, N)  # Eq. 26
    bm = motor_viscous_friction(Kt, data.i_no_load, data.speed_no_load)  # Eq. 27
    if not (data.R > 0 and np.isfinite(data.R)):
        raise ParameterError(f"R must be positive and finite, got {data.R}")
    R = float(data.R)
    Jeq = eta * N**2 * (bm + Kt**2 / R) / a1  # a1 = (R b_eq + ηN²K_t²)/(R J_eq)
    Jm = (Jeq - J_l) / (eta * N**2)  # Eq. 28 (J_l = 0: (b_m + K_t²/R)/J_m = a1)
    if Jm <= 0:
        raise ParameterError(
            f"J_m from a1 = {a1} and J_l = {J_l} is not positive ({Jm:.3g}): J_l too large or a1 too small"
        )
    KP = a0 * R * Jeq / (eta * N * Kt)  # Eq. 29 (J_l = 0: K_t K_P/(R J_m N) = a0)
    ds = MotorDatasheet(R=R, Kt=Kt, Kw=1.0 / Kt, Jm=Jm, N=N, eta=eta, bm=bm, L=0.0)
    return HobbyServoModel(ds, float(KP))
