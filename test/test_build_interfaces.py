"""The generated interfaces (tools/build_interfaces.py): tf2_msgs/TFMessage has the type hash of ROS 2 Jazzy's
(rosbags' Jazzy type store computes it independently), and a set-up run with them in place does nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
try:
    from tf2_msgs.msg import TFMessage
except ImportError as e:
    pytest.skip(f"tf2_msgs not importable ({e}): run tools/build_interfaces.py", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]


def test_tfmessage_type_hash_is_jazzy_s():
    rosbags = pytest.importorskip("rosbags.typesys")
    expected = rosbags.get_typestore(rosbags.Stores.ROS2_JAZZY).hash_rihs01("tf2_msgs/msg/TFMessage")
    with RosHarness(salt=13) as h:
        node = h.make_node("tf_hash")
        node.create_publisher(TFMessage, "tf_hash_probe", 1)
        info = wait_for(lambda: node.get_publishers_info_by_topic(f"{h.ns}/tf_hash_probe"), 20.0, "the publisher")
        assert [str(i.topic_type_hash) for i in info] == [expected]


def test_setup_run_is_a_no_op_when_built():
    import tf2_msgs

    if not (Path(tf2_msgs.__file__).parent / ".servo_ff_interfaces").exists():
        pytest.skip("tf2_msgs does not come from tools/build_interfaces.py (e.g. a ROS install)")
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_interfaces.py"), "--if-needed"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0 and out.stderr == "" and out.stdout == ""


def test_failure_is_one_line(tmp_path):
    """Without a compiler: one line naming what is missing and the log, no traceback, exit 1 (nothing changed)."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_interfaces.py")],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": str(tmp_path), "HOME": str(tmp_path)},
    )
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert lines[0].startswith("build_interfaces: could not generate tf2_msgs, control_msgs: gcc not found")
