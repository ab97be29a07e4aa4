"""What servo_fit_node's online RLS leaves on the feed-forward node and in ``output`` (the α file a restarted
feed-forward node reads): the refined α̂ while it is trusted, the batch fit's α̂ again once trust is lost
(/tmp/audit_19d/p05_fit_rls.py).

A real FitNode and FeedForwardNode over DDS; the live samples (a simulated mx64/m4 pendulum at kp 8, 12 V, nominal
or warmed: R × 1.3) are put in the fit node's live buffers on a time base of their own, and the RLS update is
called as its timer does (the timer itself, rls_period 60 s, is cancelled: no concurrent update)."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, rosout_matched, wait_for

pytest.importorskip("rclpy")
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from servo_ff.models.presets import preset  # noqa: E402
from servo_ff.models.stepper import PendulumLoad, rollout  # noqa: E402
from servo_ff.nodes.feedforward_node import FeedForwardNode  # noqa: E402
from servo_ff.nodes.fit_node import FitNode  # noqa: E402
from servo_ff.trajectories import sub_oscillations  # noqa: E402

URDF = str(Path(__file__).resolve().parents[1] / "urdf" / "pendulums2.urdf")
KP, DT, VIN = 8.0, 0.01, 12.0
NOMINAL = preset("mx64", "m4")
WARM = NOMINAL.with_(R=NOMINAL.R * 1.3)


def _motion(act, duration: float = 6.0) -> tuple[np.ndarray, np.ndarray]:
    """Goals and positions of ``act`` driving 0.5 kg at 0.15 m under sub-oscillations (0.8 rad about 0.4 rad)."""
    ref = sub_oscillations(duration=duration, dt=DT, amplitude=0.8, offset=0.4)
    p = act.with_(firmware=act.firmware.with_(kp=KP))
    r = rollout(p, np.array([ref.q[0]]), np.array([0.0]), ref.q[:, None], DT, load=PendulumLoad(0.5, 0.15, 0.0))
    return ref.q, r.theta[:, 0]


class Live:
    """Puts one stretch of samples at a time in the fit node's live buffers, times continuing."""

    def __init__(self, fit: FitNode):
        self.fit, self.t = fit, None

    def put(self, act, duration: float = 6.0) -> None:
        """A stretch of ``act``'s motion; the first ends 0.5 s before the node's clock (in the fit's window)."""
        q, th = _motion(act, duration)  # first: a rollout may compile for seconds
        if self.t is None:
            self.t = self.fit.get_clock().now().nanoseconds * 1e-9 - 0.5 - (len(q) - 1) * DT
        t = self.t + np.arange(len(q)) * DT
        self.t = float(t[-1]) + 1.0
        self.fit.buffer, self.fit.goals = deque(zip(t, th)), deque(zip(t, q))
        self.fit.volts = deque((float(x), VIN) for x in t[::10])

    def rls(self) -> dict:
        """One RLS update as the timer makes it; waits for the push it starts; the RLS state."""
        before = self.fit.worker
        self.fit._on_rls()
        if self.fit.worker is not before:
            self.fit.worker.join(30.0)
        return self.fit.refiner.rls.state()


def _written(path: Path) -> tuple[list[float], dict | None]:
    """(α̂ of pendulum_1 as the feed-forward node reads it from ``path``, the file's ``fit.rls`` record)."""
    import yaml

    from servo_ff.dynamics.alpha import load_alpha

    return list(load_alpha(path, ["pendulum_1"]).alpha[0]), yaml.safe_load(path.read_text())["fit"].get("rls")


def test_trust_lost_sets_the_batch_alpha_back_on_the_feedforward_node(tmp_path):
    """Warm data makes the RLS trusted (its α̂ set on the feed-forward node and written to ``output`` with an ``rls``
    record; before: the file kept the batch fit), nominal data again loses the trust: the feed-forward node and the
    file get the batch α̂ back, said in one line (before: the node kept the untrusted refined α̂)."""
    with RosHarness(salt=61) as h:
        params = {"joint": "pendulum_1", "urdf_path": URDF, "run_on_start": False, "source": "topics",
                  "joints": ["pendulum_1"], "kp": KP, "window": 7.0, "dt": DT, "rls": True, "rls_period": 60.0,
                  "feedforward_node": "servo_feedforward", "output": str(tmp_path / "alpha.yaml"),
                  "supply_timeout": 3600.0}  # fmt: skip
        fit = h.add(
            FitNode(
                "servo_fit", **h.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
            )
        )
        ff_params = {"urdf_path": URDF, "joints": ["pendulum_1", "pendulum_2"], "kp": [KP]}
        ff = h.add(
            FeedForwardNode(
                "servo_feedforward",
                **h.node_kwargs(),
                parameter_overrides=[Parameter(k, value=v) for k, v in ff_params.items()],
            )
        )
        client = h.make_node("trust_client")
        rosout: list = []
        client.create_subscription(Log, "/rosout", rosout.append, 200)
        wait_for(lambda: client.count_publishers("/rosout") >= 3, 20.0, "the nodes' /rosout")
        rosout_matched(client, rosout)

        def ff_alpha() -> list[float]:
            return list(ff.table.values["alpha.pendulum_1"])

        live = Live(fit)
        live.put(NOMINAL)
        ok, text = fit.run()
        assert ok, text
        for t in list(fit.timers):
            if t.timer_period_ns == 60_000_000_000:
                t.cancel()
        batch = list(fit.result["alpha"])
        assert ff_alpha() == pytest.approx(batch)
        for _ in range(2):
            live.put(WARM)
            state = live.rls()
        assert state["trusted"], state
        assert ff_alpha() == pytest.approx(state["alpha"]) and ff_alpha() != pytest.approx(batch)
        refined = _written(tmp_path / "alpha.yaml")  # the file holds what the feed-forward node runs
        assert refined[0] == pytest.approx(state["alpha"] + [0.0]), refined
        assert refined[1]["refined"] is True and refined[1]["reference"] == pytest.approx(batch), refined
        for _ in range(12):  # the refined α̂ comes back towards the batch one: lost once its error ratio is above 1.0
            live.put(NOMINAL)  # (hysteresis; 7 windows: 0.79, 0.91, 0.96, 0.98, 0.994, 0.9987, 1.0002)
            state = live.rls()
            if not state["trusted"]:
                break
        assert not state["trusted"], state
        assert ff_alpha() == pytest.approx(batch)
        assert _written(tmp_path / "alpha.yaml") == (pytest.approx(batch + [0.0]), None)
        lines = wait_for(lambda: [m.msg for m in rosout if "no longer trusted" in m.msg], 20.0, "the trust-lost line")
        assert len(lines) == 1 and "set back" in lines[0], lines
