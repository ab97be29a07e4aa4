"""ROS-free backend of the simulation node: what a backend object gives the node (:class:`SimBackend`), the servo
bank of the stepper backend (:class:`servo_ff.models.servo_bank.ServoBank`, shared with the virtual Dynamixel
bus) with the node's torque switch and error word, and the URDF gravity load.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from servo_ff.models.servo_bank import ServoBank, load_inertia  # noqa: F401 (load_inertia re-exported)
from servo_ff.models.stepper import ExternalLoad


def substeps(v: dict[str, Any]) -> int:
    """Physics steps per control period: the fewest of at most ``physics_dt`` s each."""
    return max(1, math.ceil(1.0 / (v["rate_hz"] * v["physics_dt"]) - 1e-9))


class SimBackend:
    """A physics backend of ``servo_sim_node`` (:class:`servo_ff.nodes.sim_node.SimNode` holds one): the stepper
    (:class:`servo_ff.nodes.sim_stepper.StepperBackend`) or MuJoCo
    (:class:`servo_ff.nodes.mujoco_backend.MujocoBackend`). The node calls ``declare(node)`` (keep the node,
    build the model, declare the parameters with the node's ``_validate``/``_apply``; return the table),
    ``start(values)`` once the servo interface is set up (initial state, own outputs; returns the start-up log
    line, before the clock's part, or None), ``step()`` each control period (False: refused, nothing published),
    ``validate(values)``/``apply(changed)``, ``limit_rows()``, ``reset(was)`` and the servo interface's hooks
    without their ``hw_`` prefix (``configure``, ``cleanup``, ``read``, ``write_goal``, ``write_kp``, ``torque``,
    ``reboot``, ``supply_voltage``, ``diagnostics``). Defaults below: no outputs beyond the servo interface,
    ``joint_states`` go on after a refused step, a failed autostart is retried every second, no servo table."""

    status_name = "sim"
    node: Any = None
    stops_outputs_on_error = False  # True: nothing is published while the node's stepper_error is set

    def publish_outputs(self, stamp: Any) -> None:
        """Topics of this backend beyond the servo interface, just before each published ``joint_states``."""

    def autostart_retry_period(self) -> float:
        return 1.0

    def servo_table(self) -> Any:
        """The control table of the simulated servo type, whose ``kp`` and position range the node checks as the
        hardware node does (:mod:`servo_ff.nodes.servo_ranges`); None: nothing checked."""
        return None


class UrdfGravity:
    """Load of each simulated joint from a fixed-base URDF: gravity τ_e = −g(q) (RNEA at zero velocity and
    acceleration, :func:`servo_ff.dynamics.inverse_dynamics.fixed_base_torques`) and the diagonal of the joint-
    space inertia M(q) (pinocchio CRBA). Coupling between joints (off-diagonal M, Coriolis) is left out: each
    servo sees its own link chain's inertia and the gravity of the whole configuration. URDF joints the sim does
    not drive stay at 0."""

    def __init__(self, urdf_path, joints):
        import pinocchio as pin

        from servo_ff.dynamics.inverse_dynamics import fixed_base_torques
        from servo_ff.dynamics.robot import load_robot

        self._pin, self._rnea = pin, fixed_base_torques
        self.robot = load_robot(urdf_path)
        self.idx = self.robot.index(list(joints))
        self.model = self.robot.fixed
        self.data = self.model.createData()
        self.q = np.zeros(self.robot.n_joints)
        self.zero = np.zeros(self.model.nv)

    def at(self, theta: np.ndarray) -> ExternalLoad:
        self.q[self.idx] = theta
        cfg = self.robot.configuration(self.q)
        g = self._rnea(self.model, self.data, cfg, self.zero, self.zero)
        m = self._pin.crba(self.model, self.data, cfg)
        return ExternalLoad(inertia=np.diag(m)[self.idx].copy(), tau_ext=-g[self.idx])


class SimServos(ServoBank):
    """The sim node's bank: ``enabled`` switches every joint's torque at once; ``hardware_error`` is the error
    word the node reports (cleared by :meth:`reset` and :meth:`reboot`)."""

    hardware_error: int = 0

    @property
    def enabled(self) -> bool:
        return bool(self.enable.all())

    @enabled.setter
    def enabled(self, on: bool) -> None:
        self.enable = np.full(self.n, 1.0 if on else 0.0)

    def reset(self, theta0: np.ndarray) -> None:
        """Back to the start-up state whatever happened before (a refused, even non-finite, state included):
        θ = ``theta0``, θ̇ = 0, goal = internal target = ``theta0``, no effort, errors cleared, torque on."""
        super().reset(theta0)
        self.hardware_error = 0

    def reboot(self) -> None:
        """Like a Dynamixel REBOOT: hardware error cleared, torque off, goal set to the present position."""
        super().reboot()
        self.hardware_error = 0
