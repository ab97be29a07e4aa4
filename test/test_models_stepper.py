"""The batched stepper against the per-sample scalar reference (Algorithm 1), shapes and bad input."""

import numpy as np
import pytest

from servo_ff.models.params import N_PACKED, P_ARM, P_KP, P_KT, P_R, FirmwareLaw
from servo_ff.models.presets import preset
from servo_ff.models.scalar import step_1
from servo_ff.models.stepper import GRAVITY, ExternalLoad, PendulumLoad, rollout, step


def _random_problem(rng, batch=6, joints=5, steps=80):
    models = ["m1", "m2", "m3", "m4", "m5", "m6"]
    params = np.stack(
        [
            np.stack([preset(rng.choice(["mx64", "mx106"]), models[(b + j) % 6]).packed() for j in range(joints)])
            for b in range(batch)
        ]
    )
    params[..., P_KP] = rng.choice([4.0, 8.0, 16.0, 32.0], (batch, joints))
    params[1, 2, 19], params[1, 2, 18] = 1.0, 1.5  # one current-controlled joint (Eq. 14–15)
    mass = rng.uniform(0.5, 1.5, (batch, joints))
    length = rng.uniform(0.1, 0.2, (batch, joints))
    goals = rng.uniform(-1.5, 1.5, (steps, batch, joints))
    enable = (rng.uniform(size=(steps, batch, joints)) > 0.1).astype(float)
    theta0 = rng.uniform(-1, 1, (batch, joints))
    dtheta0 = rng.uniform(-2, 2, (batch, joints))
    return params, PendulumLoad(mass, length, 0.1), goals, enable, theta0, dtheta0


def _scalar_reference(params, load, goals, enable, theta0, dtheta0, dt):
    steps, batch, joints = goals.shape
    out = np.empty((steps, batch, joints))
    grav = np.broadcast_to(load.gravity_torque_amplitude(), (batch, joints))
    inertia = np.broadcast_to(load.inertia(), (batch, joints))
    for b in range(batch):
        for j in range(joints):
            p = [float(x) for x in params[b, j]]
            th, dth = float(theta0[b, j]), float(dtheta0[b, j])
            for k in range(steps):
                out[k, b, j] = th
                th, dth, *_ = step_1(
                    p,
                    th,
                    dth,
                    float(goals[k, b, j]),
                    dt,
                    float(grav[b, j]),
                    0.0,
                    float(inertia[b, j]),
                    float(enable[k, b, j]),
                )
    return out


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_batched_equals_scalar_reference(backend):
    rng = np.random.default_rng(7)
    params, load, goals, enable, th0, dth0 = _random_problem(rng)
    ref = _scalar_reference(params, load, goals, enable, th0, dth0, 0.004)
    got = rollout(params, th0, dth0, goals, 0.004, load, enable=enable, backend=backend)
    np.testing.assert_allclose(got.theta, ref, rtol=0, atol=1e-12)


def test_step_and_rollout_agree_and_positions_only():
    rng = np.random.default_rng(8)
    params, load, goals, enable, th0, dth0 = _random_problem(rng, steps=20)
    full = rollout(params, th0, dth0, goals, 0.005, load, enable=enable)
    thin = rollout(params, th0, dth0, goals, 0.005, load, enable=enable, positions_only=True)
    np.testing.assert_array_equal(full.theta, thin.theta)
    th, dth = th0, dth0
    for k in range(goals.shape[0]):
        np.testing.assert_allclose(th, full.theta[k], atol=1e-13)
        r = step(params, th, dth, goals[k], 0.005, load, enable=enable[k])
        np.testing.assert_allclose(r.tau_m, full.tau_m[k], atol=1e-12)
        th, dth = r.theta, r.dtheta


def test_one_servo_and_many_have_the_same_dynamics():
    params = preset("mx106", "m4")
    goals = np.sin(np.linspace(0, 4, 300))
    one = rollout(params, 0.0, 0.0, goals, 0.005, PendulumLoad(1.0, 0.15))
    many = rollout(
        params,
        np.zeros((64, 20)),
        0.0,
        np.broadcast_to(goals[:, None, None], (300, 64, 20)),
        0.005,
        PendulumLoad(1.0, 0.15),
    )
    assert one.theta.shape == (300,) and many.theta.shape == (300, 64, 20)
    np.testing.assert_array_equal(many.theta[:, 17, 3], one.theta)


def test_voltage_law_saturates_and_stall_torque():
    """Stalled (θ̇ = 0) far from the goal: U = vin·max_pwm and τ_m = kt/R·U (Eq. 12–13)."""
    params = preset("mx106", "m1")
    r = step(params, 0.0, 0.0, 3.0, 0.005, ExternalLoad(inertia=1e6))
    assert r.volts == pytest.approx(15.0 * 0.9625)
    assert r.tau_m == pytest.approx(params.kt / params.R * 15.0 * 0.9625)
    small = step(params, 0.0, 0.0, 0.01, 0.005, ExternalLoad(inertia=1e6))
    assert small.volts == pytest.approx(15.0 * 32 * 0.158 * 0.01)


def test_current_law_respects_heat_and_emf_limits():
    params = preset("mx106", "m1").with_(
        firmware=FirmwareLaw("current", vin=15.0, kp=32, error_gain=1.0, max_pwm=1.0, current_limit=2.0)
    )
    r = step(params, 0.0, 0.0, 1.0, 0.005, ExternalLoad(inertia=1.0))
    assert r.tau_m == pytest.approx(params.kt * 2.0)  # heat limit
    fast = 6.0  # rad/s: back-EMF leaves (15 − kt·6)/R
    r = step(params, 0.0, fast, 1.0, 0.005, ExternalLoad(inertia=1.0))
    assert r.tau_m == pytest.approx(params.kt * min(2.0, (15.0 - params.kt * fast) / params.R))


def test_torque_disabled_pendulum_conserves_energy_without_friction():
    params = preset("mx106", "m1").with_(friction_base=0.0, friction_viscous=0.0)
    load = PendulumLoad(mass=1.0, length=0.2)
    res = rollout(params, 1.0, 0.0, np.zeros(2000), 0.0005, load, enable=0.0)
    j = float(load.inertia()) + params.armature
    energy = 0.5 * j * res.dtheta**2 - 1.0 * GRAVITY * 0.2 * np.cos(res.theta)
    assert np.ptp(energy) < 1e-2 * abs(energy[0])  # Algorithm 1 integrates explicitly: slow drift only
    assert res.theta.min() < -0.9  # it really swings


@pytest.mark.parametrize("arg", ["theta", "dtheta", "goal"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_names_the_argument(arg, bad):
    kwargs = dict(theta=np.zeros(3), dtheta=np.zeros(3), goal=np.zeros(3))
    kwargs[arg] = np.array([0.0, bad, 0.0])
    with pytest.raises(ValueError, match=arg):
        step(preset("mx106", "m4"), dt=0.005, **kwargs)


def test_nan_goal_in_rollout_and_bad_shapes():
    goals = np.zeros((10, 3))
    goals[4, 1] = np.nan
    with pytest.raises(ValueError, match="goals"):
        rollout(preset("mx106", "m4"), np.zeros(3), 0.0, goals, 0.005)
    with pytest.raises(ValueError, match="broadcast"):
        step(preset("mx106", "m4"), np.zeros(3), np.zeros(4), np.zeros(3), 0.005)
    with pytest.raises(ValueError, match="dt"):
        step(preset("mx106", "m4"), 0.0, 0.0, 0.0, -1.0)
    with pytest.raises(ValueError, match="params"):
        step(np.zeros((2, N_PACKED - 1)), 0.0, 0.0, 0.0, 0.005)
    with pytest.raises(ValueError, match="load.inertia"):
        step(preset("mx106", "m4"), 0.0, 0.0, 0.0, 0.005, ExternalLoad(inertia=np.nan))


def test_packed_params_per_element():
    p = np.broadcast_to(preset("mx106", "m4").packed(), (2, 3, N_PACKED)).copy()
    p[1, :, P_KT] *= 1.5
    p[1, :, P_R] *= 1.0
    r = step(p, np.zeros((2, 3)), 0.0, 0.5, 0.005, ExternalLoad(inertia=0.01))
    np.testing.assert_allclose(r.tau_m[1], 1.5 * r.tau_m[0])


def test_all_outputs_equal_the_scalar_reference_including_current_law_limits():
    """Every output of the SIMD rollout against step_1, with current-controlled joints driven into the heat limit
    and both back-EMF limits (fast motion both ways), per-step external torque and torque switching."""
    rng = np.random.default_rng(21)
    steps, joints = 120, 6
    base = preset("mx106", "m6")
    p = np.broadcast_to(base.packed(), (2, joints, N_PACKED)).copy()
    p[:, :, 19] = 1.0  # current law everywhere
    p[:, :, 14], p[:, :, 17] = 15.0, 1.0
    p[:, :, 15], p[:, :, 16] = 32.0, 0.5
    p[:, :, 18] = np.array([0.8, 1.5, 3.0, 50.0, 50.0, 50.0])  # heat-limited and emf-limited joints
    p[1] = base.packed()  # second batch row: voltage law
    goals = np.concatenate([np.full((60, 2, joints), 3.0), np.full((60, 2, joints), -3.0)])
    tau_ext = rng.normal(0, 0.5, (steps, 2, joints))
    enable = (rng.uniform(size=(steps, 2, joints)) > 0.05).astype(float)
    th0 = rng.uniform(-0.5, 0.5, (2, joints))
    dth0 = np.array([[6.0, -6.0, 0.0, 5.5, -5.5, 0.0]] * 2)
    inertia = 0.01
    got = rollout(p, th0, dth0, goals, 0.002, ExternalLoad(inertia=inertia, tau_ext=tau_ext), enable=enable)
    hit_hi = hit_lo = False
    for b in range(2):
        for j in range(joints):
            pj = [float(x) for x in p[b, j]]
            th, dth = th0[b, j], dth0[b, j]
            for k in range(steps):
                ref = step_1(pj, th, dth, goals[k, b, j], 0.002, 0.0, tau_ext[k, b, j], inertia, enable[k, b, j])
                for name, value in zip(("theta", "dtheta"), (th, dth)):
                    assert getattr(got, name)[k, b, j] == pytest.approx(value, abs=1e-10), (name, b, j, k)
                for idx, name in ((2, "tau_m"), (3, "tau_f"), (4, "volts")):
                    assert getattr(got, name)[k, b, j] == pytest.approx(ref[idx], abs=1e-9), (name, b, j, k)
                if b == 0 and enable[k, b, j]:
                    u_max, kt, r = 15.0, pj[0], pj[1]
                    current = ref[2] / kt
                    hit_hi |= abs(current - (u_max - kt * dth) / r) < 1e-9 and (u_max - kt * dth) / r < pj[18]
                    hit_lo |= abs(current - (-u_max - kt * dth) / r) < 1e-9 and (-u_max - kt * dth) / r > -pj[18]
                th, dth = ref[0], ref[1]
    assert hit_hi and hit_lo  # both back-EMF limits of Eq. 14 were exercised


def test_per_step_external_torque_matches_a_loop_of_steps():
    params = preset("mx64", "m4")
    rng = np.random.default_rng(5)
    tau = rng.normal(0, 1.0, (150, 3))
    goals = rng.uniform(-1, 1, (150, 3))
    res = rollout(params, np.zeros(3), 0.0, goals, 0.005, ExternalLoad(0.02, tau))
    th, dth = np.zeros(3), np.zeros(3)
    for k in range(150):
        np.testing.assert_allclose(res.theta[k], th, atol=1e-11)
        th, dth, *_ = step(params, th, dth, goals[k], 0.005, ExternalLoad(0.02, tau[k]))


def test_more_bad_input_is_refused():
    params = preset("mx106", "m4")
    with pytest.raises(ValueError, match="at least one step"):
        rollout(params, 0.0, 0.0, np.zeros((0, 3)), 0.005)
    with pytest.raises(ValueError, match="enable"):
        step(params, 0.0, 0.0, 0.0, 0.005, enable=2.0)
    massless = params.packed().copy()
    massless[P_ARM] = 0.0
    with pytest.raises(ValueError, match="inertia"):
        step(massless, 0.1, 0.0, 1.0, 0.005)
    with pytest.raises(ValueError, match="armature=0 is outside its admissible range"):
        params.with_(armature=0.0)
    with pytest.raises(ValueError, match="length"):
        step(params, 0.1, 0.0, 1.0, 0.005, PendulumLoad(mass=1.0, length=-0.1))
    bad = params.packed().copy()
    bad[P_R] = 0.0
    with pytest.raises(ValueError, match="R"):
        step(bad, 0.0, 0.0, 1.0, 0.005, ExternalLoad(0.01))
    with pytest.raises(ValueError, match=r"theta \(3,\).*dtheta \(4,\)"):
        step(params, np.zeros(3), np.zeros(4), np.zeros(3), 0.005)


@pytest.mark.parametrize("slew", [True, False])
def test_fused_steps_equal_one_step_at_a_time(slew):
    """steps(): all the steps in one compiled call (static load) equal the step-by-step path (the numba kernel
    per step, forced by a load function) and the numpy backend, goal slew and held target included."""
    from servo_ff.models import kernels
    from servo_ff.models.stepper import steps

    if not kernels.HAVE_NUMBA:
        pytest.skip("numba missing: there is no fused path")
    rng = np.random.default_rng(3)
    p = preset("mx64", "m4")
    j = 3
    th, dth, goal, target = (rng.normal(size=j) for _ in range(4))
    load = PendulumLoad(mass=np.full(j, 0.5), length=np.full(j, 0.15))
    kw = dict(goal_rate=np.full(j, 2.0) if slew else None, target=target)
    fused, t_fused = steps(p, th, dth, goal, 0.001, 9, load=load, backend="numba", **kw)
    looped, t_looped = steps(p, th, dth, goal, 0.001, 9, load_of=lambda _th: load, backend="numba", **kw)
    ref, t_ref = steps(p, th, dth, goal, 0.001, 9, load=load, backend="numpy", **kw)
    for a, b, c in zip(fused, looped, ref):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(t_fused, t_looped)
    assert np.abs(fused.theta - th).max() > 1e-4  # it moved
    if slew:
        assert np.abs(t_fused - target).max() <= 2.0 * 0.009 + 1e-12  # slewed at most 2 rad/s × 9 ms
    else:
        np.testing.assert_array_equal(t_fused, target)  # no slew: the target holds


def test_servo_bank_checks_parameters_once_and_again_when_they_change():
    """ServoBank.advance on the compiled kernel checks the parameter rows and the static load once
    (stepper.static_inputs) and again when they change: in place (set_kp, supply_voltage) or a new load. Each
    period equals the numpy backend's, which checks everything every call; a bad row is still refused."""
    from servo_ff.models import kernels
    from servo_ff.models.servo_bank import ServoBank

    if not kernels.HAVE_NUMBA:
        pytest.skip("numba missing: there is no compiled path")
    p = preset("mx64", "m4")
    load = PendulumLoad(mass=np.array([0.5, 0.3]), length=np.array([0.15, 0.2]))
    fast, ref = ServoBank(p, 2, load=load), ServoBank(p, 2, load=load, backend="numpy")

    def period(goal):
        for b in (fast, ref):
            b.goal = np.asarray(goal, dtype=np.float64)
            b.advance(0.005, 5)
        np.testing.assert_allclose(fast.theta, ref.theta, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fast.dtheta, ref.dtheta, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fast.tau_m, ref.tau_m, rtol=1e-12, atol=1e-12)

    for _ in range(20):
        period([0.8, -0.5])
    moved = fast.theta.copy()
    for b in (fast, ref):
        b.set_kp(np.array([32.0, 2.0]))  # in place: the cached rows must not be used
    period([0.8, -0.5])
    for b in (fast, ref):
        b.supply_voltage = 9.0
    period([0.8, -0.5])
    for b in (fast, ref):
        b.load = PendulumLoad(mass=np.array([2.0, 0.0]), length=np.array([0.3, 0.0]), extra_inertia=np.array([0, 1e-3]))
    for _ in range(10):
        period([0.8, -0.5])
    assert np.abs(fast.theta - moved).max() > 1e-3  # the changes changed the motion
    fast.supply_voltage = 0.0  # not a valid row (vin > 0): refused, as every call of steps() refuses it
    with pytest.raises(ValueError, match="vin"):
        fast.advance(0.005, 5)
    fast.supply_voltage = 12.0
    fast.goal = np.array([np.nan, 0.0])
    with pytest.raises(ValueError, match="finite"):
        fast.advance(0.005, 5)


def test_the_threaded_and_the_serial_kernel_give_the_same_bits():
    """A rollout of 4096 elements (chunks over the thread pool, ``rollout_simd``) and one element of it alone (the
    calling thread, ``rollout_serial``; padded to a whole vector) step the same way, to the bit."""
    rng = np.random.default_rng(11)
    n = 4096
    goals = np.sin(np.linspace(0, 6, 120))[:, None] * rng.uniform(0.2, 1.5, n)
    mass = rng.uniform(0.2, 2.0, n)
    params = np.stack([preset("mx106", m).packed() for m in rng.choice(["m1", "m4", "m6"], n)])
    many = rollout(params, np.zeros(n), 0.0, goals, 0.005, PendulumLoad(mass, 0.15))
    for k in (0, 1234, n - 1):
        one = rollout(params[k], 0.0, 0.0, goals[:, k], 0.005, PendulumLoad(mass[k], 0.15))
        for name in ("theta", "dtheta", "tau_m", "tau_f", "volts"):
            np.testing.assert_array_equal(getattr(one, name), getattr(many, name)[:, k], err_msg=f"{name} [{k}]")
    assert np.ptp(many.theta) > 0.5  # they really moved


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_rollout_writes_into_the_callers_outputs(backend):
    """``out=``: the same bits as fresh outputs, written into the caller's arrays (NaN-filled before, so a field
    left unwritten shows), for the full and the positions-only rollout; a wrong array is refused by name."""
    from servo_ff.models.stepper import StepResult

    rng = np.random.default_rng(12)
    params, load, goals, enable, th0, dth0 = _random_problem(rng, steps=30)
    fresh = rollout(params, th0, dth0, goals, 0.005, load, enable=enable, backend=backend)
    out = StepResult(*(np.full(goals.shape, np.nan) for _ in range(5)))
    got = rollout(params, th0, dth0, goals, 0.005, load, enable=enable, backend=backend, out=out)
    for name in StepResult._fields:
        np.testing.assert_array_equal(getattr(out, name), getattr(fresh, name), err_msg=name)
        assert np.shares_memory(getattr(got, name), getattr(out, name))
    theta = np.full(goals.shape, np.nan)
    thin = rollout(params, th0, dth0, goals, 0.005, load, enable=enable, backend=backend, positions_only=True,
                   out=StepResult(theta, None, None, None, None))  # fmt: skip
    np.testing.assert_array_equal(theta, fresh.theta)
    assert np.shares_memory(thin.theta, theta)
    bad = [
        (out._replace(volts=np.empty(goals.shape[1:])), "out.volts has shape"),
        (out._replace(tau_f=np.empty(goals.shape, dtype=np.float32)), "out.tau_f must be"),
        (out._replace(tau_m=out.theta), "overlap"),
    ]
    for o, words in bad:
        with pytest.raises(ValueError, match=words):
            rollout(params, th0, dth0, goals, 0.005, load, backend=backend, out=o)
