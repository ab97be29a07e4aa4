"""The loads the stepper drives (Duclusaud et al. §V test bench): :class:`PendulumLoad` (τ_e = −(m + m_arm/2)·g·l·sin θ,
θ = 0 hanging down, J = (m + m_arm/3)·l² + J_extra; the paper writes τ_e = m·g·l·sin θ with the angle from the top)
and :class:`ExternalLoad` (a caller-supplied torque and inertia, e.g. from rigid-body dynamics)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRAVITY = 9.80665  # m/s²


@dataclass(frozen=True)
class PendulumLoad:
    """Point mass ``mass`` [kg] at ``length`` [m] on an arm of mass ``arm_mass`` [kg] (bam's bench), plus a fixed
    ``extra_inertia`` [kg·m²] without gravity (e.g. a flywheel; 0 for bam's bench)."""

    mass: np.ndarray | float
    length: np.ndarray | float
    arm_mass: np.ndarray | float = 0.0
    extra_inertia: np.ndarray | float = 0.0

    def gravity_torque_amplitude(self) -> np.ndarray:
        """(m + m_arm/2)·g·l [N·m]: τ_e = −amplitude·sin θ."""
        return (np.asarray(self.mass) + np.asarray(self.arm_mass) / 2) * GRAVITY * np.asarray(self.length)

    def inertia(self) -> np.ndarray:
        """(m + m_arm/3)·l² + J_extra [kg·m²] (armature added by the stepper)."""
        return (np.asarray(self.mass) + np.asarray(self.arm_mass) / 3) * np.asarray(self.length) ** 2 + np.asarray(
            self.extra_inertia
        )


@dataclass(frozen=True)
class ExternalLoad:
    """Caller-supplied external torque [N·m] (per element, or per step in a rollout) and load inertia [kg·m²]."""

    inertia: np.ndarray | float
    tau_ext: np.ndarray | float = 0.0
