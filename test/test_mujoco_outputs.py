"""The MuJoCo sim node's contact topics over real DDS: the contacts are read only while ``foot_forces`` or
``support_coefficient`` has a subscriber; each topic is published to its own subscriber alone, and the first message
after a pause is the contact force of the period it is sent in (never an older reading)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("mujoco")
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Float64, Float64MultiArray  # noqa: E402

from servo_ff.dynamics.mujoco_sensors import foot_forces, support_coefficient  # noqa: E402
from servo_ff.nodes.sim_node import MujocoSimNode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HUMANOID = [
    Parameter("urdf_path", value=str(ROOT / "urdf" / "humanoid20.urdf")),
    Parameter("servo_config", value=str(ROOT / "config" / "servos_humanoid.yaml")),
    Parameter("floating_base", value=True),
    Parameter("publish_clock", value=True),
    Parameter("real_time_factor", value=0.0),
    Parameter("rate_hz", value=250.0),
]


def test_contacts_are_read_only_while_listened_and_sent_fresh(compiled_mujoco_kernels):
    h = RosHarness(salt=74)
    try:
        sim = h.add(MujocoSimNode("servo_sim", **h.node_kwargs(), parameter_overrides=HUMANOID))
        s = sim.servos
        reads, tapped = [0], {}  # node's contact reads; the forces at each period (read in-process, after it)
        read_forces = s.foot_forces

        def counted() -> np.ndarray:
            reads[0] += 1
            return read_forces()

        s.foot_forces = counted

        def tap() -> None:
            f = foot_forces(s.model, s.data, s._feet)
            tapped[tuple(f.tolist())] = sim.ticks  # the latest period with these forces

        sim.period_taps.append(tap)
        probe = h.make_node("contacts_probe")
        support: list[float] = []
        sub_c = probe.create_subscription(Float64, "support_coefficient", lambda m: support.append(m.data), 100)
        wait_for(lambda: len(support) > 20, 60.0, "support_coefficient with no foot_forces subscriber")
        assert sim.backend.outputs.pub_feet.get_subscription_count() == 0
        assert all(0.2 < c < 0.8 for c in support[5:]), support[:30]  # standing on both feet
        valid = {support_coefficient(np.array(f)) for f in tapped}
        assert set(support[-10:]) <= valid  # each is c of a period's forces, not another number

        probe.destroy_subscription(sub_c)
        marks: list[tuple[int, int]] = []

        def no_reads() -> bool:  # no contact read over the last 100 periods (nobody listens any more)
            marks.append((sim.ticks, reads[0]))
            old = [r for t, r in marks if t <= marks[-1][0] - 100]
            return bool(old) and old[-1] == reads[0]

        wait_for(no_reads, 60.0, "the contacts no longer read without subscribers")
        stopped_at = sim.ticks

        feet: list[tuple[float, ...]] = []
        probe.create_subscription(Float64MultiArray, "foot_forces", lambda m: feet.append(tuple(m.data)), 100)
        wait_for(lambda: len(feet) > 20, 60.0, "foot_forces after a pause")
        weight = s.model.body_subtreemass[s.sim.root_body] * 9.81
        assert abs(sum(feet[-1]) - weight) < 0.15 * weight
        # every message, the first after the pause included, is the forces of a period after the pause
        assert all(f in tapped and tapped[f] > stopped_at for f in feet), [(f in tapped) for f in feet[:5]]
        assert len(set(feet)) > 1  # the messages follow the contacts
    finally:
        h.shutdown()
