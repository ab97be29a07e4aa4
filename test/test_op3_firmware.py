"""Another firmware row for every servo: the servo YAML's ``firmware:`` key (dynamics/servo_map.py), the OP3
mission's servo YAML and α̂ under that row (bringup/op3_firmware.py), an unknown row refused in one line naming the
valid rows (servo YAML, run_op3, bench/op3_mission.py --firmware), and over DDS the sim node running that law with the
feed-forward node on that law's α̂."""

from __future__ import annotations

import dataclasses
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from servo_ff.dynamics.alpha import alpha_hat_from_actuator, load_alpha
from servo_ff.dynamics.alpha_current import alpha_hat_current_law
from servo_ff.dynamics.servo_map import ServoMapError, load_servo_map
from servo_ff.models.errors import ParameterError
from servo_ff.models.firmware import FIRMWARE_LAWS
from servo_ff.models.presets import preset

ROOT = Path(__file__).resolve().parents[1]
JOINTS = ["l_knee", "r_knee", "l_el"]
PWM = FIRMWARE_LAWS["xm430_position"]


def test_servo_yaml_firmware_replaces_the_law_top_level_and_per_entry():
    doc = {
        "firmware": "xm430_position",
        "servos": {"l_el": {"preset": "xm430/m1", "firmware": "mx28"}, "*": "xm430/m1"},
    }
    smap = load_servo_map(doc, JOINTS)
    assert smap.joints["l_knee"].params.firmware == PWM and smap.joints["r_knee"].params.firmware == PWM
    assert smap.joints["l_el"].params.firmware == FIRMWARE_LAWS["mx28"]
    doc["servos"]["l_el"] = {"preset": "xm430/m1", "firmware": None}  # null on an entry: its own law
    assert load_servo_map(doc, JOINTS).joints["l_el"].params.firmware == FIRMWARE_LAWS["xm430"]
    own = load_servo_map({"servos": {"*": "xm430/m1"}}, JOINTS)  # no key: the preset's own law (current-based)
    assert own.joints["l_knee"].params.firmware == FIRMWARE_LAWS["xm430"] != PWM
    assert smap.joints["l_knee"].params.kt == own.joints["l_knee"].params.kt  # only the law changes


@pytest.mark.parametrize(
    "doc, where",
    [
        ({"firmware": "xm431", "servos": {"*": "xm430/m1"}}, "servo map: firmware: "),
        ({"servos": {"*": {"preset": "xm430/m1", "firmware": "xm431"}}}, r"servo map: servos\['\*'\]: "),
    ],
)
def test_servo_yaml_unknown_firmware_row_is_one_line_naming_the_rows(doc, where):
    with pytest.raises(
        ServoMapError, match=rf"^{where}unknown firmware row 'xm431'; valid rows: .*xm430_position"
    ) as e:
        load_servo_map(doc, JOINTS)
    assert "\n" not in str(e.value)


def test_op3_servo_yaml_and_alpha_follow_the_row(tmp_path):
    from servo_ff.bringup.op3_firmware import op3_firmware_files, op3_servo_yaml
    from servo_ff.bringup.servo_alpha import servo_alpha_table
    from servo_ff.dynamics.robot import load_robot

    joints = list(load_robot(ROOT / "urdf" / "op3.urdf").joint_names)
    # the current-based row gives back the shipped α̂ (config/alpha_op3.yaml): one derivation for both rows
    current = servo_alpha_table(op3_servo_yaml("xm430", tmp_path), joints, 12.0)
    assert np.allclose(current.alpha, load_alpha(ROOT / "config" / "alpha_op3.yaml", joints).alpha, rtol=1e-12)
    servo_yaml, alpha_file = op3_firmware_files("xm430_position", tmp_path, joints, 12.0)
    doc = yaml.safe_load(servo_yaml.read_text())
    assert doc["firmware"] == "xm430_position" and Path(doc["robot"]).is_file()
    assert doc["servos"] == yaml.safe_load((ROOT / "config" / "servos_op3.yaml").read_text())["servos"]
    smap = load_servo_map(servo_yaml, joints)
    assert all(s.params.firmware == PWM for s in smap.joints.values())
    pwm = load_alpha(alpha_file, joints)
    params = dataclasses.replace(preset("xm430", "m1"), firmware=PWM)
    assert np.allclose(pwm.alpha, alpha_hat_from_actuator(params, with_inertia=True), rtol=1e-12)  # Eq. 19
    # Eq. 19's α̂0 = R/(kt·error_gain) per N·m; the current law's U_nom/(kt·error_gain) with its own error gain
    assert pwm.alpha[0][0] == pytest.approx(params.R / (params.kt * PWM.error_gain))
    assert not np.allclose(pwm.alpha[0], alpha_hat_current_law(preset("xm430", "m1"), 12.0))


def test_unknown_row_refused_before_anything_runs(tmp_path):
    from servo_ff.bringup.op3_firmware import op3_servo_yaml
    from servo_ff.bringup.op3_mission import run_op3

    with pytest.raises(ParameterError, match="^unknown firmware row 'pwm'; valid rows: .*xm430, xm430_position"):
        op3_servo_yaml("pwm", tmp_path)
    assert not list(tmp_path.iterdir())
    with pytest.raises(ParameterError, match="^unknown firmware row 'pwm'"):
        run_op3("ff", n_steps=1, firmware="pwm", log=lambda s: pytest.fail(s))


@pytest.mark.parametrize(
    "script, rows",
    [
        ("bench/op3_mission.py", "xm431"),
        ("tools/op3_energy_terms.py", "xm431"),
        ("tools/op3_energy_check.py", "xm431"),
        ("tools/op3_energy40.py", "xm431"),
        ("tools/op3_walk_feet.py", "xm431"),
        ("tools/op3_stiff_p.py", "xm430,xm431"),  # a list of rows: the unknown one named, before any walk
    ],
)
def test_firmware_option_unknown_row_exit_2_one_line(script, rows):
    """--firmware of the bench and of the OP3 tools: an unknown row is one line naming the valid rows (exit 2), not
    simulate_walk's or run_op3's traceback."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / script), "--firmware", rows], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"{Path(script).name}: --firmware: unknown firmware row 'xm431'; valid rows: {', '.join(FIRMWARE_LAWS)}"
    )
    assert proc.stdout == ""


@pytest.mark.parametrize(
    "script, args, line",
    [
        ("tools/op3_energy_terms.py", ["--vx", "nan"], "--vx: must be a finite speed [m/s], got nan"),
        ("tools/op3_energy_check.py", ["--vx", "inf"], "--vx: must be a finite speed [m/s], got inf"),
        ("tools/op3_obstacle_trace.py", ["--vx=-inf"], "--vx: must be a finite speed [m/s], got -inf"),
        ("tools/op3_energy40.py", ["--steps", "1"], "--steps: at least 2 whole steps, got 1"),
    ],
)
def test_op3_tools_refuse_a_bad_speed_or_step_count_in_one_line(script, args, line):
    """The OP3 tools' --vx (a non-finite speed: the walk plan's traceback before) and op3_energy40's --steps (below
    op3_energy.MIN_STEPS: a comparison over nothing): one line naming the option (exit 2), before any walk."""
    proc = subprocess.run([sys.executable, str(ROOT / script), *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"{Path(script).name}: {line}"
    assert proc.stdout == ""


def test_mission_nodes_run_the_row_and_its_alpha(tmp_path, compiled_mujoco_kernels):
    """Over DDS: the mission's sim node built from the row's servo YAML runs that law on every servo, and the
    feed-forward node's α̂ parameters are that law's."""
    pytest.importorskip("placo")
    pytest.importorskip("rclpy")
    from servo_ff.bringup.op3_firmware import op3_firmware_params
    from servo_ff.bringup.op3_mission import op3_nodes
    from servo_ff.models import slots
    from servo_ff.ros.harness import RosHarness

    sim_files, ff_files = op3_firmware_params("xm430_position", tmp_path)
    with RosHarness(salt=47) as ros:
        sim, ff, _ = op3_nodes(ros, "ff", 280.0, sim_params={"autostart": False, **sim_files}, ff_params=ff_files)
        p = sim.servos.p
        assert np.all(p[:, slots.LAW] == 0) and np.allclose(p[:, slots.EGAIN], PWM.error_gain)  # voltage law
        assert np.allclose(p[:, slots.VIN], 12.0) and sim.hw_supply_voltage() == 12.0
        expected = alpha_hat_from_actuator(dataclasses.replace(preset("xm430", "m1"), firmware=PWM), True)
        for j in ("l_knee", "r_hip_pitch", "head_pan"):
            assert np.allclose(ff.get_parameter(f"alpha.{j}").value, expected, rtol=1e-12), j


def _servo_yaml(tmp_path: Path, name: str, **doc) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump({"robot": str(ROOT / "urdf" / "op3.urdf"), "servos": {"*": "xm430/m1"}, **doc}, sort_keys=False)
    )
    return path


def test_sim_op3_bringup_alpha_follows_servo_config(tmp_path, caplog):
    """`servo-ff up sim_op3 --arg servo_config:=…` (bringup.plan, as the launch file): the feed-forward node gets the
    α̂ of the servo YAML's law at its supply, said in one log line naming both files; without servo_config, that of
    the YAML's own servo_config (servos_op3.yaml: config/alpha_op3.yaml's figures). Over DDS, the feed-forward node
    started with the bring-up's parameter files reads that α̂."""
    pytest.importorskip("rclpy")
    from rclpy.parameter import Parameter

    from servo_ff.bringup import config_dir, plan
    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.ros.harness import RosHarness

    joints = list(yaml.safe_load((ROOT / "config" / "sim_op3.yaml").read_text())["/**"]["ros__parameters"]["joints"])
    default = plan("sim_op3")[1].overrides  # the YAML's servos_op3.yaml: the shipped servos' current law
    assert default["u_nominal"] == 12.0 and "servos_op3" in Path(default["alpha_file"]).name
    assert np.allclose(
        load_alpha(default["alpha_file"], joints).alpha, load_alpha(ROOT / "config" / "alpha_op3.yaml", joints).alpha
    )
    shipped = _servo_yaml(tmp_path, "shipped")  # no firmware key: the shipped α̂ back, from the same derivation
    ff = plan("sim_op3", servo_config=str(shipped))[1].overrides
    assert ff["u_nominal"] == 12.0
    assert np.allclose(
        load_alpha(ff["alpha_file"], joints).alpha, load_alpha(ROOT / "config" / "alpha_op3.yaml", joints).alpha
    )
    mx106 = plan("sim_op3", servo_config=str(_servo_yaml(tmp_path, "mx106", firmware="mx106")))[1].overrides
    assert mx106["u_nominal"] == FIRMWARE_LAWS["mx106"].vin == 15.0  # the law's supply, as the sim node's
    pwm_yaml = _servo_yaml(tmp_path, "pwm", firmware="xm430_position")
    caplog.set_level(logging.INFO, logger="servo_ff.bringup.servo_alpha")  # the α̂ line: INFO (servo_config:=)
    with RosHarness(salt=48) as ros:
        caplog.clear()
        node = plan("sim_op3", servo_config=str(pwm_yaml), namespace=ros.ns)[1]
        (line,) = [r.getMessage() for r in caplog.records if "servo_config" in r.getMessage()]
        assert str(pwm_yaml) in line and node.overrides["alpha_file"] in line and "voltage" in line
        ff = ros.add(
            FeedForwardNode(
                "servo_feedforward",
                **ros.node_kwargs(),
                cli_args=node.ros_args(config_dir()),
                parameter_overrides=[Parameter("urdf_path", value=str(ROOT / "urdf" / "op3.urdf"))],
            )
        )
        expected = alpha_hat_from_actuator(dataclasses.replace(preset("xm430", "m1"), firmware=PWM), True)
        assert expected[1] == pytest.approx(432.88, abs=0.01)  # Eq. 19's velocity term; the current law's 118.9
        for j in ("l_knee", "r_hip_pitch", "head_pan"):
            assert np.allclose(ff.get_parameter(f"alpha.{j}").value, expected, rtol=1e-12), j
        assert ff.get_parameter("u_nominal").value == 12.0


@pytest.mark.parametrize(
    "doc, line",
    [
        ({"firmware": "xm431"}, "firmware: unknown firmware row 'xm431'; valid rows: " + ", ".join(FIRMWARE_LAWS)),
        (
            {"servos": {"head_*": {"preset": "xm430/m1", "firmware": "mx106"}, "*": "xm430/m1"}},
            "firmware: the servos' laws run on different supplies (12, 15 V); the feed-forward node has one "
            "u_nominal: give every servo a law of one supply",
        ),
        (
            {"servos": {"head_pan": None, "*": "xm430/m1"}},
            "servos: joint(s) head_pan have no servo (null): the feed-forward node needs every joint's law for its α̂",
        ),
    ],
)
def test_sim_op3_servo_config_refused_in_one_line(tmp_path, doc, line):
    """A servo YAML the feed-forward α̂ cannot follow: `servo-ff up sim_op3` exits 2 with one line naming the file and
    the key, before any node starts."""
    path = _servo_yaml(tmp_path, "mine", **doc)
    cmd = [sys.executable, "-m", "servo_ff", "up", "sim_op3", "--dry-run", "--arg", f"servo_config:={path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"servo-ff up: error: sim_op3: servo_config mine.yaml: {line}"
    assert proc.stdout == ""
