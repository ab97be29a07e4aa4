"""`servo-ff up sim --params-file F` where F gives servo_sim only an ``actuator_file`` (an identified parameter file):
the feed-forward node gets that ``actuator_file`` too (bringup/node_launch.py ``NodeLaunch.actuator_files``, the one
rule for ``up`` and the launch files' ``params_file:=``), so its α̂ is the one of the actuator the sim runs
(``alpha_hat_from_actuator`` of the file's parameters), not its own preset's (MX-64 M4)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import yaml

from servo_ff.bringup import config_dir, plan
from servo_ff.cli.up import commands
from servo_ff.models.presets import preset
from servo_ff.models.schwarz_behnke import alpha_hat_from_actuator

ROOT = Path(__file__).resolve().parents[1]


def _files(cmd: list[str]) -> list[Path]:
    """The parameter files of a node's command line, in order."""
    return [Path(cmd[i + 1]) for i, a in enumerate(cmd) if a == "--params-file"]


def _ff_actuator_file(files: list[Path]) -> str | None:
    """servo_feedforward's ``actuator_file`` as rcl reads ``files`` (the last one setting it wins)."""
    found = None
    for f in files:
        for key, section in (yaml.safe_load(f.read_text()) or {}).items():
            if str(key).rsplit("/", 1)[-1] in ("servo_feedforward", "**"):
                found = (section.get("ros__parameters") or {}).get("actuator_file", found)
    return found


@pytest.fixture
def identified(tmp_path) -> Path:
    path = tmp_path / "m1.yaml"  # as servo-ff identify --out writes it: an MX-106 M1 (the preset's coefficients)
    preset("mx106", "m1").save_yaml(path)
    return path


def _params(tmp_path: Path, sections: dict) -> Path:
    path = tmp_path / "extra.yaml"
    path.write_text(yaml.safe_dump({k: {"ros__parameters": v} for k, v in sections.items()}))
    return path


def test_up_sim_gives_the_feedforward_node_the_sims_actuator_file(tmp_path, identified, caplog):
    """The bring-up plan (`up --dry-run`'s commands; `params_file:=` through the launch files' parameter files): the
    feed-forward node's last actuator_file is the sim's, said in one line; a params-file giving the feed-forward
    its own α̂ source (alpha_file, servo) keeps it, and so does sim_humanoid (servo_config's α̂); with a namespace
    too. Before: no actuator_file for the
    feed-forward node, and one line said its α̂ stayed MX-64 M4's."""
    extra = _params(tmp_path, {"servo_sim": {"actuator_file": str(identified)}})
    for ns in ("", "/robot1"):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="servo_ff.cli.up"):
            cmds = dict(commands("sim", {"namespace": ns} if ns else {}, params_files=[extra]))
        assert _ff_actuator_file(_files(cmds["servo_feedforward"])) == str(identified), ns
        assert _ff_actuator_file(_files(cmds["servo_sim"])) is None  # (the sim reads its own section)
        said = [r.getMessage() for r in caplog.records if "actuator_file" in r.getMessage()]
        assert len(said) == 1 and "the feed-forward's α̂ is its α̂" in said[0], said
    ff = next(n for n in plan("sim", params_file=str(extra)) if n.name == "servo_feedforward")
    assert _ff_actuator_file(ff.parameter_files(config_dir())) == str(identified)
    for own in ({"alpha_file": str(tmp_path / "alpha.yaml")}, {"servo": "mx106"}):
        mine = _params(tmp_path, {"servo_sim": {"actuator_file": str(identified)}, "servo_feedforward": own})
        assert _ff_actuator_file(_files(dict(commands("sim", {}, params_files=[mine]))["servo_feedforward"])) is None
    # a bring-up whose feed-forward α̂ follows servo_config (its YAML's servo mx106 would contradict the file)
    humanoid = dict(commands("sim_humanoid", {"feedforward": "false"}, params_files=[extra]))
    assert _ff_actuator_file(_files(humanoid["servo_feedforward"])) is None
    plain = _params(tmp_path, {"servo_sim": {"rate_hz": 400.0}})
    assert _ff_actuator_file(_files(dict(commands("sim", {}, params_files=[plain]))["servo_feedforward"])) is None


def test_the_feedforward_node_started_as_up_starts_it_has_the_files_alpha(tmp_path, identified):
    """Over DDS: the feed-forward node with `up sim`'s parameter files holds α̂ = alpha_hat_from_actuator of the
    identified file's parameters (MX-106 M1) on both joints (before: MX-64 M4's, α̂0 12.01 instead of 8.56); alpha_file
    and actuator_file together are refused in one line."""
    pytest.importorskip("rclpy")
    from rclpy.parameter import Parameter

    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.ros.harness import RosHarness

    extra = _params(tmp_path, {"servo_sim": {"actuator_file": str(identified)}})
    want = alpha_hat_from_actuator(preset("mx106", "m1"), with_inertia=True)
    urdf = Parameter("urdf_path", value=str(ROOT / "urdf" / "pendulums2.urdf"))
    with RosHarness(salt=116) as ros:
        cmd = dict(commands("sim", {"namespace": ros.ns}, params_files=[extra]))["servo_feedforward"]
        args = cmd[cmd.index("--ros-args") :]
        kw = {**ros.node_kwargs(), "cli_args": args}
        ff = ros.add(FeedForwardNode("servo_feedforward", **kw, parameter_overrides=[urdf]))
        for j in ("pendulum_1", "pendulum_2"):
            np.testing.assert_allclose(ff.get_parameter(f"alpha.{j}").value, want, rtol=1e-12, err_msg=j)
        both = [urdf, Parameter("alpha_file", value=str(tmp_path / "alpha.yaml"))]
        with pytest.raises(ValueError, match="alpha_file .* and actuator_file .* are both set: give one"):
            FeedForwardNode("servo_feedforward", **kw, parameter_overrides=both)
