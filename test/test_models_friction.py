"""Friction budget and applied friction (Duclusaud et al. Eq. 3–10)."""

import numpy as np
import pytest
from bam_reference import bam_compute_frictions
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_ff.models.friction import applied_friction, friction_budget, stopping_torque
from servo_ff.models.params import MODEL_NAMES, P_ARM, ActuatorParams
from servo_ff.models.presets import preset
from servo_ff.models.stepper import ExternalLoad, PendulumLoad, rollout, step

finite = st.floats(-20, 20, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(
    model=st.sampled_from(MODEL_NAMES),
    servo=st.sampled_from(["mx64", "mx106"]),
    dtheta=finite,
    tau_m=finite,
    tau_e=finite,
    inertia=st.floats(1e-4, 1.0),
)
def test_friction_never_injects_energy(model, servo, dtheta, tau_m, tau_e, inertia):
    """τ_f stays within its budget and only moves θ̇_{k+1} toward 0, never past it (Eq. 4–5)."""
    p = preset(servo, model).packed()
    dt = 0.005
    j = inertia + p[P_ARM]
    budget = friction_budget(p, tau_m, tau_e, dtheta)
    tau_f = applied_friction(stopping_torque(j, dt, dtheta, tau_m, tau_e), budget)
    assert budget >= 0 and abs(tau_f) <= budget + 1e-12
    v_free = dtheta + (tau_m + tau_e) / j * dt
    v_next = dtheta + (tau_m + tau_e + tau_f) / j * dt
    assert abs(v_next) <= abs(v_free) + 1e-9 * (1 + abs(v_free))
    assert v_next * v_free >= -1e-12  # never reverses the motion it stops


@settings(max_examples=50, deadline=None)
@given(model=st.sampled_from(MODEL_NAMES), theta=st.floats(-3, 3), dtheta=st.floats(-10, 10), goal=st.floats(-3, 3))
def test_step_friction_bounded_in_full_stepper(model, theta, dtheta, goal):
    params = preset("mx106", model)
    r = step(params, theta, dtheta, goal, 0.005, PendulumLoad(1.0, 0.15), backend="numpy")
    budget = friction_budget(params.packed(), r.tau_m, -1.0 * 9.80665 * 0.15 * np.sin(theta), dtheta)
    assert abs(r.tau_f) <= budget + 1e-12


def _static_params(model: str, kc: float, kcs: float) -> ActuatorParams:
    friction = {"friction_base": kc, "friction_viscous": 0.01}
    if model == "m2":
        friction.update(friction_stribeck=kcs, dtheta_stribeck=0.2, alpha=1.0)
    return ActuatorParams(actuator="test", model=model, kt=2.0, R=2.5, armature=0.02, friction=friction)


def test_stribeck_holds_a_pose_that_coulomb_lets_slide():
    """Torque off, gravity torque 0.1 N·m: M2 (K_c 0.05 + K_c^s 0.1 at rest) holds, M1 (K_c 0.05) slides."""
    theta0 = np.arcsin(0.1 / (0.5 * 9.80665 * 0.1))
    load = PendulumLoad(mass=0.5, length=0.1)
    goals = np.full(400, theta0)
    held = rollout(_static_params("m2", 0.05, 0.1), theta0, 0.0, goals, 0.005, load, enable=0.0)
    slid = rollout(_static_params("m1", 0.05, 0.0), theta0, 0.0, goals, 0.005, load, enable=0.0)
    assert np.max(np.abs(held.theta - theta0)) < 1e-12
    assert abs(slid.theta[-1] - theta0) > 0.1


def _nest_cases():
    m4 = preset("mx106", "m4").friction
    m6 = preset("mx106", "m6").friction
    yield (
        "m2",
        {
            "friction_base": 0.1,
            "friction_viscous": 0.03,
            "friction_stribeck": 0.0,
            "dtheta_stribeck": 1.0,
            "alpha": 1.3,
        },
        "m1",
        {"friction_base": 0.1, "friction_viscous": 0.03},
    )
    yield (
        "m4",
        {**{k: m4[k] for k in m4}, "friction_stribeck": 0.0, "load_friction_stribeck": 0.0},
        "m3",
        {k: m4[k] for k in ("friction_base", "friction_viscous", "load_friction_base")},
    )
    kl, kls = m4["load_friction_base"], m4["load_friction_stribeck"]
    yield (
        "m5",
        {k: m4[k] for k in ("friction_base", "friction_viscous", "friction_stribeck", "dtheta_stribeck", "alpha")}
        | {
            "load_friction_motor": kl,
            "load_friction_external": kl,
            "load_friction_motor_stribeck": kls,
            "load_friction_external_stribeck": kls,
        },
        "m4",
        dict(m4),
    )
    yield (
        "m6",
        {**m6, "load_friction_motor_quad": 0.0, "load_friction_external_quad": 0.0},
        "m5",
        {k: v for k, v in m6.items() if "quad" not in k},
    )


@pytest.mark.parametrize("big,fb,small,fs", list(_nest_cases()), ids=["m2>m1", "m4>m3", "m5>m4", "m6>m5"])
def test_models_nest(big, fb, small, fs):
    pb = ActuatorParams(actuator="t", model=big, kt=2.2, R=2.4, armature=0.025, friction=fb)
    ps = ActuatorParams(actuator="t", model=small, kt=2.2, R=2.4, armature=0.025, friction=fs)
    rng = np.random.default_rng(3)
    tm, te, v = rng.normal(0, 2, (3, 1000))
    np.testing.assert_array_equal(friction_budget(pb.packed(), tm, te, v), friction_budget(ps.packed(), tm, te, v))
    goals = rng.uniform(-1, 1, (300, 8))
    load = PendulumLoad(mass=1.0, length=0.15)
    np.testing.assert_array_equal(
        rollout(pb, 0.0, 0.0, goals, 0.005, load).theta, rollout(ps, 0.0, 0.0, goals, 0.005, load).theta
    )


def test_quadratic_term_only_when_torques_oppose():
    p = preset("mx106", "m6").packed()
    base = preset("mx106", "m5").packed()
    # opposing torques, |τm| < |τe| → K_m^q·τm² at rest
    got = friction_budget(p, 1.0, -2.0, 0.0) - friction_budget(_no_quad(p), 1.0, -2.0, 0.0)
    assert got == pytest.approx(p[10] * 1.0**2)
    # same sign → no quadratic contribution
    assert friction_budget(p, 1.0, 2.0, 0.0) == pytest.approx(friction_budget(_no_quad(p), 1.0, 2.0, 0.0))
    assert base.shape == p.shape


def _no_quad(p):
    q = p.copy()
    q[10] = q[11] = 0.0
    return q


def test_external_load_matches_pendulum():
    """An ExternalLoad carrying the pendulum's torque per step reproduces the pendulum."""
    params = preset("mx64", "m3")
    load = PendulumLoad(mass=1.5, length=0.2)
    goals = np.sin(np.linspace(0, 6, 200))
    ref = rollout(params, 0.0, 0.0, goals, 0.005, load)
    th, dth = 0.0, 0.0
    amp, inertia = float(load.gravity_torque_amplitude()), float(load.inertia())
    for k, g in enumerate(goals):
        assert th == pytest.approx(ref.theta[k], abs=1e-12)
        th, dth, *_ = step(params, th, dth, g, 0.005, ExternalLoad(inertia, -amp * np.sin(th)))


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_budget_equals_bams_formula(model):
    """All models, moving and at rest, both quadratic branches, against the transcription of bam."""
    rng = np.random.default_rng(11)
    for servo in ("mx64", "mx106"):
        params = preset(servo, model)
        f = params.friction
        for tm, te, v in zip(
            rng.normal(0, 3, 400),
            rng.normal(0, 3, 400),
            np.where(rng.uniform(size=400) < 0.3, 0.0, rng.normal(0, 3, 400)),
        ):
            loss, damping = bam_compute_frictions(f, model, tm, te, v)
            assert friction_budget(params.packed(), tm, te, v) == pytest.approx(loss + damping * abs(v), rel=1e-13)
