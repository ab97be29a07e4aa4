"""Period and time flags of ``servo-ff fit`` / ``identify``: a bad ``--dt`` or ``--delay`` is one line naming the
flag, exit 2, no traceback; ``--dt``'s range is the fit node's ``dt`` range; a reaction time as long as the data is
refused by the fit itself."""

from __future__ import annotations

import numpy as np
import pytest
from pendulum_log import pendulum_log

from servo_ff.cli import main
from servo_ff.identification.alpha_fit import fit_alpha
from servo_ff.io.bam_logs import write_csv
from servo_ff.io.servo_log import DT_MAX, DT_MIN, LogError, ServoLog

DT = 0.005


def _log(seconds: float = 3.0) -> ServoLog:
    """A pendulum log that moves both ways under a varying load (0.5 kg at 0.15 m, kp 8, 15 V)."""
    return pendulum_log(int(seconds / DT), DT)


@pytest.fixture(scope="module")
def bag(tmp_path_factory):
    pytest.importorskip("rosbags")
    from servo_ff.io.rosbag_write import write_rosbag

    path = tmp_path_factory.mktemp("bag") / "bag"
    write_rosbag(_log(), path)
    return path


def _one_line(capsys, flag: str) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and flag in err, err
    return err


@pytest.mark.parametrize("value", ["0", "nan", "-0.005", "inf", "1e-5", "5"])
def test_fit_refuses_a_bad_dt_in_one_line(bag, tmp_path, capsys, value):
    """Before: 0 an OverflowError traceback (exit 1), nan 'cannot convert float NaN to integer', -0.005 '0 sample(s)',
    1e-5 more than 300 s of resampling."""
    assert main(["fit", str(bag), "--out", str(tmp_path / "o"), "--dt", value]) == 2
    _one_line(capsys, "--dt")
    assert not (tmp_path / "o").exists()


def test_identify_refuses_a_bad_dt_in_one_line(bag, tmp_path, capsys):
    """Before: identify --dt 0 on bags, an OverflowError traceback (exit 1)."""
    assert main(["identify", str(bag), str(bag), "--out", str(tmp_path / "o"), "--dt", "0", "--quiet"]) == 2
    _one_line(capsys, "--dt")


def test_the_bag_reader_names_dt(bag):
    from servo_ff.io.rosbag import read_rosbag

    with pytest.raises(LogError, match=r"bag: dt must be a period in \[0.0001, 1\] s, got 0"):
        read_rosbag(bag, dt=0.0)


@pytest.mark.parametrize("value", ["nan", "-0.01"])
def test_fit_refuses_a_bad_delay_in_one_line(bag, tmp_path, capsys, value):
    assert main(["fit", str(bag), "--out", str(tmp_path / "o"), "--delay", value]) == 2
    _one_line(capsys, "--delay")


def test_a_delay_as_long_as_the_data_is_refused_in_one_line(tmp_path, capsys):
    """Before: --delay 20 on 3 s of data, an IndexError traceback (exit 1)."""
    path = tmp_path / "log.csv"
    write_csv(_log(), path)
    assert main(["fit", str(path), "--out", str(tmp_path / "o"), "--delay", "20"]) == 2
    err = _one_line(capsys, "--delay")
    assert "0 goal/reaction pairs in the 2.995 s of data" in err, err
    assert main(["fit", str(path), "--out", str(tmp_path / "o"), "--delay", "0.01"]) == 0  # a sane one is fitted


def test_fit_alpha_bounds_the_delay_by_the_data():
    lg = _log(1.0)
    tau = 0.5 * 9.81 * 0.15 * np.sin(lg.position)
    args = (lg.goal_position, lg.position, lg.speed, None, tau, 8.0, 15.0, DT)
    with pytest.raises(ValueError, match="leaves 0 goal/reaction pairs in the 0.995 s of data; the fit needs 40"):
        fit_alpha(*args, delay=1.0)
    with pytest.raises(ValueError, match="leaves 39 goal/reaction pairs"):
        fit_alpha(*args, delay=(200 - 39) * DT)


def test_the_fit_node_declares_the_same_dt_range():
    pytest.importorskip("rclpy")
    from servo_ff.nodes.fit_node import fit_specs

    (spec,) = [s for s in fit_specs() if s.name == "dt"]
    assert (spec.lo, spec.hi) == (DT_MIN, DT_MAX) == (1e-4, 1.0)


def test_the_alpha_file_of_one_fitted_joint_serves_every_joint_of_the_robot(tmp_path, capsys):
    """Before: ``fit LOG --joint pendulum_1`` wrote joints.pendulum_1 only, and the feed-forward node on a robot
    with pendulum_2 refused it ("no α for joint 'pendulum_2' and no 'default' entry"); without --joint the file
    named the placeholder "joint" (no robot has it). Now --as-default writes the 'default' entry (implied for the
    placeholder), which every joint reads."""
    from servo_ff.dynamics.alpha import load_alpha

    path = tmp_path / "log.csv"
    write_csv(_log(), path)
    robot = ["pendulum_1", "pendulum_2"]
    for flags in (["--joint", "pendulum_1", "--as-default"], []):
        out = tmp_path / f"o{len(flags)}"
        assert main(["fit", str(path), "--out", str(out), *flags]) == 0
        assert "'default' entry" in capsys.readouterr().out
        table = load_alpha(out / "alpha.yaml", robot)
        assert table.joint_names == tuple(robot)
        np.testing.assert_array_equal(table.alpha[0], table.alpha[1])
        assert table.alpha[0, 0] > 1e-3
    assert main(["fit", str(path), "--out", str(tmp_path / "named"), "--joint", "pendulum_1"]) == 0
    assert load_alpha(tmp_path / "named" / "alpha.yaml", ["pendulum_1"]).joint_names == ("pendulum_1",)


def test_unconstrained_says_what_the_gate_does_with_a_negative_alpha(tmp_path, capsys):
    """--unconstrained on a log whose plain least squares gives α̂3 < 0 (record-sim mx106 sub_oscillations, 0.5 kg at
    0.1 m, kp 16: α̂3 -0.147): refused by the gate in one line naming α̂3, exit 2, nothing written, and its help says
    so. Before, the help read "allow α̂ < 0", which the gate never did."""
    from servo_ff.cli import build_parser

    logs = tmp_path / "logs"
    grid = ["--masses", "0.5", "--lengths", "0.1", "--kps", "16", "--trajectories", "sub_oscillations"]
    assert main(["record-sim", "--format", "csv", "--out", str(logs), *grid]) == 0
    (log,) = logs.iterdir()
    capsys.readouterr()
    assert main(["fit", str(log), "--unconstrained", "--out", str(tmp_path / "fit")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fitted α̂3=-" in err[0] and "nothing written" in err[0], err
    assert not (tmp_path / "fit" / "alpha.yaml").exists()
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["fit"]
    text = next(a.help for a in sub._actions if a.dest == "unconstrained")
    assert "refused by the quality gate" in text and "allow" not in text, text


@pytest.mark.parametrize(
    "kind, flags, words",
    [
        ("csv", ["--iteration", "3"], ["--iteration (a trial of an ILC record .npz)"]),
        ("csv", ["--goal-topic", "/x", "--joints", "a,b"], ["--goal-topic (a rosbag2's)", "--joints (a rosbag2's)"]),
        ("npz", ["--vin", "12", "--dt", "0.01"], ["--vin (an ILC record's supply", "--dt (an ILC record keeps"]),
        ("bag", ["--urdf", "urdf/pendulums2.urdf", "--mass", "1"], ["--mass/--length/--arm-mass (the URDF gives"]),
    ],
)
def test_a_flag_the_source_does_not_use_is_refused_in_one_line(bag, tmp_path, capsys, kind, flags, words):
    """Before: each was accepted and had no effect (exit 0, nothing said): --iteration 3 on a log fitted the log,
    --vin 12 on an ILC record fitted its recorded supply, --mass beside --urdf fitted the URDF's τ_o."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    source = {"csv": tmp_path / "log.csv", "bag": bag, "npz": tmp_path / "ilc.npz"}[kind]
    if kind == "csv":
        write_csv(_log().with_(mass=0.5, length=0.15, kp=8.0, vin=15.0), source)
    if kind == "npz":
        source.write_bytes(b"")  # refused before it is read
    flags = [str(root / f) if f.startswith("urdf/") else f for f in flags]
    assert main(["fit", str(source), *flags, "--out", str(tmp_path / "fit")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(source) in err[0] and "not used for this source" in err[0], err
    assert all(w in err[0] for w in words), err
    assert not (tmp_path / "fit").exists()


def test_identify_refuses_bag_flags_when_no_log_is_a_bag(tmp_path, capsys):
    """identify on CSV logs with --joint/--joints/--p-gains-topic: refused in one line naming them, nothing written.
    Before: accepted, no effect, nothing said (identification ran, exit 0)."""
    for k in range(2):
        write_csv(_log().with_(mass=0.5, length=0.15, kp=8.0, vin=15.0), tmp_path / f"log{k}.csv")
    argv = ["identify", str(tmp_path / "log0.csv"), str(tmp_path / "log1.csv"), "--out", str(tmp_path / "id")]
    code = main([*argv, "--joint", "knee", "--joints", "a,b", "--p-gains-topic", "/g", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "--p-gains-topic, --joint, --joints: options of rosbag2 logs, and none of the 2 logs is one" in err[0], err
    assert not (tmp_path / "id").exists()


def test_a_bag_directory_without_metadata_takes_the_bag_flags(bag, tmp_path, capsys):
    """A recorder killed before writing metadata.yaml: fit reads the directory's storage file as the bag, so it takes
    the bag's topic flags (review: refused as 'not used for this source', though the bag is read without them)."""
    import shutil

    lone = tmp_path / "lone"
    shutil.copytree(bag, lone)
    (lone / "metadata.yaml").unlink()
    out = tmp_path / "fit"
    code = main(["fit", str(lone), "--joint-states-topic", "/joint_states", "--out", str(out)])
    assert code == 0, capsys.readouterr()
    assert (out / "alpha.yaml").exists()
