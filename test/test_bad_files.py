"""No traceback for any user mistake (issue 15, deliverable 6): every file reader turns bad input into one line
naming the file and the key or element; the CLI exits with 2. Tables of hostile files, one row per case."""

from __future__ import annotations

import json
import math
import re
import zipfile

import numpy as np
import pytest

from servo_ff.cli import main
from servo_ff.models.errors import ParameterError
from servo_ff.models.params import load_params
from servo_ff.models.presets import preset
from servo_ff.safe_parse import MAX_DEPTH, json_depth, parse_json, parse_yaml, yaml_loader

BIG = int("1" + "0" * 400)  # a 401-digit integer: no float holds it
BIG_TEXT = "1" + "0" * 400


def _bam_params(**changes) -> dict:
    d = preset("mx64", "m1").to_bam_dict()
    d.update(changes)
    return d


def _billion_laughs() -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


def _params_yaml(extra: str = "") -> str:
    return preset("mx64", "m1").to_yaml() + extra


def _bam_log(entries=None, **meta) -> str:
    if entries is None:
        entries = [{"timestamp": 0.005 * k, "position": 0.01 * k, "goal_position": 0.1} for k in range(5)]
    return json.dumps({"mass": 0.5, "length": 0.15, "kp": 32, "vin": 15.0, **meta, "entries": entries})


def _entries_with(position):
    e = [{"timestamp": 0.005 * k, "position": 0.01 * k, "goal_position": 0.1} for k in range(5)]
    e[1]["position"] = position
    return e


# ------------------------------------------------------------------------------------------- CLI: exit code 2
# (file name, content (str or bytes), command builder, words the one-line error must contain)
PARAMS = lambda f, tmp: ["simulate", "--params", str(f), "--out", str(tmp / "out")]  # noqa: E731
FIT = lambda f, tmp: ["fit", str(f), "--out", str(tmp / "out")]  # noqa: E731
URDF = lambda f, tmp: ["ff-alpha", "--urdf", str(f), "-o", str(tmp / "a.yaml")]  # noqa: E731
FIRMWARE = lambda f, tmp: [
    "simulate",
    "--servo",
    "mx64",
    "--model",
    "m1",
    "--firmware",
    str(f),  # noqa: E731
    "--out",
    str(tmp / "out"),
]


def _urdf(joint: str = None, link: str = None) -> str:
    joint = joint or (
        '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>'
        '<axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="5" velocity="6"/></joint>'
    )
    link = link or (
        '<link name="l1"><inertial><origin xyz="0 0 -0.1"/><mass value="0.5"/>'
        '<inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>'
    )
    return f'<?xml version="1.0"?><robot name="r"><link name="base"/>{joint}{link}</robot>'


CLI_CASES = [
    # parameter files (bam JSON, ROS YAML) and firmware files
    (
        "big_kt.json",
        lambda: json.dumps(_bam_params(kt="X")).replace('"X"', BIG_TEXT),
        PARAMS,
        ["big_kt.json", "kt", "401 digits", "too large for a float"],
    ),
    (
        "big_limit.json",
        lambda: json.dumps(_bam_params(firmware={"current_limit": "X"})).replace('"X"', BIG_TEXT),
        PARAMS,
        ["big_limit.json", "firmware.current_limit", "too large"],
    ),
    (
        "big_limit.yaml",
        lambda: _params_yaml().replace("current_limit: 0.0", f"current_limit: {BIG_TEXT}"),
        PARAMS,
        ["big_limit.yaml", "current_limit", "too large"],
    ),
    ("deep.json", lambda: "[" * 100_000 + "]" * 100_000, PARAMS, ["deep.json", "nested 100000 levels", "limit"]),
    ("deep.yaml", lambda: "a: " + "[" * 5000 + "]" * 5000 + "\n", PARAMS, ["deep.yaml", "nested more than"]),
    ("laughs.yaml", _billion_laughs, PARAMS, ["laughs.yaml", "anchor &a refused"]),
    ("self.yaml", lambda: "a: &x [*x]\n", PARAMS, ["self.yaml", "anchor &x refused"]),
    ("merge.yaml", lambda: "base: &b {kt: 1}\nother:\n  <<: *b\n", PARAMS, ["merge.yaml", "refused"]),
    (
        "date.yaml",
        lambda: _params_yaml().replace("kt: ", "kt: 2024-01-01 #"),
        PARAMS,
        ["date.yaml", "actuator.kt", "date value is not accepted"],
    ),
    ("binary.json", lambda: b'{"kt": "\xff\xfe"}', PARAMS, ["binary.json", "not a UTF-8 text file"]),
    ("list_kt.json", lambda: json.dumps(_bam_params(kt=[1.0, 2.0])), PARAMS, ["list_kt.json", "kt must be a number"]),
    ("dict_kt.json", lambda: json.dumps(_bam_params(kt={"a": 1})), PARAMS, ["dict_kt.json", "kt must be a number"]),
    ("fw.yaml", lambda: "firmware: &f {kp: 8}\n", FIRMWARE, ["fw.yaml", "anchor &f refused"]),
    (
        "fw_big.json",
        lambda: '{"firmware": {"kp": ' + BIG_TEXT + "}}",
        FIRMWARE,
        ["fw_big.json", "firmware.kp", "too large"],
    ),
    # bam JSON logs and CSV logs
    (
        "big_pos.json",
        lambda: _bam_log(_entries_with("X")).replace('"X"', BIG_TEXT),
        FIT,
        ["big_pos.json", "entries[1].position", "too large"],
    ),
    (
        "big_mass.json",
        lambda: _bam_log().replace('"mass": 0.5', f'"mass": {BIG_TEXT}'),
        FIT,
        ["big_mass.json", "mass", "too large"],
    ),
    (
        "list_pos.json",
        lambda: _bam_log(_entries_with([1, 2])),
        FIT,
        ["list_pos.json", "entries[1] key 'position' must be a number, got a list"],
    ),
    (
        "dict_pos.json",
        lambda: _bam_log(_entries_with({"a": 1})),
        FIT,
        ["dict_pos.json", "entries[1] key 'position' must be a number, got a dict"],
    ),
    (
        "str_pos.json",
        lambda: _bam_log(_entries_with("north")),
        FIT,
        ["str_pos.json", "entries[1] key 'position' must be a number"],
    ),
    ("int_entry.json", lambda: _bam_log([7, 8]), FIT, ["int_entry.json", "entries[0] is not an object"]),
    ("deep_log.json", lambda: '{"entries": ' + "[" * 1000 + "]" * 1000 + "}", FIT, ["deep_log.json", "nested"]),
    (
        "meta_list.csv",
        lambda: (
            "# mass: [1]\n# length: 0.1\n# kp: 8\n# vin: 12\ntimestamp,position,goal_position\n"
            "0,0,0\n0.005,0,0\n0.01,0,0\n"
        ),
        FIT,
        ["meta_list.csv", "'mass' must be a number"],
    ),
    ("binary.csv", lambda: b"timestamp,position,goal_position\n\xff\xfe\n", FIT, ["binary.csv", "UTF-8"]),
    (
        "huge_field.csv",
        lambda: "timestamp,position,goal_position\n" + '"' + "1" * 200_000 + '",0,0\n',
        FIT,
        ["huge_field.csv", "malformed CSV"],
    ),
    # ILC records (servo-ff ilc, servo_ilc_node)
    ("garbage.npz", lambda: b"PK\x03\x04" + b"\x00garbage" * 20, FIT, ["garbage.npz", "not a .npz archive"]),
    ("text.npz", lambda: "this is not an archive", FIT, ["text.npz", "not a .npz archive"]),
    # URDFs
    (
        "nochild.urdf",
        lambda: _urdf(
            joint='<joint name="j1" type="revolute"><parent link="base"/>'
            '<limit lower="-1" upper="1" effort="5" velocity="6"/></joint>'
        ),
        URDF,
        ["nochild.urdf", "joint 'j1' has no <child"],
    ),
    (
        "inverted.urdf",
        lambda: _urdf().replace('lower="-1" upper="1"', 'lower="1" upper="-1"'),
        URDF,
        ["inverted.urdf", "joint 'j1'", "inverted", "lower=1 > upper=-1"],
    ),
    (
        "inf_limit.urdf",
        lambda: _urdf().replace('upper="1"', 'upper="inf"'),
        URDF,
        ["inf_limit.urdf", "joint 'j1'", "upper", "not finite"],
    ),
    (
        "nan_velocity.urdf",
        lambda: _urdf().replace('velocity="6"', 'velocity="nan"'),
        URDF,
        ["nan_velocity.urdf", "joint 'j1'", "velocity", "not finite"],
    ),
    (
        "inf_mass.urdf",
        lambda: _urdf().replace('<mass value="0.5"/>', '<mass value="inf"/>'),
        URDF,
        ["inf_mass.urdf", "link 'l1'", "<mass>", "not finite"],
    ),
    (
        "nan_inertia.urdf",
        lambda: _urdf().replace('ixx="1e-4"', 'ixx="nan"'),
        URDF,
        ["nan_inertia.urdf", "link 'l1'", "ixx", "not finite"],
    ),
    (
        "neg_inertia.urdf",
        lambda: _urdf().replace('iyy="1e-4"', 'iyy="-1"'),
        URDF,
        ["neg_inertia.urdf", "link 'l1'", "iyy=-1 is negative"],
    ),
    (
        "word_mass.urdf",
        lambda: _urdf().replace('<mass value="0.5"/>', '<mass value="heavy"/>'),
        URDF,
        ["word_mass.urdf", "link 'l1'", "not 1 number"],
    ),
    (
        "entities.urdf",
        lambda: (
            '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;">]>' + _urdf().split("?>", 1)[1]
        ),
        URDF,
        ["entities.urdf", "<!ENTITY"],
    ),
    ("truncated.urdf", lambda: _urdf()[:-20], URDF, ["truncated.urdf", "malformed URDF XML"]),
]


@pytest.mark.parametrize("name, content, command, words", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_cli_refuses_bad_file_in_one_line_with_exit_2(tmp_path, capsys, name, content, command, words):
    path = tmp_path / name
    data = content()
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    rc = main(command(path, tmp_path))  # any exception other than the mapped ones fails the test here
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert "\n" not in err and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


def test_cli_fit_refuses_ilc_records_with_wrong_shapes_and_object_arrays(tmp_path, capsys):
    """``servo-ff fit`` reads the one ILC record format: every defect is one line naming the file and key."""
    n = 50
    good = dict(
        joint=np.array("pendulum"),
        t=np.arange(n) * 0.005,
        reference_q=np.zeros(n),
        reference_dq=np.zeros(n),
        reference_ddq=np.zeros(n),
        commands=np.zeros((2, n)),
        measured=np.zeros((2, n)),
        errors=np.array([0.2, 0.1]),
        supply=np.array([15.0, 15.0]),
        kp=4.0,
        dt=0.005,
        delay=0.0,
        converged_iteration=1,
        pendulum=np.array([1.0, 0.15, 0.0]),
    )
    cases = [
        ({"supply": None}, ["missing key(s) supply"]),
        ({"commands": np.zeros((2, 40))}, ["commands has shape (2, 40)", "(iterations, 50)"]),
        ({"errors": np.array([0.1])}, ["errors has shape (1,)", "one per iteration"]),
        ({"kp": np.array([1.0, 2.0])}, ["kp must be one number"]),
        ({"dt": np.array(math.nan)}, ["dt", "not finite"]),
        ({"pendulum": np.array([1.0, -0.1, 0.0])}, ["pendulum must be (mass, length, arm mass) >= 0"]),
        ({"reference_q": np.array([{"a": 1}], dtype=object)}, ["cannot read the .npz archive"]),
    ]
    for i, (change, words) in enumerate(cases):
        arrays = {k: v for k, v in {**good, **change}.items() if v is not None}
        path = tmp_path / f"bad{i}.npz"
        np.savez(path, **arrays)
        assert main(["fit", str(path), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and f"bad{i}.npz" in err, err
        for w in words:
            assert w in err, (w, err)


# ------------------------------------------------------------------------------------------- the parsers
def test_yaml_loader_refuses_aliases_and_anchors_before_expanding_them():
    """The billion-laughs defence is structural: the loader refuses the first anchor, and any alias, so no
    expansion ever happens (whatever the machine's speed)."""
    import yaml

    loader = yaml_loader()
    assert issubclass(loader, yaml.SafeLoader)
    for text, word in (
        (_billion_laughs(), "anchor &a refused"),
        ("b: *x\n", "alias *x refused"),
        ("a: &x 1\n", "anchor &x refused"),
    ):
        with pytest.raises(ParameterError, match=re.escape(word)):
            parse_yaml(text, "f.yaml", ParameterError)
        with pytest.raises(yaml.YAMLError):
            yaml.load(text, Loader=loader)  # noqa: S506
    assert parse_yaml("a: [1, 2.5, x, null, true]\n", "f.yaml", ParameterError) == {"a": [1, 2.5, "x", None, True]}


def test_json_depth_ignores_brackets_inside_strings_and_limits_nesting():
    assert json_depth('{"a": "[[[[[[", "b": [[1]]}') == 3
    assert json_depth('"\\"[[" ') == 0
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(ok, "f", ParameterError) is not None
    with pytest.raises(ParameterError, match=f"nested {MAX_DEPTH + 1} levels"):
        parse_json("[" + ok + "]", "f", ParameterError)


def test_huge_integers_are_named_by_key_path_in_json_and_yaml(tmp_path):
    doc = {"a": [{"b": 1.0}, {"b": "X"}]}
    with pytest.raises(ParameterError, match=r"a\[1\]\.b: an integer of 401 digits is too large"):
        parse_json(json.dumps(doc).replace('"X"', BIG_TEXT), "f.json", ParameterError)
    with pytest.raises(ParameterError, match=r"a\[0\]: an integer of 5001 digits"):
        parse_yaml("a: [1" + "0" * 5000 + "]\n", "f.yaml", ParameterError)
    p = tmp_path / "p.json"
    p.write_text(json.dumps(_bam_params(R="X")).replace('"X"', BIG_TEXT))
    with pytest.raises(ParameterError, match=r"p\.json: R: an integer of 401 digits"):
        load_params(p)
    assert parse_json('{"x": 1' + "0" * 300 + "}", "f", ParameterError)["x"] == 10**300  # fits a float: kept


# ------------------------------------------------------------------------------------------- α files
@pytest.mark.parametrize(
    "name, text, words",
    [
        (
            "big.yaml",
            f"alpha: [{BIG_TEXT}, 1, 1, 1]\n",
            ["big.yaml", "alpha[0]: an integer of 401 digits", "too large"],
        ),
        (
            "big.json",
            '{"joints": {"a": [1, 1, 1, ' + BIG_TEXT + "]}}",
            ["big.json", "joints.a[3]: an integer of 401 digits"],
        ),
        ("neg.yaml", "alpha: [-1000000, 0, 0, 0]\n", ["neg.yaml", "default.alpha[0]", "range [0.001, 100000]"]),
        ("zero.yaml", "alpha: [0, 1, 1, 1]\n", ["zero.yaml", "default.alpha[0]=0", "admissible range"]),
        ("negfric.yaml", "alpha: [10, 1, -0.5, 1]\n", ["negfric.yaml", "default.alpha[2]=-0.5", "[0, 100000]"]),
        ("dqs.yaml", "alpha: [10, 1, 1, 1]\ndq_s: 1.0e+9\n", ["dqs.yaml", "default.dq_s", "admissible range"]),
        ("laughs.yaml", _billion_laughs(), ["laughs.yaml", "anchor &a refused"]),
        ("deep.json", "[" * 10_000 + "]" * 10_000, ["deep.json", "nested"]),
        ("list_dqs.yaml", "alpha: [10, 1, 1, 1]\ndelta: [1]\n", ["list_dqs.yaml", "default.delta must be a number"]),
    ],
)
def test_alpha_files_refused_naming_file_and_key(tmp_path, name, text, words):
    pytest.importorskip("pinocchio")
    from servo_ff.dynamics.alpha import AlphaError, load_alpha

    (tmp_path / name).write_text(text)
    with pytest.raises(AlphaError) as e:
        load_alpha(tmp_path / name, ["a", "b"])
    msg = str(e.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)


# ------------------------------------------------------------------------------------------- ILC record files
def _ilc_arrays(n=20, k=3):
    return dict(
        joint=np.array("j"),
        t=np.arange(n) * 0.01,
        reference_q=np.zeros(n),
        reference_dq=np.zeros(n),
        reference_ddq=np.zeros(n),
        commands=np.zeros((k, n)),
        measured=np.zeros((k, n)),
        errors=np.ones(k),
        supply=np.full(k, 15.0),
        kp=np.array(8.0),
        dt=np.array(0.01),
        delay=np.array(0.02),
        converged_iteration=np.array(-1),
    )


@pytest.mark.parametrize(
    "change, words",
    [
        ("garbage", ["not a .npz archive"]),
        ("truncated", ["bad.npz"]),
        ({"kp": np.array([1.0, 2.0])}, ["kp must be one number"]),
        ({"joint": np.array(["a", "b"])}, ["joint must be one name"]),
        ({"supply": np.ones(2)}, ["supply has shape (2,)", "one per iteration"]),
        ({"errors": np.array(["x", "y", "z"])}, ["errors must hold numbers"]),
        ({"delay": np.array(math.inf)}, ["delay is not finite"]),
        ({"t": np.zeros(1), "reference_q": np.zeros(1)}, ["t has shape (1,)"]),
        ({"dt": np.array(0.0)}, ["dt must be > 0, got 0"]),  # before: ZeroDivisionError in the fit (traceback)
        ({"dt": np.array(-0.01)}, ["dt must be > 0, got -0.01"]),
        ({"kp": np.array(True)}, ["kp must be one number", "dtype bool"]),  # before: kp 1, α̂ 8× off
        ({"kp": np.array(0.0)}, ["kp must be > 0"]),
    ],
)
def test_ilc_record_file_errors_name_file_and_key(tmp_path, change, words):
    from servo_ff.io.ilc_record import ILCFileError, load_ilc_record

    path = tmp_path / "bad.npz"
    if change == "garbage":
        path.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    elif change == "truncated":
        np.savez(path, **_ilc_arrays())
        path.write_bytes(path.read_bytes()[:300])
    else:
        np.savez(path, **{**_ilc_arrays(), **change})
    with pytest.raises(ILCFileError) as e:
        load_ilc_record(path)
    assert str(path) in str(e.value) and "\n" not in str(e.value)
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    np.savez(tmp_path / "good.npz", **_ilc_arrays())
    assert load_ilc_record(tmp_path / "good.npz").joint == "j"
    assert zipfile.is_zipfile(tmp_path / "good.npz")


# ------------------------------------------------------------------------------------------- rosbag2 logs
def _bag(path, js_positions, goal_points=None, meta="{}"):
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_JAZZY)
    T = ts.types
    hdr = lambda k: T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](  # noqa: E731
            sec=1, nanosec=k * 5_000_000
        ),
        frame_id="",
    )
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        c = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=ts)
        cm = w.add_connection("/servo_ff/log_meta", "std_msgs/msg/String", typestore=ts)
        w.write(cm, 1_000_000_000, ts.serialize_cdr(T["std_msgs/msg/String"](data=meta), "std_msgs/msg/String"))
        for k, pos in enumerate(js_positions):
            msg = T["sensor_msgs/msg/JointState"](
                header=hdr(k),
                name=["j"],
                position=np.array(pos, float),
                velocity=np.array([], float),
                effort=np.array([], float),
            )
            w.write(c, 1_000_000_000 + k * 5_000_000, ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
        if goal_points is not None:
            cg = w.add_connection("/goal", "trajectory_msgs/msg/JointTrajectory", typestore=ts)
            pts = [
                T["trajectory_msgs/msg/JointTrajectoryPoint"](
                    positions=np.array(p, float),
                    velocities=np.array([], float),
                    accelerations=np.array([], float),
                    effort=np.array([], float),
                    time_from_start=T["builtin_interfaces/msg/Duration"](sec=0, nanosec=0),
                )
                for p in goal_points
            ]
            msg = T["trajectory_msgs/msg/JointTrajectory"](header=hdr(0), joint_names=["j"], points=pts)
            w.write(cg, 1_000_000_000, ts.serialize_cdr(msg, "trajectory_msgs/msg/JointTrajectory"))


META = {"mass": 1, "length": 0.1, "kp": 8, "vin": 12}


@pytest.mark.parametrize(
    "js, goal, meta, words",
    [
        ([[0.0], [], [0.2]], [[0.1]], json.dumps(META), ["topic /joint_states message 1", "0 position(s)"]),
        ([[0.0], [0.1], [0.2]], [[0.1], []], json.dumps(META), ["topic /goal message 0", "point 1 has 0 position(s)"]),
        (
            [[0.0], [0.1], [0.2]],
            [[0.1]],
            json.dumps({**META, "kp": "X"}).replace('"X"', BIG_TEXT),
            ["/servo_ff/log_meta message 0", "kp: an integer of 401 digits"],
        ),
        ([[0.0], [0.1], [0.2]], [[0.1]], "[" * 500 + "]" * 500, ["/servo_ff/log_meta message 0", "nested"]),
        ([[0.0], [0.1], [0.2]], [[0.1]], "[1, 2]", ["/servo_ff/log_meta message 0", "expected a JSON object"]),
    ],
)
def test_rosbag_bad_messages_are_named(tmp_path, js, goal, meta, words):
    pytest.importorskip("rosbags")
    from servo_ff.io.rosbag import read_rosbag
    from servo_ff.io.servo_log import LogError

    _bag(tmp_path / "bag", js, goal, meta)
    with pytest.raises(LogError) as e:
        read_rosbag(tmp_path / "bag")
    assert str(tmp_path / "bag") in str(e.value) and "\n" not in str(e.value)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


# ------------------------------------------------------------------------------------------- bring-up YAML
@pytest.mark.parametrize(
    "text, words",
    [
        (_billion_laughs(), ["extra.yaml", "anchor &a refused"]),
        (
            "/**:\n  ros__parameters:\n    kp: [" + BIG_TEXT + "]\n",
            ["extra.yaml", "/**.ros__parameters.kp[0]", "too large"],
        ),
        ("- a\n- b\n", ["extra.yaml", "mappings at the top level"]),
    ],
)
def test_up_refuses_bad_params_file_before_starting_nodes(tmp_path, capsys, text, words):
    (tmp_path / "extra.yaml").write_text(text)
    assert main(["up", "sim", "--dry-run", "--params-file", str(tmp_path / "extra.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err, err
    for w in words:
        assert w in err, (w, err)
    (tmp_path / "ok.yaml").write_text("/**:\n  ros__parameters:\n    kp: [8.0]\n")
    assert main(["up", "sim", "--dry-run", "--params-file", str(tmp_path / "ok.yaml")]) == 0


@pytest.mark.parametrize("bringup", ["sim", "sim_humanoid"])
@pytest.mark.parametrize(
    "text, got",
    [("servo_feedforward:\n  ros__parameters:\n", "nothing"), ("servo_feedforward:\n  ros__parameters: 5\n", "int"),
     ("servo_feedforward: 5\n", "int")],
)  # fmt: skip
def test_up_refuses_a_node_section_without_a_parameter_mapping(tmp_path, capsys, bringup, text, got):
    """Before: sim_humanoid (and sim_op3, sim_nimbro_op: the feed-forward α̂ check) crashed with a traceback."""
    (tmp_path / "extra.yaml").write_text(text)
    assert main(["up", bringup, "--dry-run", "--params-file", str(tmp_path / "extra.yaml")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"extra.yaml: servo_feedforward: expected 'ros__parameters:' with a mapping of " \
        f"parameters, got {got}" in err, err  # fmt: skip
    (tmp_path / "ns.yaml").write_text("ns:\n  servo_feedforward:\n    ros__parameters:\n      kp: [8.0]\n")
    assert main(["up", bringup, "--dry-run", "--params-file", str(tmp_path / "ns.yaml")]) == 0  # a namespace


@pytest.mark.parametrize(
    "flags, words",
    [(["--kp", "0"], "kp must be finite and > 0, got 0.0"),  # before: 0 read as not given (the source's kp)
     (["--kp", "nan"], "kp must be finite and > 0, got nan"),
     (["--iteration", "-5"], "iteration must be >= 0 (a trial) or -1 (the best), got -5")],  # before: the best
)  # fmt: skip
def test_fit_refuses_a_gain_or_trial_it_would_replace(tmp_path, capsys, flags, words):
    (tmp_path / "short.json").write_text(_bam_log())
    assert main(["fit", str(tmp_path / "short.json"), "--out", str(tmp_path / "out"), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err, err
    assert not (tmp_path / "out").exists()


def test_fit_on_a_too_short_log_is_one_line(tmp_path, capsys):
    (tmp_path / "short.json").write_text(_bam_log())  # 5 samples at 5 ms
    assert main(["fit", str(tmp_path / "short.json"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "short.json" in err and "at least 11" in err and "\n" not in err, err
