"""The per-physics-step kernels of the MuJoCo servo layer (:mod:`.mujoco_servos`): before the step, each servo's
firmware law and friction budget (Duclusaud et al. Eq. 10–15) into ``qfrc_applied``/``dof_frictionloss``; after
it, each servo's external torque for the next budget and the first non-finite state. The scalar core functions
compiled with numba into one loop over the joints (``KERNELS``), and their numpy reference."""

from __future__ import annotations

import mujoco
import numpy as np

from ..models import scalar, slots
from ..models.friction import friction_budget
from ..models.kernels import HAVE_NUMBA, numba
from ..models.motor import firmware_torque, goal_slew

_FRICTION_DOF = int(mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF)


def pre_step_py(
    p,
    qpos,
    qvel,
    qadr,
    dadr,
    goal,
    target,
    enable,
    tau_ext,
    res,
    dt,
    qfrc,
    frictionloss,
    tau_m_out,
    volts_out,
    energy,
    drawn,
):
    """One physics step's servo law and friction budget (numpy; the numba kernel runs the scalar functions)."""
    theta, dtheta = qpos[qadr], qvel[dadr]
    if res > 0.0:
        theta = np.round(theta / res) * res
    target[:] = goal_slew(target, goal, p[:, slots.GVMAX], dt)
    tau_m, volts = firmware_torque(p, theta, dtheta, target)
    tau_m, volts = tau_m * enable, volts * enable
    qfrc[dadr] = tau_m
    budget = friction_budget(p, tau_m, tau_ext, dtheta)
    frictionloss[dadr] = np.maximum(budget - p[:, slots.KV] * np.abs(dtheta), 0.0)
    tau_m_out[:], volts_out[:] = tau_m, volts
    power = volts * (volts - p[:, slots.KT] * dtheta) / p[:, slots.R]
    energy += power * dt
    drawn += np.maximum(power, 0.0) * dt


def post_step_py(efc_type, efc_id, efc_force, bias, constraint, dadr, dof_servo, tau_ext, qpos, qvel) -> int:
    """External torque on each servo (all but motor and its own friction); index of a non-finite state or −1."""
    sel = efc_type == _FRICTION_DOF
    fric = np.bincount(efc_id[sel], weights=efc_force[sel], minlength=len(bias))
    tau_ext[:] = (-bias + constraint - fric)[dadr]
    bad = np.flatnonzero(~np.isfinite(np.concatenate([qpos, qvel])))
    return int(bad[0]) if bad.size else -1


def _build_kernels():
    firmware_1, budget_1 = scalar.firmware_1, scalar.friction_budget_1

    @numba.njit(cache=True, nogil=True)
    def pre(
        p,
        qpos,
        qvel,
        qadr,
        dadr,
        goal,
        target,
        enable,
        tau_ext,
        res,
        dt,
        qfrc,
        frictionloss,
        tau_m_out,
        volts_out,
        energy,
        drawn,
    ):
        for j in range(qadr.shape[0]):
            theta, dtheta = qpos[qadr[j]], qvel[dadr[j]]
            if res > 0.0:
                theta = np.round(theta / res) * res
            lim = p[j, slots.GVMAX] * dt
            target[j] = min(max(goal[j], target[j] - lim), target[j] + lim)
            tau_m, volts = firmware_1(p[j], theta, dtheta, target[j])
            tau_m *= enable[j]
            volts *= enable[j]
            qfrc[dadr[j]] = tau_m
            budget = budget_1(p[j], tau_m, tau_ext[j], dtheta)
            frictionloss[dadr[j]] = max(budget - p[j, slots.KV] * abs(dtheta), 0.0)
            tau_m_out[j] = tau_m
            volts_out[j] = volts
            power = volts * (volts - p[j, slots.KT] * dtheta) / p[j, slots.R]
            energy[j] += power * dt
            drawn[j] += max(power, 0.0) * dt

    @numba.njit(cache=True, nogil=True)
    def post(efc_type, efc_id, efc_force, bias, constraint, dadr, dof_servo, tau_ext, qpos, qvel):
        for j in range(dadr.shape[0]):
            tau_ext[j] = -bias[dadr[j]] + constraint[dadr[j]]
        for i in range(efc_type.shape[0]):
            if efc_type[i] == _FRICTION_DOF and dof_servo[efc_id[i]] >= 0:
                tau_ext[dof_servo[efc_id[i]]] -= efc_force[i]
        for i in range(qpos.shape[0]):
            if not np.isfinite(qpos[i]):
                return i
        for i in range(qvel.shape[0]):
            if not np.isfinite(qvel[i]):
                return qpos.shape[0] + i
        return -1

    return pre, post


KERNELS = _build_kernels() if HAVE_NUMBA else None
