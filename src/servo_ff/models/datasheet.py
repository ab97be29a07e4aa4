"""Motor + gearbox datasheet values → output-side actuator parameters (Maximo et al., Position Servo;
Santana et al., MG995 Servomotor).

Maximo et al. Eq. 1–13 / Santana et al. Eq. 6–12 model the motor on its own shaft: τ_m = K_t·i, back-EMF
e = θ̇_m / K_ω, viscous b_m, rotor inertia J_m, gearbox ratio N with efficiency η. Seen from the
output shaft (θ̇_m = N·θ̇):

* torque per amp ``kt = N·η·K_t`` (N·m/A),
* apparent inertia ``armature = η·N²·J_m`` (Maximo et al. Eq. 28/31, Duclusaud et al. (Extended Friction Models) §II-A
  ``J_m = N²J_r``),
* back-EMF damping ``N²·η·K_t / (K_ω·R)`` and viscous ``N²·η·b_m`` (N·m·s/rad).

The servo_ff motor law (Duclusaud et al. Eq. 13) uses one constant for torque and back-EMF, giving damping
``kt²/R``. The difference to the datasheet damping is moved into ``friction_viscous`` so that the
moving behaviour equals the datasheet linear model exactly.

A servo published only by its own figures (stall torque τ_s and current I_s and no-load speed ω_nl at one
voltage V, and its gear ratio N: :class:`ServoDatasheet`, e.g. the ROBOTIS e-manual) gives the motor by the same
equations (:func:`motor_from_servo`): R = V/I_s (Eq. 2 at stall, θ̇ = 0, L di/dt = 0), K_t = 1/K_ω = V/(N·ω_nl)
(Eq. 2–3 and 8 at no load with R·i_NL neglected: no no-load current is published), η = τ_s/(N·K_t·I_s)
(Eq. 13 with τ_m,s = K_t·I_s). Then kt = N·η·K_t = τ_s/I_s, and friction_viscous = kt·(V/ω_nl − kt)/R
is the gearbox loss that makes the model's no-load speed the datasheet's; b_m = 0 (Maximo et al. §2.2 sets the
unknown load friction to 0 as well).
"""

from __future__ import annotations

import math
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


@dataclass(frozen=True)
class ServoDatasheet:
    """A servo's own published figures at supply ``voltage`` [V]: stall torque [N·m] and current [A], no-load
    speed [rad/s], gear ratio [-]; and an output-side ``armature`` [kg·m²] (no datasheet gives it: state its source).
    """

    voltage: float
    stall_torque: float
    stall_current: float
    no_load_speed: float
    gear_ratio: float
    armature: float


def motor_from_servo(s: ServoDatasheet) -> MotorDatasheet:
    """Motor-side values from servo figures (Maximo et al. Eq. 2, 3, 8, 13; see the module docstring)."""
    for k in ("voltage", "stall_torque", "stall_current", "no_load_speed", "gear_ratio", "armature"):
        v = getattr(s, k)
        if not (0 < v < float("inf")):
            raise ParameterError(f"servo datasheet value {k} must be positive and finite, got {v}")
    Kt = s.voltage / (s.gear_ratio * s.no_load_speed)
    eta = s.stall_torque / (s.gear_ratio * Kt * s.stall_current)
    return MotorDatasheet(
        R=s.voltage / s.stall_current,
        Kt=Kt,
        Kw=1.0 / Kt,
        Jm=s.armature / (eta * s.gear_ratio**2),
        N=s.gear_ratio,
        eta=eta,
        bm=0.0,
    )


#: ROBOTIS e-manual XM430-W350 (ROBOTIS-GIT/emanual docs/en/dxl/x/xm430-w350.md): stall torque 4.1 N·m at 12.0 V,
#: 2.3 A; no-load speed 46 rpm at 12.0 V; gear ratio 353.5. Armature: MuJoCo Menagerie's op3.xml joint default
#: (0.045 kg·m², robotis_op3/op3.xml @361161b), a simulation setting, not a measured figure.
XM430_W350_DATASHEET = ServoDatasheet(
    voltage=12.0,
    stall_torque=4.1,
    stall_current=2.3,
    no_load_speed=46 * 2 * math.pi / 60,
    gear_ratio=353.5,
    armature=0.045,
)
#: Coulomb friction of the xm430 preset [N·m]: op3.xml's joint frictionloss 0.03 (Menagerie's simulation setting
#: for the OP3's XM430s); not identified.
XM430_W350_COULOMB = 0.03

#: Maximo et al. Table 1 (Dynamixel MX-28AT).
MX28AT_DATASHEET = MotorDatasheet(R=8.3, Kt=0.0107, Kw=93.1, Jm=8.68e-8, N=193.0, eta=0.836, bm=8.87e-8, L=2.03e-3)
#: Santana et al. Table 3 (TowerPro MG995).
MG995_DATASHEET = MotorDatasheet(R=2.5, Kt=5.8857e-3, Kw=169.9029, Jm=6.3173e-7, N=275.6923, eta=0.81156, bm=2.49797e-7)
