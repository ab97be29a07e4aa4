"""Motor + gearbox datasheet values → output-side actuator parameters (seeds 000 and 001).

Seed 000 Eq. 1–13 / seed 001 Eq. 6–12 model the motor on its own shaft: τ_m = K_t·i, back-EMF
e = θ̇_m / K_ω, viscous b_m, rotor inertia J_m, gearbox ratio N with efficiency η. Seen from the
output shaft (θ̇_m = N·θ̇):

* torque per amp ``kt = N·η·K_t`` (N·m/A),
* apparent inertia ``armature = η·N²·J_m`` (seed 000 Eq. 28/31, seed 004 §II-A ``J_m = N²J_r``),
* back-EMF damping ``N²·η·K_t / (K_ω·R)`` and viscous ``N²·η·b_m`` (N·m·s/rad).

The servo_ff motor law (seed 004 Eq. 13) uses one constant for torque and back-EMF, giving damping
``kt²/R``. The difference to the datasheet damping is moved into ``friction_viscous`` so that the
moving behaviour equals the datasheet linear model exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from .params import ParameterError


@dataclass(frozen=True)
class MotorDatasheet:
    """Motor-side datasheet values (SI): R [Ω], Kt [N·m/A], Kw [rad/(V·s)], Jm [kg·m²], N [-], eta [-], bm [N·m·s]."""

    R: float
    Kt: float
    Kw: float
    Jm: float
    N: float
    eta: float
    bm: float
    L: float = 0.0  # inductance [H], used by the transfer functions only

    def __post_init__(self) -> None:
        for k in ("R", "Kt", "Kw", "Jm", "N", "eta"):
            v = getattr(self, k)
            if not (v > 0) or v != v or v == float("inf"):
                raise ParameterError(f"datasheet value {k} must be positive and finite, got {v}")
        if self.eta > 1:
            raise ParameterError(f"datasheet value eta must be <= 1, got {self.eta}")
        if not (self.bm >= 0) or not (self.L >= 0):
            raise ParameterError("datasheet values bm and L must be >= 0")


def output_torque_constant(ds: MotorDatasheet) -> float:
    """kt = N·η·K_t [N·m/A] at the output shaft."""
    return ds.N * ds.eta * ds.Kt


def output_armature(ds: MotorDatasheet) -> float:
    """Apparent rotor inertia at the output, η·N²·J_m [kg·m²]."""
    return ds.eta * ds.N**2 * ds.Jm


def output_viscous_friction(ds: MotorDatasheet) -> float:
    """Viscous coefficient [N·m·s/rad] such that kt²/R + K_v equals the datasheet damping
    N²η(b_m + K_t/(K_ω R))."""
    kt = output_torque_constant(ds)
    datasheet_damping = ds.N**2 * ds.eta * (ds.bm + ds.Kt / (ds.Kw * ds.R))
    return max(datasheet_damping - kt**2 / ds.R, 0.0)


#: Seed 000 Table 1 (Dynamixel MX-28AT).
MX28AT_DATASHEET = MotorDatasheet(R=8.3, Kt=0.0107, Kw=93.1, Jm=8.68e-8, N=193.0, eta=0.836, bm=8.87e-8, L=2.03e-3)
#: Seed 001 Table 3 (TowerPro MG995).
MG995_DATASHEET = MotorDatasheet(R=2.5, Kt=5.8857e-3, Kw=169.9029, Jm=6.3173e-7, N=275.6923, eta=0.81156, bm=2.49797e-7)
