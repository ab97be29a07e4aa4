"""The checks both front-ends of a bring-up (``servo-ff up`` and the launch files) share, without launch_ros: a
``params_file`` argument's content and kinds checked before any node gets it (before: only ``up`` checked it; under
ros2 launch every node died on a malformed one and the launch exited 0, and a wrong kind was kept unsaid by both),
the scratch directory of the parameter files private to the user (before: a shared one whose planted files were
reused unread: kp [1.0] instead of [32.0]), and a node that ends while the bring-up runs stopping it."""

from __future__ import annotations

import os
import signal
import stat
import tempfile

import pytest

from servo_ff.bringup import config_dir, plan
from servo_ff.bringup.node_launch import BringupFailed, ScratchError, _write_params, node_ended, scratch_dir
from servo_ff.bringup.params_check import ConfigError


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("servo_sim:\n  ros__parameters: [1, 2\n", "malformed YAML"),
        ("servo_sim:\n  - 1\n", "expected 'ros__parameters:'"),
        (
            "servo_sim:\n  ros__parameters:\n    rate_hz: fast\n",
            "rate_hz is a string ('fast'), the bring-up's is a number",
        ),
    ],
)
def test_a_params_file_argument_is_checked_for_every_front_end(tmp_path, text, said):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    sim = next(n for n in plan("sim", params_file=str(bad)) if n.name == "servo_sim")
    with pytest.raises(ConfigError, match=r"bad\.yaml") as e:
        sim.parameter_files(config_dir())  # what launch_description and servo-ff up both call
    assert said in str(e.value)


def test_a_good_params_file_argument_is_passed_on(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("servo_sim:\n  ros__parameters:\n    rate_hz: 250.0\n")
    sim = next(n for n in plan("sim", params_file=str(good)) if n.name == "servo_sim")
    assert good in sim.parameter_files(config_dir())


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
def test_the_scratch_directory_is_the_users_own_and_planted_files_are_not_reused(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    d = scratch_dir()
    assert d.name == f"servo_ff_bringup-{os.getuid()}" and stat.S_IMODE(d.stat().st_mode) == 0o700
    doc = {"servo_sim": {"ros__parameters": {"kp": [32.0]}}}
    path = _write_params(doc)
    path.write_text("servo_sim:\n  ros__parameters:\n    kp: [1.0]\n")  # planted under the content's name
    assert _write_params(doc) == path and "32.0" in path.read_text() and "1.0" not in path.read_text()
    d.chmod(0o777)  # another user could plant files in it
    with pytest.raises(ScratchError, match="not a private directory"):
        scratch_dir()
    d.chmod(0o700)
    d.rename(tmp_path / "elsewhere")
    d.symlink_to(tmp_path / "elsewhere")  # a link to a directory (maybe another user's)
    with pytest.raises(ScratchError, match="not a private directory"):
        scratch_dir()


def test_a_node_ending_while_the_bring_up_runs_stops_it_non_zero_unless_it_stopped_cleanly():
    for clean in (0, -signal.SIGINT, 130):
        assert "the bring-up stops" in node_ended("servo_sim", clean)
    for failed in (-signal.SIGKILL, 1, 2):
        with pytest.raises(BringupFailed, match=f"servo_sim ended with exit code {failed} while the bring-up ran"):
            node_ended("servo_sim", failed)
