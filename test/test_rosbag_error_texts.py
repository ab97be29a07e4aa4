"""A bad rosbag2 is refused by ``servo-ff fit`` in one line naming the bag, the topic or file at fault and what to do
(the variants of /tmp/audit_20c/mkbags.py, made here from a bag ``write_rosbag`` writes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pendulum_log import pendulum_log

pytest.importorskip("rosbags")
from servo_ff.cli import main  # noqa: E402
from servo_ff.io.rosbag import META_TOPIC  # noqa: E402

FLOAT64 = "std_msgs/msg/Float64"


def _copy(src: Path, dst: Path, rename: dict | None = None, retype: dict | None = None, meta: dict | None = None):
    """``src`` rewritten to ``dst``: topics renamed, retyped (each message a Float64 1.0), log_meta keys set."""
    from rosbags.rosbag2 import Reader, StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_JAZZY)
    with Reader(src) as r, Writer(dst, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        conns = {}
        for c in r.connections:
            typ = (retype or {}).get(c.topic, c.msgtype)
            conns[c.id] = (w.add_connection((rename or {}).get(c.topic, c.topic), typ, typestore=ts), c.msgtype, typ)
        for c, t, raw in r.messages():
            wc, old, new = conns[c.id]
            if old != new:
                raw = ts.serialize_cdr(ts.types[new](data=1.0), new)
            elif meta and c.topic == META_TOPIC:
                doc = {**json.loads(ts.deserialize_cdr(raw, old).data), **meta}
                raw = ts.serialize_cdr(ts.types[old](data=json.dumps(doc)), old)
            w.write(wc, t, raw)
    return dst


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    from servo_ff.io.rosbag_write import write_rosbag

    path = tmp_path_factory.mktemp("good") / "bag"
    write_rosbag(pendulum_log(600, 0.005).with_(mass=0.5, length=0.15, kp=8.0, vin=15.0), path)
    return path


def _broken_metadata(good: Path, dst: Path) -> Path:
    shutil.copytree(good, dst)
    (dst / "metadata.yaml").write_text("rosbag2_bagfile_information: [\n")
    return dst


def _no_data_file(good: Path, dst: Path) -> Path:
    shutil.copytree(good, dst)
    for f in dst.glob("*.mcap"):
        f.unlink()
    return dst


CASES = {
    # before: a 5-line YAML parser error
    "metadata.yaml broken": (_broken_metadata, ["metadata.yaml", "give its .mcap/.db3 file itself", "reindex"]),
    # before: "… truncated or corrupt" for a bag whose .mcap was not copied
    "data file missing": (_no_data_file, ["copy the whole bag directory"]),
    # before: "cannot read the rosbag2, truncated or corrupt (AttributeError: 'float' object has no attribute …)"
    "log_meta retyped": (
        lambda g, d: _copy(g, d, retype={META_TOPIC: FLOAT64}),
        [f"topic {META_TOPIC} has type {FLOAT64}, expected std_msgs/msg/String"],
    ),
    # before: "key 'kp' must be finite and >= 0, got nan": no topic, no remedy
    "log_meta kp NaN": (
        lambda g, d: _copy(g, d, meta={"kp": float("nan")}),
        [f"topic {META_TOPIC}: key 'kp'", "servo-ff fit --kp"],
    ),
    # before: "topic '/joint_states' is missing (topics: …)": not what to do
    "joint_states renamed": (
        lambda g, d: _copy(g, d, rename={"/joint_states": "/js"}),
        ["'/joint_states' is missing", "name its sensor_msgs/msg/JointState topic: /js", "--joint-states-topic"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_bag_is_one_line_naming_it_and_what_to_do(good, tmp_path, capsys, case):
    make, words = CASES[case]
    bag = make(good, tmp_path / "bag")
    assert main(["fit", str(bag), "--out", str(tmp_path / "fit")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bag) in err[0], err
    assert all(w in err[0] for w in words), err
    assert not (tmp_path / "fit").exists()


def test_the_good_bag_fits(good, tmp_path):
    """The variants' source fits (what each case breaks is all that is wrong with it)."""
    assert main(["fit", str(good), "--out", str(tmp_path / "fit")]) == 0
    assert (tmp_path / "fit" / "alpha.yaml").is_file()
