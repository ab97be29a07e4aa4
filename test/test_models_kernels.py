"""The fused rollout kernel's parts: its vectorisable exp/log/sin against the exact values, a shared parameter row
against the same row given per element, and the shortest rollouts against the numpy path."""

import math

import numpy as np
import pytest

from servo_ff.models import kernels
from servo_ff.models.fastmath import exp_, log_, sin_
from servo_ff.models.presets import preset
from servo_ff.models.stepper import PendulumLoad, rollout

pytestmark = pytest.mark.skipif(not kernels.HAVE_NUMBA, reason="numba missing: there is no compiled path")

ULP = np.finfo(np.float64).eps  # 2.2e-16


def _vectorised(fn):
    """``fn`` applied element-wise in a compiled loop (the way the kernel calls it)."""
    import numba

    @numba.njit(fastmath={"contract", "arcp", "afn"}, error_model="numpy")
    def run(x, out):
        for i in range(x.size):
            out[i] = fn(x[i])

    def apply(x):
        out = np.empty_like(x)
        run(x, out)
        return out

    return apply


def _exact(name: str, x: np.ndarray) -> np.ndarray:
    """numpy's ``name`` of ``x`` in long double where it carries 64 bits of mantissa (x86 Linux: 0.5 ulp of double
    at worst, as a reference), else libm's double per element. Not numpy's double ufunc: on AVX-512 CPUs numpy has
    its own exp/log/sin, an ulp or so from glibc's, which the bounds below cannot absorb."""
    if np.finfo(np.longdouble).eps < 1e-18:
        return getattr(np, name)(x.astype(np.longdouble))
    return np.array([getattr(math, name)(v) for v in x])


def test_exp_log_sin_are_within_two_ulp_of_the_exact_values():
    """The polynomial exp (Estrin), log (fdlibm minimax) and sin stay within ~2 ulp of the exact values (measured
    here: exp 1.69, log 0.76, sin 0.57 ulp) on the ranges the Stribeck weight and the pendulum use (a wrong
    coefficient shows as 1e-10 or worse)."""
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-700.0, 700.0, 20000), rng.uniform(-40.0, 1.0, 20000), [-708.0, 0.0, 709.0]])
    ref = _exact("exp", x)
    rel = np.abs(_vectorised(exp_)(x) - ref) / ref
    assert rel.max() < 2.5 * ULP
    x = np.concatenate([rng.uniform(1e-6, 60.0, 20000), np.geomspace(1e-300, 1e300, 20000), [1.0, np.sqrt(2.0)]])
    got, ref = _vectorised(log_)(x), _exact("log", x)
    assert np.abs(got - ref).max() <= 2.0 * ULP * np.abs(ref).max()
    assert (np.abs(got - ref) <= 2.0 * ULP * np.maximum(np.abs(ref), 1.0)).all()
    x = np.concatenate([rng.uniform(-60.0, 60.0, 20000), np.linspace(-4.0, 4.0, 4001)])
    assert np.abs(_vectorised(sin_)(x) - _exact("sin", x)).max() < 2.0 * ULP


def test_a_shared_parameter_row_steps_as_the_same_row_given_per_element():
    """One ActuatorParams (one column for every element in the kernel) and its packed row repeated per element
    (a column each) give the same bits, above and below the threaded size, full and positions-only."""
    rng = np.random.default_rng(5)
    params = preset("mx106", "m6")
    for batch in (3, 160):  # 60 elements on the calling thread, 3200 over the pool
        goals = rng.uniform(-1.0, 1.0, (40, batch, 20))
        load = PendulumLoad(rng.uniform(0.2, 1.5, (batch, 20)), 0.15)
        th0 = rng.uniform(-0.5, 0.5, (batch, 20))
        per_element = np.broadcast_to(params.packed(), (batch, 20, params.packed().size)).copy()
        shared = rollout(params, th0, 0.0, goals, 0.005, load)
        each = rollout(per_element, th0, 0.0, goals, 0.005, load)
        for name in ("theta", "dtheta", "tau_m", "tau_f", "volts"):
            np.testing.assert_array_equal(getattr(shared, name), getattr(each, name), err_msg=f"{name} ({batch})")
        thin = rollout(params, th0, 0.0, goals, 0.005, load, positions_only=True)
        np.testing.assert_array_equal(thin.theta, shared.theta)
        assert np.ptp(shared.theta) > 0.5  # they moved


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_the_shortest_rollouts_record_every_step(steps):
    """A rollout's outputs are written one step late in the kernel (τ_m, τ_f, U of step k with θ of step k + 1):
    one to three steps still give every field of every step, as the numpy path does."""
    rng = np.random.default_rng(9)
    params = preset("mx64", "m4")
    goals = rng.uniform(-1.0, 1.0, (steps, 4, 3))
    load = PendulumLoad(1.0, 0.15)
    fused = rollout(params, 0.2, 0.5, goals, 0.005, load, backend="numba")
    ref = rollout(params, 0.2, 0.5, goals, 0.005, load, backend="numpy")
    for name in ("theta", "dtheta", "tau_m", "tau_f", "volts"):
        np.testing.assert_allclose(getattr(fused, name), getattr(ref, name), rtol=0, atol=1e-12, err_msg=name)
    assert np.abs(fused.tau_m[-1]).min() > 0.0  # the last step's torques were written (not left at zero)


def _at(shape, mis: int) -> np.ndarray:
    """A NaN-filled C-contiguous float64 array of ``shape`` whose first element is ``mis`` doubles past a 64-byte
    boundary."""
    n = int(np.prod(shape))
    buf = np.full(n + 16, np.nan)
    off = (mis - buf.ctypes.data // 8) % 8
    a = buf[off : off + n].reshape(shape)
    assert (a.ctypes.data // 8) % 8 == mis % 8
    return a


def test_streamed_outputs_have_the_bits_of_plain_stores(monkeypatch):
    """Outputs large enough for streaming stores (the threshold lowered to 0 here) get the same bits as plain
    stores, whatever the arrays' alignment: equal (streamed, with the elements before the first 64-byte boundary and
    after the last stored plainly) or unequal (plain stores); NaN-filled first, so an element left unwritten shows."""
    from servo_ff.models import stepper
    from servo_ff.models.stepper import StepResult

    rng = np.random.default_rng(2)
    params = preset("mx106", "m6")
    for batch, joints, steps in [(1, 3, 5), (200, 13, 9), (160, 20, 6)]:  # serial, odd sizes, threaded
        goals = rng.uniform(-1.0, 1.0, (steps, batch, joints))
        load = PendulumLoad(rng.uniform(0.2, 1.5, (batch, joints)), 0.15)
        plain = rollout(params, 0.1, 0.0, goals, 0.005, load)
        monkeypatch.setattr(stepper, "STREAM_MIN_BYTES", 0)
        for mis in (0, 3, 7):  # doubles past a 64-byte boundary where the first output element sits
            for shift in ((0,) * 5, (0, 1, 0, 1, 0)):  # five equally aligned arrays (streamed), then not (plain)
                out = StepResult(*(_at(goals.shape, mis + d) for d in shift))
                got = rollout(params, 0.1, 0.0, goals, 0.005, load, out=out)
                for name in StepResult._fields:
                    np.testing.assert_array_equal(getattr(got, name), getattr(plain, name), err_msg=f"{name} {mis}")
        monkeypatch.undo()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_the_kernel_refuses_a_non_finite_goal_anywhere(bad):
    """The fused path checks the goals as the kernel reads them (no pass of its own): one non-finite goal, in any
    chunk, at any step, on the calling thread or the pool, raises naming ``goals`` and its index; so does one
    under a firmware goal-velocity limit (STS: the slewed target is computed from the goals first)."""
    rng = np.random.default_rng(4)
    params = preset("mx106", "m6")
    for shape in [(12, 3), (12, 160, 20)]:  # 3 elements (calling thread), 3200 (the pool, 7 chunks)
        for _ in range(3):
            goals = rng.uniform(-1.0, 1.0, shape)
            where = tuple(int(rng.integers(0, n)) for n in shape)
            goals[where] = bad
            with pytest.raises(ValueError, match=rf"goals contains non-finite values \(first at index \({where[0]}, "):
                rollout(params, 0.0, 0.0, goals, 0.005, PendulumLoad(1.0, 0.15))
    goals = np.zeros((12, 2))
    goals[5, 1] = bad
    with pytest.raises(ValueError, match="goals"):
        rollout(preset("sts3215", "m1"), 0.0, 0.0, goals, 0.005, PendulumLoad(1.0, 0.15))
    finite = rollout(params, 0.0, 0.0, np.full((12, 3), 1e308), 0.005, PendulumLoad(1.0, 0.15))  # huge, finite
    assert finite.theta.shape == (12, 3)


@pytest.mark.parametrize("x86", [True, False])
def test_the_store_fence_compiles_for_either_target(x86):
    """The streaming stores' fence: ``sfence`` on x86, LLVM's generic fence elsewhere (``llvm.x86.sse.sfence`` does
    not compile for AArch64); the generic one compiles and runs here too."""
    import platform

    import numba
    from numba import types
    from numba.extending import intrinsic

    from servo_ff.models import streaming

    if x86 and not streaming.X86:
        pytest.skip(f"sfence needs x86 (this machine: {platform.machine()})")

    @intrinsic
    def fence(typingctx):
        def codegen(context, builder, signature, args):
            streaming.emit_store_fence(builder, x86)
            return context.get_dummy_value()

        return types.void(), codegen

    @numba.njit
    def fenced(x):
        fence()
        return x + 1.0

    assert fenced(1.0) == 2.0
    ir = fenced.inspect_llvm(fenced.signatures[0])
    assert ("llvm.x86.sse.sfence" in ir) == x86 and ("fence seq_cst" in ir) != x86
