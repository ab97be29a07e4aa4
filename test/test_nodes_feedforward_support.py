"""servo_feedforward_node on the floating-base OP3 over DDS, before and after its first ``support_coefficient``:
standing still in a mirror-symmetric stance with no support message, its goals are mirror-symmetric (double support,
c_left = 0.5, said once on /rosout and shown as assumed in its diagnostics); a support coefficient of 1 (all weight
on the left foot) makes them asymmetric and shows as received. The test client plays the servo node (it publishes
``/joint_states``), so the goals are the node's alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, rosout_matched, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("pinocchio")
from builtin_interfaces.msg import Duration  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64, Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from servo_ff.nodes.feedforward_node import FeedForwardNode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: A crouched stance, left side; the right side is its mirror image (every OP3 leg and arm joint: q_r = -q_l, the
#: URDF's mirrored axes), so gravity loads the two legs alike in double support.
LEFT = {"hip_pitch": -0.5, "knee": 1.0, "ank_pitch": -0.5, "hip_roll": 0.05, "ank_roll": -0.05, "sho_roll": 0.3}
PAIRS = ["hip_yaw", "hip_roll", "hip_pitch", "knee", "ank_pitch", "ank_roll", "sho_pitch", "sho_roll", "el"]


def test_feedforward_assumes_double_support_until_the_first_support_coefficient():
    with RosHarness(salt=71) as h:
        ff = h.add(
            FeedForwardNode(
                "servo_feedforward",
                **h.node_kwargs(),
                parameter_overrides=[
                    Parameter("urdf_path", value=str(ROOT / "urdf" / "op3.urdf")),
                    Parameter("mode", value="floating"),
                    Parameter("alpha_file", value=str(ROOT / "config" / "alpha_op3.yaml")),
                    Parameter("kp", value=[280.0]),
                    Parameter("warn_throttle", value=30.0),
                    Parameter("support_timeout", value=0.5),
                ],
            )
        )
        joints = list(ff.joints)
        col = {j: i for i, j in enumerate(joints)}
        stance = np.zeros(len(joints))
        for name, q in LEFT.items():
            stance[col[f"l_{name}"]], stance[col[f"r_{name}"]] = q, -q
        client = h.make_node("support_probe")
        goals: list[np.ndarray] = []
        diags: list[dict[str, str]] = []
        rosout: list = []
        client.create_subscription(Float64MultiArray, "servo/commands", lambda m: goals.append(np.array(m.data)), 50)
        client.create_subscription(
            DiagnosticArray,
            "/diagnostics",
            lambda m: diags.extend({kv.key: kv.value for kv in s.values} for s in m.status if "feed-forward" in s.name),
            50,
        )
        client.create_subscription(Log, "/rosout", rosout.append, 100)
        states = client.create_publisher(JointState, "joint_states", 10)
        desired = client.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
        support = client.create_publisher(Float64, "support_coefficient", 10)
        wait_for(
            lambda: (
                states.get_subscription_count()
                and desired.get_subscription_count()
                and support.get_subscription_count()
            ),
            30.0,
            "discovery of the feed-forward node",
        )
        rosout_matched(ff, rosout)

        def publish_state() -> None:
            states.publish(JointState(name=joints, position=stance.tolist()))

        wait_for(lambda: publish_state() or ff._js_sub is None, 30.0, "the feed-forward node taking the pose")
        hold = JointTrajectoryPoint(
            positions=stance.tolist(), velocities=[0.0] * len(joints), accelerations=[0.0] * len(joints)
        )
        hold.time_from_start = Duration()
        desired.publish(JointTrajectory(joint_names=joints, points=[hold]))
        wait_for(lambda: len(goals) >= 3 or publish_state(), 30.0, "three goals on the assumed support")

        def offsets(goal: np.ndarray) -> dict[str, tuple[float, float]]:
            d = goal - stance
            return {p: (float(d[col[f"l_{p}"]]), float(d[col[f"r_{p}"]])) for p in PAIRS}

        for goal in goals[:3]:  # the first goals: mirror-symmetric, and the feed-forward is there (not q_des)
            off = offsets(goal)
            asym = {p: round(left + right, 5) for p, (left, right) in off.items()}
            assert max(abs(a) for a in asym.values()) < 2e-3, (asym, off)  # measured ≤ 3e-4 rad (model ≈ mirror)
            assert abs(off["hip_roll"][0]) > 0.03, off  # measured -0.060 rad at 280 k_P
        # /rosout is another topic than the goals: its line can be taken after them
        said = wait_for(
            lambda: [m.msg for m in rosout if "support_coefficient" in m.msg and "assumed" in m.msg],
            30.0,
            "the line saying the support assumed",
        )
        assert said == ["no support_coefficient yet: double support (0.5) assumed"], said
        wait_for(lambda: diags and "support" in diags[-1], 30.0, "the feed-forward node's diagnostics")
        assert diags[-1]["support"] == "assumed 0.5 (no support_coefficient yet)", diags[-1]

        wait_for(lambda: support.publish(Float64(data=1.0)) or ff.support.received, 30.0, "the support coefficient")
        n = len(goals)
        wait_for(lambda: len(goals) >= n + 2 or publish_state(), 30.0, "goals on the left-foot support")
        left, right = offsets(goals[-1])["hip_roll"]  # all the weight on the left leg: its hip roll alone holds it
        assert abs(left + right) > 0.05 and abs(right) < 0.01, (left, right)  # measured -0.123, -0.003 rad
        # a diagnostics message published before the coefficient came can be taken after the goals: the newest one
        # is waited for (one still saying 'assumed' forever fails)
        wait_for(lambda: diags and diags[-1].get("support") == "received 1.000", 30.0, "diagnostics: support received")
        said = [m.msg for m in rosout if "support_coefficient" in m.msg and "assumed" in m.msg]
        assert len(said) == 1, said  # said once

        # the coefficient stops: held (goals unchanged) and reported stale past support_timeout (0.5 s), once
        stale = wait_for(
            lambda: [d for d in diags if d.get("support_age", "").startswith("stale")], 30.0, "support reported stale"
        )
        assert float(stale[-1]["support_age"].split()[1]) > 0.5 and stale[-1]["support"] == "received 1.000"
        n = len(goals)
        wait_for(lambda: len(goals) >= n + 2 or publish_state(), 30.0, "goals on the held support")
        assert abs(sum(offsets(goals[-1])["hip_roll"]) - (left + right)) < 1e-6  # c_left = 1 still in use
        wait_for(
            lambda: support.publish(Float64(data=1.0)) or diags[-1]["support_age"].endswith(" s old"),
            30.0,
            "support fresh again",
        )
        lines = wait_for(  # /rosout is its own topic: the line can come after the diagnostics
            lambda: (
                (ls := [m.msg for m in rosout if m.msg.startswith("support_coefficient: ")])
                and any(ln.endswith("support coefficients again") for ln in ls)
                and ls
            ),
            30.0,
            "the line saying support coefficients come again",
        )
        again = next(k for k, ln in enumerate(lines) if ln.endswith("support coefficients again"))
        # once before it came again (after it, the stopped publisher goes stale again: not counted)
        assert sum("the last support coefficient is" in ln for ln in lines[:again]) == 1, lines
