"""identify → sim: the file ``servo-ff identify --out`` writes runs in ``servo_sim_node`` (``actuator_file``, its
model from the file, no ``model`` parameter) exactly as ``servo-ff simulate --params`` runs it. The node steps in
lockstep on its own clock (one period per goal received, the next goal sent on each ``joint_states``): the
comparison is deterministic, on simulated time."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from nodes_harness import RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from servo_ff.cli import main  # noqa: E402
from servo_ff.cli.simulate import simulate_bench  # noqa: E402
from servo_ff.identification.synthetic import bench_grid, simulate_logs  # noqa: E402
from servo_ff.io.bam_logs import write_bam_json  # noqa: E402
from servo_ff.models.params import load_params  # noqa: E402
from servo_ff.models.presets import preset  # noqa: E402
from servo_ff.nodes.sim_node import SimNode  # noqa: E402
from servo_ff.trajectories import trajectory  # noqa: E402

DT = 0.005  # s: servo-ff simulate's step = the node's control period = its physics step
MASS, LENGTH = 0.5, 0.15


@pytest.fixture(scope="module")
def identified(tmp_path_factory):
    """``servo-ff identify --models m6`` on two short synthetic logs (a small budget: the fit need not be good,
    the file is what matters)."""
    tmp = tmp_path_factory.mktemp("identify")
    logs = tmp / "logs"
    logs.mkdir()
    grid = bench_grid(masses=(0.5, 1.5), lengths=(0.15,), kps=(8, 32))[:2]
    for i, lg in enumerate(simulate_logs(preset("mx64", "m6"), grid, duration=1.5, noise=0.001, seed=1)):
        write_bam_json(lg, logs / f"log{i}.json")
    out = tmp / "fit"
    argv = ["identify", str(logs), "--out", str(out), "--models", "m6", "--max-evals", "30", "--validation", "0"]
    assert main([*argv, "--quiet"]) == 0
    return out


@pytest.mark.parametrize("name", ["m6.yaml", "m6.json"])
def test_identified_file_runs_in_the_sim_node_as_in_servo_ff_simulate(identified, name):
    path = identified / name
    params = load_params(path)
    assert params.model == "m6"
    traj = trajectory("accelerated_oscillations", dt=DT)
    expected = simulate_bench(params, traj, MASS, LENGTH, 0.0, DT)  # what `servo-ff simulate --params` computes
    n = len(traj.q)
    with RosHarness(salt=21) as h:
        sim = sim_node(
            h,
            actuator_file=str(path),  # no servo / model: both from the file
            joints=["pendulum"],
            rate_hz=1.0 / DT,
            physics_dt=DT,
            initial_position=[float(traj.q[0])],
            publish_clock=True,
            lockstep=True,
            lockstep_timeout=10.0,  # steps on goals only (10 s of wall time: never)
            **{"load.mass": [MASS], "load.length": [LENGTH]},
        )
        assert (sim.sim.params.model, sim.substeps) == ("m6", 1)
        assert list(sim.get_parameter("kp").value) == [params.firmware.kp]  # the file's gain, the node's `kp`
        assert not sim.has_parameter("actuator.firmware.kp")  # one P gain: `kp`
        client = h.make_node("identified_client")
        states: list[JointState] = []
        done = threading.Event()
        pub = client.create_publisher(Float64MultiArray, "servo/commands", 10)

        def on_state(msg: JointState) -> None:  # a controller answering each state: the next goal
            states.append(msg)
            k = len(states)
            if k < n - 1:
                pub.publish(Float64MultiArray(data=[float(traj.q[k])]))
            else:
                done.set()

        client.create_subscription(JointState, "joint_states", on_state, 100)
        wait_for(lambda: pub.get_subscription_count() and sim.active, 20.0, "servo_sim active with its subscriber")
        pub.publish(Float64MultiArray(data=[float(traj.q[0])]))
        assert done.wait(120.0), f"{len(states)} of {n - 1} states"
        stamps = np.array([s.header.stamp.sec * 1_000_000_000 + s.header.stamp.nanosec for s in states])
        np.testing.assert_array_equal(stamps, np.arange(1, n) * round(DT * 1e9))  # one period per goal, none more
        pos = np.array([s.position[0] for s in states])
        vel = np.array([s.velocity[0] for s in states])
    err = np.abs(pos - expected.theta[1:]).max()
    assert err <= 1e-9, err
    assert np.abs(vel - expected.dtheta[1:]).max() <= 1e-6
    assert np.ptp(pos) > 1.0  # it moved: the oscillations were followed


def test_a_model_other_than_the_files_is_refused_at_start(identified):
    """``model`` against the identified file, or an identified YAML given as a parameter file without
    ``actuator_file`` (its ``actuator.model: m6`` against the m4 preset): one line naming both, no node."""
    path = identified / "m6.yaml"
    with RosHarness(salt=22) as h:
        for overrides, words in (
            ([Parameter("actuator_file", value=str(path)), Parameter("model", value="m4")], "contradicts actuator_"),
            ([Parameter("actuator.model", value="m6")], "name the identified file with actuator_file"),
        ):
            with pytest.raises(ValueError, match=words):
                SimNode("servo_sim", **h.node_kwargs(), parameter_overrides=overrides)
