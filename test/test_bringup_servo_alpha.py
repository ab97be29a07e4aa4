"""`servo-ff up sim_humanoid --arg servo_config:=…`: the feed-forward node's α̂ follows the laws of the servos the
sim runs (bringup/servo_alpha.py, as sim_op3 in test_op3_firmware.py), said in one log line naming both files;
a servo YAML it cannot follow refused in one line (exit 2); over DDS the feed-forward node reads that α̂."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from servo_ff.bringup import config_dir, plan
from servo_ff.bringup.servo_alpha import servo_alpha_table
from servo_ff.dynamics.alpha import alpha_table_from_actuator, load_alpha
from servo_ff.models.presets import preset

ROOT = Path(__file__).resolve().parents[1]
SERVOS = ROOT / "config" / "servos_humanoid.yaml"  # MX-106 legs, MX-64 arms and neck
JOINTS = list(yaml.safe_load((ROOT / "config" / "sim_humanoid.yaml").read_text())["/**"]["ros__parameters"]["joints"])


@pytest.fixture(autouse=True)
def _alpha_line(caplog):
    """The α̂ line is INFO (WARNING when it replaces a params_file's α̂): captured at both levels."""
    caplog.set_level(logging.INFO, logger="servo_ff.bringup.servo_alpha")


def _row(servo: str, joint: str = "j") -> np.ndarray:
    return alpha_table_from_actuator(preset(servo, "m4"), [joint]).alpha[0]


def test_sim_humanoid_alpha_follows_servo_config(caplog):
    """With servo_config each joint's own servo: the arms' MX-64 α̂, not the MX-106's the YAML gives every joint, at
    the laws' 15 V, in one log line naming both files."""
    assert not np.allclose(_row("mx64"), _row("mx106"))  # the arms' α̂ differ from the YAML's
    caplog.clear()
    ff = plan("sim_humanoid", servo_config=str(SERVOS))[1].overrides
    (line,) = [r.getMessage() for r in caplog.records if "servo_config" in r.getMessage()]
    assert str(SERVOS) in line and ff["alpha_file"] in line and "sim_humanoid.yaml's servo mx106/m4" in line
    assert ff["u_nominal"] == 15.0
    table = load_alpha(ff["alpha_file"], JOINTS)
    for j, servo in (("l_knee", "mx106"), ("r_hip_pitch", "mx106"), ("l_elbow", "mx64"), ("neck_yaw", "mx64")):
        assert np.allclose(table.alpha[JOINTS.index(j)], _row(servo), rtol=1e-12), j


def test_sim_humanoid_default_alpha_follows_the_yaml_servo_config(caplog):
    """Without servo_config:= the sim runs sim_humanoid.yaml's own servo_config (servos_humanoid.yaml): the
    feed-forward node gets that file's α̂ per joint as given servo_config:= (the same file), the arms' and neck's
    MX-64 α̂ and the legs' MX-106 α̂, not `servo: mx106` for every joint; the log line names the file."""
    caplog.clear()
    ff = plan("sim_humanoid")[1].overrides
    (line,) = [r.getMessage() for r in caplog.records if "servo_config" in r.getMessage()]
    assert str(SERVOS) in line and "sim_humanoid.yaml's servo_sim" in line and ff["alpha_file"] in line
    assert ff["u_nominal"] == 15.0
    assert ff["alpha_file"] == plan("sim_humanoid", servo_config=str(SERVOS))[1].overrides["alpha_file"]
    table = load_alpha(ff["alpha_file"], JOINTS)
    assert np.allclose(table.alpha, servo_alpha_table(SERVOS, JOINTS, 15.0).alpha, rtol=1e-12)
    for j, servo in (("l_knee", "mx106"), ("r_ankle_roll", "mx106"), ("l_elbow", "mx64"), ("neck_yaw", "mx64")):
        assert np.allclose(table.alpha[JOINTS.index(j)], _row(servo), rtol=1e-12), j


def test_sim_humanoid_alpha_follows_a_params_file_servo_config(tmp_path):
    """A ``params_file:=`` that gives the sim node its servo_config (read after the bring-up YAML): the feed-forward
    node's α̂ follows that file, the one the sim runs."""
    servos, pf = tmp_path / "all_mx64.yaml", tmp_path / "mine.yaml"
    servos.write_text(yaml.safe_dump({"servos": {"*": "mx64/m4"}}))
    pf.write_text(yaml.safe_dump({"servo_sim": {"ros__parameters": {"servo_config": str(servos)}}}))
    table = load_alpha(plan("sim_humanoid", params_file=str(pf))[1].overrides["alpha_file"], JOINTS)
    for j in ("l_knee", "l_hip_pitch", "l_elbow"):
        assert np.allclose(table.alpha[JOINTS.index(j)], _row("mx64"), rtol=1e-12), j


def test_sim_humanoid_urdf_without_its_servo_config_refused_in_one_line():
    """``urdf:=`` alone: the sim would run the YAML's servos_humanoid.yaml on that robot; the α̂ from it is refused
    at plan time in one line naming the file and the joint (before, only the sim node refused that file, at start)."""
    from servo_ff.dynamics.servo_map import ServoMapError

    with pytest.raises(ServoMapError, match=r"^sim_humanoid: servo_config servos_humanoid.yaml: 'neck_yaw' names no"):
        plan("sim_humanoid", urdf=str(ROOT / "urdf" / "op3.urdf"))


def test_log_line_names_the_params_file_alpha_it_replaces(tmp_path, caplog):
    """A ``params_file:=`` that gives the feed-forward node an alpha_file loses it to servo_config's α̂ (arguments
    override it): the log line names that file's alpha_file, not the bring-up YAML's preset."""
    pf = tmp_path / "mine.yaml"
    pf.write_text(yaml.safe_dump({"servo_feedforward": {"ros__parameters": {"alpha_file": "/x/fitted.yaml"}}}))
    caplog.clear()
    ff = plan("sim_humanoid", servo_config=str(SERVOS), params_file=str(pf))[1].overrides
    (line,) = [r.getMessage() for r in caplog.records if "servo_config" in r.getMessage()]
    assert line.endswith("instead of params_file mine.yaml's alpha_file /x/fitted.yaml"), line
    assert ff["alpha_file"] != "/x/fitted.yaml" and ff["u_nominal"] == 15.0


@pytest.mark.parametrize(
    "servos, line",
    [
        (
            {"neck_yaw": {"preset": "mx64/m4", "firmware": "mx28"}, "*": "mx106/m4"},
            "firmware: the servos' laws run on different supplies (12, 15 V); the feed-forward node has one "
            "u_nominal: give every servo a law of one supply",
        ),
        (
            {"head_pitch": None, "*": "mx106/m4"},
            "servos: joint(s) head_pitch have no servo (null): the feed-forward node needs every joint's law for its α̂",
        ),
    ],
)
def test_sim_humanoid_servo_config_refused_in_one_line(tmp_path, servos, line):
    """`servo-ff up sim_humanoid` exits 2 with one line naming the bring-up, the file and the key, before any node."""
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"servos": servos}, sort_keys=False))
    cmd = [sys.executable, "-m", "servo_ff", "up", "sim_humanoid", "--dry-run", "--arg", f"servo_config:={path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"servo-ff up: error: sim_humanoid: servo_config mine.yaml: {line}"
    assert proc.stdout == ""


def test_sim_humanoid_feedforward_node_reads_the_servo_config_alpha():
    """Over DDS: the feed-forward node started with the bring-up's parameter files (as `servo-ff up`) holds the
    arms' MX-64 α̂ and the legs' MX-106 α̂ (the YAML alone: MX-106 everywhere)."""
    pytest.importorskip("rclpy")
    from rclpy.parameter import Parameter

    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.ros.harness import RosHarness

    with RosHarness(salt=49) as ros:
        node = plan("sim_humanoid", servo_config=str(SERVOS), namespace=ros.ns)[1]
        ff = ros.add(
            FeedForwardNode(
                "servo_feedforward",
                **ros.node_kwargs(),
                cli_args=node.ros_args(config_dir()),
                parameter_overrides=[Parameter("urdf_path", value=str(ROOT / "urdf" / "humanoid20.urdf"))],
            )
        )
        for j, servo in (("l_knee", "mx106"), ("l_elbow", "mx64"), ("r_shoulder_pitch", "mx64")):
            assert np.allclose(ff.get_parameter(f"alpha.{j}").value, _row(servo), rtol=1e-12), j
        assert ff.get_parameter("u_nominal").value == 15.0


def test_up_says_when_a_params_file_alpha_wins_over_servo_config(tmp_path, caplog):
    """``servo-ff up --params-file`` is applied after the plan's overrides: one that sets the feed-forward node's α̂
    wins over servo_config's (given or the YAML's), and `up` says so in one more line naming the file and the keys; a
    params file that leaves the α̂ alone, or a bring-up without a feed-forward node, says nothing."""
    from servo_ff.cli.up import commands

    mine, other = tmp_path / "mine.yaml", tmp_path / "other.yaml"
    mine.write_text(
        yaml.safe_dump({"servo_feedforward": {"ros__parameters": {"alpha_file": "/x/a.yaml", "u_nominal": 14.8}}})
    )
    other.write_text(yaml.safe_dump({"servo_feedforward": {"ros__parameters": {"rate_hz": 100.0}}}))
    caplog.clear()
    commands("sim_humanoid", {"servo_config": str(SERVOS)}, params_files=[mine, other])
    lines = [r.getMessage() for r in caplog.records if "--params-file" in r.getMessage()]
    assert lines == [
        f"sim_humanoid: --params-file {mine} sets the feed-forward node's alpha_file, u_nominal: applied "
        "last, it wins over servo_config's α̂"
    ]
    caplog.clear()
    commands("sim_humanoid", {}, params_files=[mine, other])  # the YAML's servo_config: the same line
    assert [r.getMessage() for r in caplog.records if "--params-file" in r.getMessage()] == lines
    sim = tmp_path / "sim.yaml"
    sim.write_text(yaml.safe_dump({"servo_sim": {"ros__parameters": {"servo_config": str(SERVOS)}}}))
    caplog.clear()
    commands("sim_humanoid", {}, params_files=[sim])  # applied after the plan: the α̂ cannot follow it
    assert [r.getMessage() for r in caplog.records if "--params-file" in r.getMessage()] == [
        f"sim_humanoid: --params-file {sim} sets servo_sim's servo_config: the feed-forward α̂ follows the plan's, "
        "not it (give it as --arg servo_config:=)"
    ]
    caplog.clear()
    commands("sim_arm", {}, params_files=[mine, sim])  # no feed-forward node: no α̂ line, its section said unused
    said = [r.getMessage() for r in caplog.records if "--params-file" in r.getMessage()]
    assert said == [
        f"sim_arm: --params-file {mine}: section servo_feedforward names no node of this bring-up (servo_sim, "
        "servo_state_publisher, servo_walker): ignored"
    ], said


def test_sim_nimbro_op_bringup_plan(caplog):
    """`servo-ff up sim_nimbro_op` (bringup.plan, as its launch file): sim_op3's four nodes on its own YAML; the
    feed-forward α̂ of servos_nimbro_op.yaml per joint (MX-106 M4 legs, MX-64 M4 arms and neck, 15 V), said in one
    line; low gain 0.35 × 53.125 on sim and feed-forward; gain, feedforward and urdf arguments as sim_op3's."""
    cfg = yaml.safe_load((ROOT / "config" / "sim_nimbro_op.yaml").read_text())
    joints = list(cfg["/**"]["ros__parameters"]["joints"])
    caplog.clear()
    nodes = plan("sim_nimbro_op")
    sim, ff, walk, described = nodes
    assert [n.executable for n in nodes] == [
        "servo_sim_node",
        "servo_feedforward_node",
        "servo_walk_node",
        "servo_state_publisher_node",
    ]
    assert {n.config for n in nodes} == {"sim_nimbro_op.yaml"}
    (line,) = [r.getMessage() for r in caplog.records if "servo_config" in r.getMessage()]
    assert "servos_nimbro_op.yaml" in line and ff.overrides["alpha_file"] in line
    assert ff.overrides["u_nominal"] == 15.0
    table = load_alpha(ff.overrides["alpha_file"], joints)  # every joint of the robot (20)
    assert len(joints) == 20
    for j in joints:
        servo = "mx64" if any(k in j for k in ("shoulder", "elbow", "neck", "head")) else "mx106"
        assert np.allclose(table.alpha[joints.index(j)], _row(servo), rtol=1e-12), j
    assert cfg["servo_sim"]["ros__parameters"]["kp"] == cfg["servo_feedforward"]["ros__parameters"]["kp"]
    assert cfg["servo_sim"]["ros__parameters"]["kp"] == [pytest.approx(0.35 * 850 / 128 * 8, rel=1e-12)]
    sim, ff, walk, _ = plan("sim_nimbro_op", gain="53.125", feedforward="false")
    assert sim.overrides["kp"] == ff.overrides["kp"] == [53.125] and ff.overrides["enabled"] is False
    with pytest.raises(ValueError, match="sim_nimbro_op: feedforward must be"):
        plan("sim_nimbro_op", feedforward="maybe")
    urdf = ROOT / "urdf" / "nimbro_op.urdf"
    walk, described = plan("sim_nimbro_op", urdf=str(urdf))[2:]
    assert walk.overrides["urdf_path"] == described.overrides["urdf_path"] == str(urdf)  # one robot for all
    assert "gait" not in plan("sim_nimbro_op")[2].overrides  # placo by default (the node's default)
    walk = plan("sim_nimbro_op", gait="cpg")[2]  # the NimbRo-OP's own CPG, in the node (no placo process)
    assert walk.executable == "servo_walk_node" and walk.overrides == {"gait": "nimbro_cpg", "engine_process": False}
    with pytest.raises(ValueError, match="sim_nimbro_op: gait must be 'placo' or 'cpg', got 'walk'"):
        plan("sim_nimbro_op", gait="walk")


def _alpha_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "feed-forward α̂ from servo_config" in r.getMessage()]


@pytest.mark.parametrize("bringup", ["sim_op3", "sim_humanoid", "sim_nimbro_op"])
def test_alpha_line_is_info_for_the_yaml_alpha_and_a_warning_for_the_users(bringup, tmp_path, caplog):
    """The α̂ line of a default plan (it replaces the bring-up YAML's own α̂, as designed) and of a servo_config:=
    is INFO; it is a WARNING when it replaces an α̂ the user gave (a params_file's alpha_file/servo/model)."""
    caplog.clear()
    plan(bringup)
    plan(bringup, servo_config=str(ROOT / "config" / f"servos_{bringup.removeprefix('sim_')}.yaml"))
    assert [r.levelno for r in _alpha_records(caplog)] == [logging.INFO] * 2
    for key, value in (("alpha_file", "/x/fitted.yaml"), ("servo", "mx28"), ("model", "m1")):
        pf = tmp_path / f"{key}.yaml"
        pf.write_text(yaml.safe_dump({"servo_feedforward": {"ros__parameters": {key: value}}}))
        caplog.clear()
        plan(bringup, params_file=str(pf))
        ((record,),) = [_alpha_records(caplog)]
        assert record.levelno == logging.WARNING and f"instead of params_file {pf.name}'s" in record.getMessage()


@pytest.mark.parametrize("bringup", ["sim_op3", "sim_humanoid", "sim_nimbro_op"])
def test_feedforward_false_plan_reads_no_servo_file(bringup, tmp_path, caplog):
    """feedforward:=false (the feed-forward node passes the desired positions): no α̂ is computed or logged, so an
    unreadable servo_config (given, or a params_file's) does not stop the plan (the sim node reads it; with the
    feed-forward on, the plan refuses it in one line), and `up` does not say a params file's α̂ wins over it."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("servos: [unreadable\n")
    pf = tmp_path / "sim.yaml"
    pf.write_text(yaml.safe_dump({"servo_sim": {"ros__parameters": {"servo_config": str(bad)}}}))
    from servo_ff.dynamics.servo_map import ServoMapError

    with pytest.raises(ServoMapError, match="bad.yaml: malformed YAML"):
        plan(bringup, servo_config=str(bad))
    with pytest.raises(ServoMapError, match="bad.yaml: malformed YAML"):
        plan(bringup, params_file=str(pf))
    if bringup != "sim_humanoid":  # a feedforward:= that is neither true nor false is said before any file is read
        with pytest.raises(ValueError, match=f"{bringup}: feedforward must be 'true' or 'false', got 'False'"):
            plan(bringup, feedforward="False", servo_config=str(bad))
    caplog.clear()
    for kwargs in ({"servo_config": str(bad)}, {"params_file": str(pf)}):
        ff = plan(bringup, feedforward="false", **kwargs)[1].overrides
        assert ff["enabled"] is False and not {"alpha_file", "u_nominal"} & ff.keys()
    assert not _alpha_records(caplog)
    from servo_ff.cli.up import commands

    mine = tmp_path / "mine.yaml"  # nor does `up` say that a params file's α̂ wins over servo_config's
    mine.write_text(yaml.safe_dump({"servo_feedforward": {"ros__parameters": {"alpha_file": "/x/a.yaml"}}}))
    commands(bringup, {"feedforward": "false"}, params_files=[mine])
    assert not [r for r in caplog.records if "--params-file" in r.getMessage()]
    commands(bringup, {}, params_files=[mine])
    assert [r for r in caplog.records if "--params-file" in r.getMessage()]
