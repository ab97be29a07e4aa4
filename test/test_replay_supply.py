"""Which supply a bag's α fit divides by (Schwarz & Behnke Eq. 19: α̂ ∝ k_P·U_bat): the servo node's own
servo_supply before any other BatteryState, a given vin over a recorded series, a log_meta vin over a BatteryState
found by type only that disagrees with it, every voltage plausible (3-30 V), and the summary naming the source.
Before: any BatteryState was the supply, its series won over --vin and the metadata, unsaid, and any value > 0 went
— a robot's 24 V main pack for a 15 V servo bus gave α̂0 21.3 for 13.3 with --vin 15, a supply in decivolts (150)
α̂0 133, exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("rosbags")
from test_replay_robot_bags import J1, REF, START, VIN, Bag, alpha, fit, servo  # noqa: E402

from servo_ff.io.rosbag import read_rosbag  # noqa: E402

Q, DQ = servo(REF, 8.0)
MAIN_PACK = 24.0  # [V] a robot's main battery, on /battery_state: the servos run at VIN = 15 V behind a regulator


def _bag(path: Path, supplies: dict[str, float | list[float]], meta_vin: float | None = None) -> Path:
    """pendulum_1 at kp 8 driven by REF with its supply at 15 V; ``supplies``: BatteryState topic → voltage
    recorded (2 Hz; a list: message i's); ``meta_vin``: a /servo_ff/log_meta with the bench and that vin."""
    bag = Bag(path)
    for k in range(len(REF)):
        t = START + k * 5_000_000
        if k == 0 and meta_vin is not None:
            doc = {"mass": 0.5, "length": 0.15, "vin": meta_vin, "kp": 8.0, "motor": "mx64"}
            bag.put("/servo_ff/log_meta", "std_msgs/msg/String", t, bag.T["std_msgs/msg/String"](data=json.dumps(doc)))
        bag.joint_state("/joint_states", t, [J1], [Q[k]], [DQ[k]])
        bag.array("/servo/commands", t, [REF[k]])
        if k % 100 == 0:
            bag.array("/servo/p_gains", t, [8.0])
            for topic, volts in supplies.items():
                bag.supply(topic, t, volts[k // 100] if isinstance(volts, list) else volts)
    return bag.close()


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> np.ndarray:
    """α̂ of the bag recording the servos' own supply only."""
    d = tmp_path_factory.mktemp("clean")
    assert fit(_bag(d / "bag", {"/servo_supply": VIN}), d / "out") == 0
    return alpha(d / "out")


def _lines(caplog, word: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if word in r.getMessage()]


def test_a_given_vin_wins_over_the_main_pack_and_the_summary_says_so(tmp_path, clean, capsys, caplog):
    """Only the robot's 24 V /battery_state is recorded, --vin 15 given: fitted at 15 V, the difference in one line
    (before: at 24 V, α̂0 +60 %, unsaid)."""
    assert fit(_bag(tmp_path / "bag", {"/battery_state": MAIN_PACK}), tmp_path / "out", "--vin", "15") == 0
    np.testing.assert_allclose(alpha(tmp_path / "out")[:3], clean[:3], rtol=0.01)
    said = _lines(caplog, "/battery_state")
    assert len(said) == 1 and "vin 15 V (given) is used" in said[0] and "median 24 V" in said[0], said
    assert "U_bat = 15 V (given)" in capsys.readouterr().out
    info = yaml.safe_load((tmp_path / "out" / "alpha.yaml").read_text())["fit"]
    assert (info["u_bat"], info["u_bat_source"]) == (15.0, "given")


def test_the_servo_nodes_supply_is_taken_before_the_main_pack(tmp_path, clean, capsys):
    """/servo_supply (the servo node's) beside /battery_state: the servo node's is the supply (before: "several
    candidate supply voltage topics", exit 2)."""
    bag = _bag(tmp_path / "bag", {"/servo_supply": VIN, "/battery_state": MAIN_PACK})
    assert fit(bag, tmp_path / "out") == 0
    np.testing.assert_allclose(alpha(tmp_path / "out")[:3], clean[:3], rtol=1e-6)
    assert "U_bat = 15 V (recorded /servo_supply)" in capsys.readouterr().out


def test_the_one_battery_state_is_said_when_nothing_else_tells_the_supply(tmp_path, caplog):
    """Only /battery_state, no vin anywhere: it is the supply, said in one line naming it and --vin (before:
    unsaid)."""
    log = read_rosbag(_bag(tmp_path / "bag", {"/battery_state": MAIN_PACK}))
    assert np.all(log.input_volts == MAIN_PACK) and log.vin_source == "recorded /battery_state, the one BatteryState"
    said = _lines(caplog, "/battery_state")
    assert len(said) == 1 and "the one BatteryState topic" in said[0] and "--vin" in said[0], said


def test_a_log_meta_vin_wins_over_a_disagreeing_battery_state_found_by_type(tmp_path, caplog):
    """identify's reading: log_meta says vin 15, the one BatteryState is the 24 V main pack: 15 V, said (before:
    simulated at 24 V)."""
    log = read_rosbag(_bag(tmp_path / "bag", {"/battery_state": MAIN_PACK}, meta_vin=VIN))
    assert np.all(log.input_volts == VIN) and log.vin_source == "/servo_ff/log_meta"
    said = _lines(caplog, "/battery_state")
    assert len(said) == 1 and "is not used: vin 15 V of /servo_ff/log_meta" in said[0], said


def test_the_servo_nodes_nan_before_its_first_health_read_is_left_out_said_once(tmp_path, clean, capsys, caplog):
    """The servo node's servo_supply is NaN until its first health read: two such messages at the start of the bag
    are left out, counted in one line, and the rest is the supply (before: the whole bag refused, 'topic
    /servo_supply message 0: supply voltage nan V is not finite', exit 2)."""
    n = -(-len(REF) // 100)  # messages on /servo_supply
    bag = _bag(tmp_path / "bag", {"/servo_supply": [float("nan")] * 2 + [VIN] * (n - 2)})
    assert fit(bag, tmp_path / "out") == 0, capsys.readouterr().err
    np.testing.assert_allclose(alpha(tmp_path / "out")[:3], clean[:3], rtol=1e-6)
    said = _lines(caplog, "not finite")
    assert len(said) == 1 and f"2 of {n} supply reading(s) not finite (the first: message 0" in said[0], said
    assert "topic /servo_supply" in said[0] and "left out" in said[0], said
    assert "U_bat = 15 V (recorded /servo_supply)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "supplies, flags, words",
    [
        # before: α̂0 133 (×10), exit 0
        ({"/servo_supply": 150.0}, [], ["topic /servo_supply message 0", "150 V", "decivolts", "--supply-topic"]),
        ({"/servo_supply": 15000.0}, [], ["topic /servo_supply message 0", "millivolts"]),
        ({"/servo_supply": VIN}, ["--vin", "150"], ["vin (given)", "150 V", "3-30 V"]),
    ],
)
def test_an_implausible_supply_is_one_line_exit_2(tmp_path, capsys, supplies, flags, words):
    assert fit(_bag(tmp_path / "bag", supplies), tmp_path / "out", *flags) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, (w, err)
    assert not (tmp_path / "out").exists()


def test_the_refusal_says_why_the_supply_range_is_narrower_than_the_firmware_vin(tmp_path, capsys):
    """An XL330's 7.4 V read in decivolts (74), inside the firmware law's vin (0, 100] V: refused by the one supply
    range, the line saying why it is narrower than that vin (before: '74 V is outside the plausible servo supply
    3-30 V (decivolts?)', not why a vin the simulator takes is refused)."""
    from servo_ff.models.schema import FIRMWARE_FIELDS, SUPPLY_RANGE, check_field

    assert check_field(FIRMWARE_FIELDS, "vin", 74.0) == 74.0  # the simulator takes it
    assert fit(_bag(tmp_path / "bag", {"/servo_supply": 74.0}), tmp_path / "out") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    lo, hi = SUPPLY_RANGE
    why = f"74 V is outside the plausible servo supply {lo:g}-{hi:g} V (decivolts?) (narrower than the firmware law's"
    assert why in err and "vin (0, 100] V: servo buses run on 3.7-25.2 V" in err, err


def test_the_fit_refuses_an_implausible_supply_of_any_source():
    """The α data's supply (ILC records, logs, live topics): outside 3-30 V refused naming the sample (before: any
    value > 0)."""
    from servo_ff.identification.alpha_data import data_from_samples

    q = np.linspace(0.0, 1.0, 50)
    assert data_from_samples(q, q, 15.0, 8.0, 0.005, "ok").u_bat[0] == 15.0
    u = np.full(50, 15.0)
    u[7] = 0.5
    with pytest.raises(ValueError, match="at sample 7: 0.5 V is outside the plausible servo supply 3-30 V"):
        data_from_samples(q, q, u, 8.0, 0.005, "live topics")


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_a_given_vin_wins_over_a_logs_input_volts_column(tmp_path, caplog, suffix):
    """As for a bag: a JSON or CSV log's recorded input_volts (12 V) gives way to a given vin 15, said (before: the
    column won, the given vin unsaid)."""
    from servo_ff.io.bam_logs import write_bam_json, write_csv
    from servo_ff.io.logs import read_log
    from servo_ff.io.servo_log import ServoLog

    t = np.arange(400) * 0.005
    log = ServoLog(t, np.sin(t), np.cos(t), np.sin(t), np.ones(400), np.full(400, 12.0), 0.5, 0.0, 0.15, 8.0, 12.0)
    path = tmp_path / f"log{suffix}"
    (write_bam_json if suffix == ".json" else write_csv)(log, path)
    assert np.all(read_log(path).input_volts == 12.0)
    back = read_log(path, meta={"vin": 15.0})
    assert np.all(back.input_volts == 15.0) and back.vin_source == "given"
    said = _lines(caplog, "(given) is used")
    assert len(said) == 1 and "input_volts (median 12 V)" in said[0] and str(path) in said[0], said
