"""Parameter schema: validation, bam JSON, YAML / ROS parameters, presets."""

import json
import math

import numpy as np
import pytest

from servo_ff.models.params import (
    FIRMWARE_LAWS,
    MODEL_FRICTION_KEYS,
    P_QOFF,
    ActuatorParams,
    ParameterError,
    load_params,
)
from servo_ff.models.presets import available_presets, preset

BAM_MX106_M4 = {  # Rhoban/bam bam/params/mx106/m4.json (the published file, verbatim values)
    "kt": 2.23138890457851,
    "R": 2.3717487904639545,
    "armature": 0.02457397334336701,
    "friction_base": 6.653380436533205e-13,
    "friction_stribeck": 0.10491060771568866,
    "load_friction_base": 0.009150334028953775,
    "load_friction_stribeck": 0.22235912179095094,
    "dtheta_stribeck": 1.6232949773728853,
    "alpha": 1.323485668999259,
    "friction_viscous": 0.05096082506010955,
    "model": "m4",
    "actuator": "mx106",
}


@pytest.mark.parametrize("servo,model", available_presets())
def test_bam_json_round_trip(tmp_path, servo, model):
    p = preset(servo, model)
    path = tmp_path / "p.json"
    p.save_json(path)
    data = json.loads(path.read_text())
    assert set(data) == {
        "kt",
        "R",
        "armature",
        "q_offset",
        "model",
        "actuator",
        "firmware",
        *MODEL_FRICTION_KEYS[model],
    }
    assert set(p.to_bam_dict(with_firmware=False)) == set(data) - {"firmware"}
    back = ActuatorParams.load_json(path)
    assert back == p and np.array_equal(back.packed(), p.packed())
    low_gain = p.with_(firmware=p.firmware.with_(kp=11.2))
    low_gain.save_json(path)
    assert ActuatorParams.load_json(path).firmware.kp == 11.2


def test_reads_a_bam_file_as_published(tmp_path):
    path = tmp_path / "m4.json"
    path.write_text(json.dumps({**BAM_MX106_M4, "q_offset": 0.01}))
    p = load_params(path)
    assert p.q_offset == 0.01 and p.packed()[P_QOFF] == 0.01  # bam's q_offset is kept, not dropped
    assert p.with_(q_offset=0.0) == preset("mx106", "m4")
    assert p.firmware == FIRMWARE_LAWS["mx106"]
    assert (p.firmware.vin, p.firmware.kp, p.firmware.error_gain, p.firmware.max_pwm) == (15.0, 32.0, 0.158, 0.9625)


@pytest.mark.parametrize("servo,model", [("mx106", "m6"), ("mx28", "m1")])
def test_yaml_and_ros_parameter_round_trip(tmp_path, servo, model):
    p = preset(servo, model).with_(firmware=preset(servo, model).firmware.with_(kp=11.2))
    path = tmp_path / "p.yaml"
    p.save_yaml(path, node_name="servo_sim_node")
    assert "ros__parameters" in path.read_text()
    assert ActuatorParams.load_yaml(path) == p
    flat = p.to_ros_parameters()
    assert all(isinstance(v, (float, str)) for v in flat.values())
    assert ActuatorParams.from_ros_parameters(flat) == p


@pytest.mark.parametrize("key", ["friction_viscous", "load_friction_base", "kt"])
def test_negative_value_is_refused_naming_the_key(tmp_path, key):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**BAM_MX106_M4, key: -0.1}))
    with pytest.raises(ParameterError, match=key):
        load_params(path)


@pytest.mark.parametrize("key", ["alpha", "R", "model"])
def test_missing_key_is_refused_naming_the_key(tmp_path, key):
    data = dict(BAM_MX106_M4)
    del data[key]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ParameterError, match=key):
        load_params(path)


def test_unknown_actuator_needs_a_firmware_law_and_strings_are_refused(tmp_path):
    with pytest.raises(ParameterError, match="no known firmware law.*mx106"):
        ActuatorParams.from_bam_dict({**BAM_MX106_M4, "actuator": "xl330i"})
    with pytest.raises(ParameterError, match="kt must be a number"):
        ActuatorParams.from_bam_dict({**BAM_MX106_M4, "kt": "2.2"})
    with pytest.raises(ParameterError, match="is a directory"):
        load_params(tmp_path)
    (tmp_path / "n.yaml").write_text("node:\n  ros__parameters: 3\n")
    with pytest.raises(ParameterError, match="ros__parameters"):
        load_params(tmp_path / "n.yaml")


def test_non_finite_and_malformed_files(tmp_path):
    with pytest.raises(ParameterError, match="friction_base"):
        ActuatorParams.from_bam_dict({**BAM_MX106_M4, "friction_base": float("nan")})
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    with pytest.raises(ParameterError, match="malformed JSON"):
        load_params(bad)
    bad_yaml = tmp_path / "x.yaml"
    bad_yaml.write_text("a: [1, 2\n")
    with pytest.raises(ParameterError, match="malformed YAML"):
        load_params(bad_yaml)
    with pytest.raises(ParameterError, match="no such file"):
        load_params(tmp_path / "missing.json")


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(ParameterError, match="mx64, mx106, xl320, xl330, sts3215, mx28, mg995"):
        preset("ax12", "m1")
    with pytest.raises(ParameterError, match="m1, m2, m3, m4, m5, m6"):
        preset("mx106", "m7")
    with pytest.raises(ParameterError, match="not used by model m1"):
        ActuatorParams(
            actuator="x",
            model="m1",
            kt=1,
            R=1,
            armature=0.01,
            friction={"friction_base": 0.1, "friction_viscous": 0.1, "alpha": 1.0},
        )


def test_params_are_immutable_and_hashable():
    p = preset("mx64", "m2")
    with pytest.raises(AttributeError):
        p.kt = 3.0
    with pytest.raises(TypeError):
        p.friction["friction_base"] = -5.0
    assert hash(p) == hash(preset("mx64", "m2"))
    assert p.with_(kt=3.0).kt == 3.0 and p.kt != 3.0


def test_datasheet_presets_follow_seed_000_and_001():
    mx28 = preset("mx28", "m1")
    assert mx28.kt == pytest.approx(193 * 0.836 * 0.0107)  # N·η·K_t
    assert mx28.armature == pytest.approx(0.836 * 193**2 * 8.68e-8)
    # moving damping kt²/R + K_v equals the datasheet's N²η(b_m + K_t/(K_ω R))
    damping = mx28.kt**2 / mx28.R + mx28.friction["friction_viscous"]
    assert damping == pytest.approx(193**2 * 0.836 * (8.87e-8 + 0.0107 / (93.1 * 8.3)))
    # Maximo et al.: P = 32 register → K_p^c = 4 counts→PWM(0..511): duty per rad = 4·4096/(2π)/511
    assert mx28.firmware.kp * mx28.firmware.error_gain == pytest.approx(4 * 4096 / (2 * math.pi) / 511)
    mg = preset("mg995", "m1")
    assert mg.firmware.vin == 5.0 and mg.R == 2.5


def _changed(node: dict, change: dict) -> dict:
    """``node`` with each ``change`` set in it, a dotted key ("firmware.kp") one level down."""
    for key, value in change.items():
        head, _, leaf = key.partition(".")
        if leaf:
            node[head][leaf] = value
        else:
            node[key] = value
    return node


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
@pytest.mark.parametrize(
    "change, expected",
    [
        ({"ktt": 1.0}, r"unknown key\(s\) ktt"),  # a misspelt key was dropped silently
        ({"model": "m1"}, r"friction_stribeck.*model m1 does not use"),  # m4's Stribeck terms in an m1 file
        ({"firmware.kp": float("nan")}, r"firmware\.kp must be finite, got nan"),
        ({"firmware.kpp": 1.0}, r"unknown firmware key\(s\) firmware\.kpp"),
    ],
)
def test_parameter_files_refuse_unknown_keys_and_name_file_and_key_in_both_formats(tmp_path, suffix, change, expected):
    """One loader path: JSON and YAML refuse the same inputs with one line naming the file and the key."""
    p = ActuatorParams.from_bam_dict(BAM_MX106_M4)
    path = tmp_path / f"p{suffix}"
    (p.save_json if suffix == ".json" else p.save_yaml)(path)
    if suffix == ".json":
        data = json.loads(path.read_text())
        path.write_text(json.dumps(_changed(data, change)))
    else:
        import yaml

        doc = yaml.safe_load(path.read_text())
        _changed(doc["/**"]["ros__parameters"]["actuator"], change)
        path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ParameterError, match=f"^{path}: .*{expected}"):
        load_params(path)


def test_every_published_bam_file_loads_with_the_unknown_key_check():
    from importlib.resources import files

    paths = sorted(files("servo_ff.models").joinpath("data/bam").glob("*/*.json"))
    assert len(paths) == 25
    for path in paths:
        assert load_params(path).model == path.stem
