"""The packed parameter vector every backend consumes (:meth:`~servo_ff.models.params.ActuatorParams.packed`):
the index of each coefficient. The order is core API.

Plain ints in a module of their own, so every backend indexes with a constant (``p[slots.KC]``): numba folds
them into the kernels, and CPython reads a module attribute as fast as a global. The same layout as an IntEnum
(names, iteration, typing) is :class:`servo_ff.models.friction_models.Slot`, built from this module (an IntEnum
member as an index costs CPython 3.11 ~0.3 µs per access: it made the scalar reference 2.5× slower).
"""

KT = 0  # torque constant [N·m/A]
R = 1  # winding resistance [Ω]
ARM = 2  # armature [kg·m²]
KC = 3  # Coulomb K_c [N·m]
KV = 4  # viscous K_v [N·m·s/rad]
KCS = 5  # Stribeck Coulomb K_c^s [N·m]
KM = 6  # load-dependent, motor side K_m [-]
KE = 7  # load-dependent, external side K_e [-]
KMS = 8  # Stribeck load-dependent, motor side K_m^s [-]
KES = 9  # Stribeck load-dependent, external side K_e^s [-]
KMQ = 10  # quadratic, motor side K_m^q [1/(N·m)]
KEQ = 11  # quadratic, external side K_e^q [1/(N·m)]
VS = 12  # Stribeck velocity v_s [rad/s]
ALPHA = 13  # Stribeck exponent [-]
VIN = 14  # supply voltage [V]
KP = 15  # firmware P gain [register units]
EGAIN = 16  # firmware error gain [duty or A per register·rad]
MAXPWM = 17  # duty-cycle limit [-]
IMAX = 18  # current limit [A] (inf: none)
LAW = 19  # firmware law: 0 voltage, 1 current
QOFF = 20  # q_offset [rad]: the load is evaluated at θ + q_offset (bam)
VMAX = 21  # simulator velocity clamp |θ̇| ≤ dtheta_max [rad/s] (bam: 100)
GVMAX = 22  # firmware goal-velocity limit [rad/s] (inf: none; Feetech STS)
