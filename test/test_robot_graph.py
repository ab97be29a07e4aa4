"""The walking mission's graph of another robot (bringup/robot_graph.py): the NimbRo-OP's from its bring-up YAML
(config/sim_nimbro_op.yaml) — its nodes get the YAML's parameters under the mission's own — and the CPG's step
windows over DDS are the ROS-free walk's (simulate_walk's step_energy rows)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("mujoco")
pytest.importorskip("pinocchio")
rclpy = pytest.importorskip("rclpy")

from servo_ff.dynamics.nimbro_walk import NIMBRO_KNEES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CFG = yaml.safe_load((ROOT / "config" / "sim_nimbro_op.yaml").read_text())


def _section(node: str) -> dict:
    return CFG[node]["ros__parameters"]


def test_nimbro_graph_params_are_the_bringup_yaml():
    from servo_ff.bringup.robot_graph import bringup_graph

    g = bringup_graph("sim_nimbro_op", NIMBRO_KNEES)
    sim, ff, walk = _section("servo_sim"), _section("servo_feedforward"), _section("servo_walk")
    for k in ("servo_config", "rate_hz", "counts_per_rev", "latency", "floating_base", "support_topic"):
        assert g.sim[k] == sim[k], k
    assert g.sim["joints"] == CFG["/**"]["ros__parameters"]["joints"]
    for k in ("mode", "left_foot", "right_foot", "stamped_goals"):
        assert g.ff[k] == ff[k], k
    assert g.ff["urdf_path"] == _section("servo_state_publisher")["urdf_path"]
    alpha = yaml.safe_load(Path(g.ff["alpha_file"]).read_text())  # the servo file's α̂ (servo_alpha), not the preset
    assert "servo_yaml_alpha" in str(alpha) and g.ff["u_nominal"] == 15.0
    for k in ("posture_joints", "posture_positions", "ik_range_joints", "ik_range_lower", "single_support"):
        assert g.walk[k] == walk[k], k
    assert g.walk.get("gait", "placo") == "placo" and g.walk["engine_process"] is True
    cpg = bringup_graph("sim_nimbro_op", NIMBRO_KNEES, gait="cpg").walk
    assert (cpg["gait"], cpg["engine_process"]) == ("nimbro_cpg", False)
    with pytest.raises(ValueError, match="gait must be"):
        bringup_graph("sim_nimbro_op", NIMBRO_KNEES, gait="walk")


def test_nimbro_cpg_graph_nodes_take_the_yaml_under_the_mission(compiled_mujoco_kernels):
    from servo_ff.bringup.op3_mission import LOCKSTEP_TIMEOUT, op3_nodes
    from servo_ff.bringup.robot_graph import bringup_graph
    from servo_ff.ros.harness import RosHarness

    g = bringup_graph("sim_nimbro_op", NIMBRO_KNEES, gait="cpg")
    with RosHarness(salt=57) as ros:
        sim, ff, walk = op3_nodes(ros, "ff", 18.59375, sim_params={"autostart": False}, robot=g)
        assert list(sim.joints) == CFG["/**"]["ros__parameters"]["joints"]
        assert sim.get_parameter("lockstep_timeout").value == LOCKSTEP_TIMEOUT  # the mission's, not the YAML's 0.5
        assert sim.get_parameter("servo_config").value == _section("servo_sim")["servo_config"]
        assert ff.get_parameter("enabled").value is True
        assert ff.get_parameter("alpha_file").value == g.ff["alpha_file"]
        assert walk.gait == "nimbro_cpg" and walk.worker is None
        assert walk.engine.joints and set(walk.joints) == set(sim.joints)
        posture = dict(zip(_section("servo_walk")["posture_joints"], _section("servo_walk")["posture_positions"]))
        assert list(walk.get_parameter("posture_positions").value) == list(posture.values())


def test_cpg_step_windows_are_the_rosfree_plans():
    """The DDS run's step ends (op3_mission: from the engine's state machine) are simulate_walk's for the same
    command (the ROS-free plan's step starts + one step period)."""
    from servo_ff.bringup.robot_graph import step_times
    from servo_ff.dynamics.nimbro_cpg import CpgConfig, gcv_for_speed
    from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine
    from servo_ff.dynamics.nimbro_cpg_plan import cpg_plan
    from servo_ff.dynamics.nimbro_walk import NIMBRO_URDF

    vx, n = 0.05, 6
    ends, t_obst = step_times(CpgEngine(NIMBRO_URDF), vx, n, obstacle_step=4)
    walk = cpg_plan(NIMBRO_URDF, gcv_for_speed(vx, CpgConfig()), n)
    starts = np.array([s for s, _ in walk.plan.steps])
    np.testing.assert_allclose(ends, starts[:n] + walk[2], atol=1e-9)
    assert t_obst == pytest.approx(starts[4] + 0.5 * walk[2])


def test_op3_cpg_graph_and_its_step_windows():
    """op3_graph("cpg") is the OP3's graph with the walk node on the scaled CPG (in the node), placo's unchanged; its
    DDS step ends are op3_cpg_plan's (the ROS-free bench's), and the box's step 4 swings the right foot."""
    from servo_ff.bringup.robot_graph import op3_graph, step_times
    from servo_ff.dynamics.nimbro_cpg_engine import op3_cpg_engine
    from servo_ff.dynamics.op3_cpg import op3_cpg_plan
    from servo_ff.dynamics.walk_sim import OP3_URDF

    placo, cpg = op3_graph(), op3_graph("cpg")
    assert "gait" not in placo.walk and placo.walk["engine_process"] is True
    assert (cpg.walk["gait"], cpg.walk["engine_process"]) == ("op3_cpg", False)
    assert (cpg.sim, cpg.ff, cpg.name) == (placo.sim, placo.ff, "op3")
    with pytest.raises(ValueError, match="gait must be 'placo' or 'cpg'"):
        op3_graph("robotis")
    engine, vx, n = op3_cpg_engine(OP3_URDF), 0.0177, 16
    ends, t_obst = step_times(engine, vx, n, obstacle_step=4)
    walk = op3_cpg_plan(OP3_URDF, engine.gcv(vx), n)
    starts = np.array([s for s, _ in walk.plan.steps])
    np.testing.assert_allclose(ends, starts[:n] + walk[2], atol=1e-9)
    assert t_obst == pytest.approx(starts[4] + 0.5 * walk[2]) and walk.plan.steps[4][1] == "right"


def test_bench_mission_gaits_defaults():
    """bench/op3_mission.py: placo's defaults are the mission's as before (0.1, 0.05 m/s, box at step 5 = run_op3's
    default, section 6 on); the CPG's speeds are the ROS-free CPG bench's gcv 0.624 and 0.312 (0.0354, 0.0177 m/s)."""
    import importlib.util
    import inspect

    from servo_ff.bringup.op3_mission import run_op3
    from servo_ff.dynamics.nimbro_cpg_engine import op3_cpg_engine
    from servo_ff.dynamics.walk_sim import OP3_URDF

    spec = importlib.util.spec_from_file_location("bench_op3_mission_gaits", ROOT / "bench" / "op3_mission.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    placo, cpg = bench.gait_setup("placo"), bench.gait_setup("cpg")
    img = ROOT / "docs" / "img"
    assert placo.defaults == {
        "vx": 0.1,
        "obstacle_vx": 0.05,
        "energy40_steps": 40,
        "plot": str(img / "op3_obstacle_pitch.png"),
        "board_plot": str(img / "op3_board_pitch.png"),
    }
    assert placo.obstacle_step == inspect.signature(run_op3).parameters["obstacle_step"].default == 5
    engine = op3_cpg_engine(OP3_URDF)
    assert engine.gcv(cpg.defaults["vx"]) == pytest.approx(0.05 / 0.0801, rel=2e-3)  # the NimbRo-OP's 0.05 m/s
    assert engine.gcv(cpg.defaults["obstacle_vx"]) == pytest.approx(0.025 / 0.0801, rel=2e-3)
    assert round(cpg.defaults["vx"], 4) == 0.0354 and round(cpg.defaults["obstacle_vx"], 4) == 0.0177
    assert cpg.obstacle_step == 4 and cpg.defaults["energy40_steps"] == 0


def test_nimbro_graph_places_the_board_and_withdraws_the_command(compiled_mujoco_kernels):
    """bench/nimbro_dds_obstacle.py's rule through the graph: the sim node's MuJoCo model has the 15 mm board (0.4 ×
    1 m) with its near edge 5 mm ahead of the soles at the walk start, and ``withdraw`` publishes the walk node's halt
    and ends the run when the ROS-free plan ends (robot_graph.cpg_stop): the walk node's engine halts at the plan's
    halt tick (gait_states, one tick at most) and its planned samples reach the plan's halt pose one blend later
    (nimbro_cpg_plan.halt_blend) and stay there."""
    from servo_ff.bringup.op3_mission import run_op3
    from servo_ff.bringup.robot_graph import bringup_graph, cpg_stop
    from servo_ff.dynamics.mujoco_model import BOARD_GAP, sole_front
    from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine
    from servo_ff.dynamics.nimbro_cpg_plan import gait_states, halt_blend_duration
    from servo_ff.dynamics.nimbro_walk import NIMBRO_URDF

    seen: dict = {}

    def tap(t, quat, sim, walk):
        m, d = sim.servos.model, sim.servos.data
        if not seen:
            g = int(m.geom("obstacle").id)
            seen.update(
                t=t, pos=m.geom_pos[g].copy(), size=m.geom_size[g].copy(), front=sole_front(m, d, sim.servos.sim.feet)
            )
            seen["y"] = float(np.mean([d.xpos[f][1] for f in sim.servos.sim.feet]))
        seen.update(last=t, halt=walk.engine.halt_requested)
        if t >= t_end and "times" not in seen:  # the run's end: the walk node's planned window (≥ 2 s back)
            seen.update(times=np.array(walk.times), qs=np.array(walk.qs), t_walk=walk.t_walk, perm=walk.perm)
            seen["standing"] = walk.standing

    e, n = CpgEngine(NIMBRO_URDF), 2  # two steps: a halt a step early or late lands on another phase centre
    t_end = cpg_stop(e, 0.05, n, 0.0)[1]

    g = bringup_graph("sim_nimbro_op", NIMBRO_KNEES, gait="cpg")
    r = run_op3("high", n_steps=n, vx=0.05, obstacle=0.015, obstacle_shape="board", robot=g, salt=61,
                log=lambda _: None, withdraw=True, tap=tap)  # fmt: skip
    assert 0.0 <= r.t_obstacle == seen["t"] < 0.008  # at the walk start (the first period from there)
    assert seen["size"] == pytest.approx([0.5, 0.2, 0.0075], abs=1e-12)
    # (placed from the feet of the last physics step: 1e-7 m from the state after it)
    assert seen["pos"] == pytest.approx([seen["front"] + BOARD_GAP + 0.5, seen["y"], 0.0075], abs=1e-6)
    assert seen["last"] >= t_end > 2 * r.step_period and not r.fell  # not at the end of its steps
    # the plan's halt: its first tick not walking; its pose there (cpg_plan's row) is the halt pose, the CPG's q_stand
    s = gait_states(e.gcv(0.05), n, e.params)
    h = int(np.argmin(s.walking))
    t_halt, q_halt = float(s.t[h]), e.pose_of(e.joints, s.phase[h], s.gcv[h], s.timer[h], e.params)
    assert np.abs(q_halt - e.q_stand).max() <= 1e-12
    dt, times, qs = e.params.dt, seen["times"], seen["qs"]
    assert seen["halt"] and seen["standing"]  # the engine got the halt request and stands halted
    t1 = np.ceil((seen["t_walk"] - 1e-9) / dt) * dt  # [s, ROS clock] the engine's first tick (its t = 0)
    stand = np.abs(qs - q_halt[seen["perm"]]).max(axis=1) <= 1e-12
    moving = np.flatnonzero(~stand & (times >= t1 - 1e-9))
    assert moving.size and times[0] < t1 + t_halt - dt  # the window still holds the walk before the halt
    k = moving[-1] + 1  # the first planned sample of the halt pose, every later one the same
    assert times[-1] - times[k] >= 0.5 - dt  # standing through the plan's 0.5 s hold
    # the plan's halt tick, then the blend into the halt pose (halt_blend: its last row one tick before the pose),
    # one tick at most
    blend = (round(halt_blend_duration(e.params) / dt) - 1) * dt
    assert times[k] - t1 == pytest.approx(t_halt + blend, abs=dt + 1e-9)


@pytest.mark.parametrize("vx", [0.025, 0.080])
def test_cpg_stop_latches_zero_where_the_rosfree_plan_withdraws_it(vx):
    """The CPG engine ticked with cmd_vel 0 from cpg_stop's time (+ the lead, the engine's own clock) follows the
    ROS-free plan's gcv and phase tick by tick up to its halt (a step early or late: gcv differs by > 0.01)."""
    from servo_ff.bringup.robot_graph import cpg_stop
    from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine
    from servo_ff.dynamics.nimbro_cpg_plan import gait_states
    from servo_ff.dynamics.nimbro_walk import NIMBRO_URDF

    e, lead = CpgEngine(NIMBRO_URDF), 0.582
    t_zero, t_end = cpg_stop(e, vx, 16, lead)
    s = gait_states(e.gcv(vx), 16, e.params)
    halt = int(np.argmin(s.walking))
    assert t_end == pytest.approx(s.t[-1]) and s.t[halt] < t_end
    e.set_cmd(vx, 0.0, 0.0)
    e.start()
    for k in range(1, halt):
        if e.t >= t_zero + lead:
            e.set_cmd(0.0, 0.0, 0.0)
        e.tick()
        assert (e.state.gcv, e.state.phase) == pytest.approx((s.gcv[k], s.phase[k]), abs=1e-12), s.t[k]
    assert e.cmd == (0.0, 0.0, 0.0) and s.gcv[halt - 1] < 0.1


def test_withdraw_on_placo_is_refused_before_any_node_starts():
    """run_op3(withdraw=True) on a placo graph: one ValueError line naming the graph's gait, raised before a harness
    or node exists (the OP3's CPG graph is a CPG, cpg_stop takes its engine)."""
    from servo_ff.bringup.op3_mission import run_op3
    from servo_ff.bringup.robot_graph import cpg_stop, op3_graph
    from servo_ff.dynamics.nimbro_cpg_engine import op3_cpg_engine
    from servo_ff.dynamics.walk_sim import OP3_URDF

    with pytest.raises(ValueError, match=r"^withdraw: the walk node's CPG only \(gait nimbro_cpg or op3_cpg\), not "
                       r"op3's gait placo$"):  # fmt: skip
        run_op3("ff", withdraw=True, salt=1, timeout=0.0)
    t_zero, t_end = cpg_stop(op3_cpg_engine(OP3_URDF), 0.0354, 4, 0.0)
    assert 0.0 < t_zero < t_end and op3_graph("cpg").walk["gait"] == "op3_cpg"
