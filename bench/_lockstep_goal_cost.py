"""Per-goal Python cost of the lockstep loop's goal hop (20 joints), old against new, both in the same run,
alternating rounds: the feed-forward node's publication (Float64MultiArray on ``servo/commands`` vs the stamped
JointState template on ``servo/joint_command``) and the lockstep sim node's handling without its tick (rclpy's
Float64MultiArray take + goal vs the JointState CDR read in place + the stamp's check + goal). rclpy's take is
timed as ``deserialize_message`` (what a typed subscription does; a raw one takes the bytes).

Run alone: ``python bench/_lockstep_goal_cost.py [--rounds 5]``; last line ``RESULT pub_delta_us=… sim_delta_us=…``
(new − old, medians over rounds; negative: the new hop is cheaper).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

JOINTS = [f"joint_{i:02d}" for i in range(20)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--number", type=int, default=3000)
    a = ap.parse_args()
    import numpy as np
    from rclpy.parameter import Parameter
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from servo_ff.nodes.servo_commands import ServoCommands
    from servo_ff.nodes.sim_node import SimNode
    from servo_ff.ros.cdr_template import CdrTemplate
    from servo_ff.ros.common import float64_field
    from servo_ff.ros.harness import RosHarness, wait_for

    values = {"joints": JOINTS, "rate_hz": 125.0, "publish_clock": True, "lockstep": True, "lockstep_timeout": 10.0}
    values |= {"position_min": [-3.0], "position_max": [3.0], "load.type": "none"}
    with RosHarness(salt=97) as h:
        sim = h.add(
            SimNode(
                "servo_sim", **h.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]
            )
        )
        ff = h.make_node("ff_side")
        pub_old = ff.create_publisher(Float64MultiArray, "servo/commands", 10)
        pub_new = ff.create_publisher(JointState, "servo/joint_command", 10)
        wait_for(
            lambda: sim.active and pub_old.get_subscription_count() and pub_new.get_subscription_count(),
            30.0,
            "the sim",
        )
        goal, cols = np.linspace(-1.0, 1.0, 26), np.arange(20)
        msg = Float64MultiArray()
        tmpl = CdrTemplate(JointState(name=JOINTS, position=[0.0] * 20), ["position"])
        with h._busy:  # the executor held: the sim takes none of these (no tick, no interference)
            sec, nanosec = divmod(sim.sim_time_ns, 1_000_000_000)
            fa = serialize_message(Float64MultiArray(data=[0.1] * 20))
            stamped = JointState(name=JOINTS, position=[0.1] * 20)
            stamped.header.stamp.sec, stamped.header.stamp.nanosec = sec, nanosec
            js = serialize_message(stamped)
            source = sim.names["joint_command"]

            def pub_o():
                msg.data = float64_field(goal[cols])
                pub_old.publish(msg)

            def pub_n():
                tmpl.set_stamp(sec, nanosec)
                tmpl.block(0)[:] = goal[cols]
                tmpl.publish(pub_new)

            def sim_o():
                ServoCommands._on_commands(sim, deserialize_message(fa, Float64MultiArray))

            def sim_n():
                read = sim._jc_cdr.read(js)
                if sim._answer(read[0]) >= 0 and not sim._inactive(source, sim.joints):
                    sim._accept(sim.gate.from_array(read[1], source))

            deltas: dict[str, list[float]] = {"pub": [], "sim": []}
            for r in range(a.rounds):
                for kind, old, new in (("pub", pub_o, pub_n), ("sim", sim_o, sim_n)):
                    t_old = timeit.timeit(old, number=a.number) / a.number * 1e6
                    t_new = timeit.timeit(new, number=a.number) / a.number * 1e6
                    deltas[kind].append(t_new - t_old)
                    print(f"round {r} {kind}: old {t_old:.2f} us, new {t_new:.2f} us", flush=True)
    pub, sim_d = statistics.median(deltas["pub"]), statistics.median(deltas["sim"])
    print(f"RESULT pub_delta_us={pub:.2f} sim_delta_us={sim_d:.2f}", flush=True)


if __name__ == "__main__":
    main()
