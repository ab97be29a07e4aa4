"""Parameter groups swapped between two fits, and the model's no-load speed against its closed form."""

import pytest

from servo_ff.identification.param_swap import GROUPS, group_keys, no_load_speed, swap_group, swap_keys
from servo_ff.models.params import ParameterError
from servo_ff.models.presets import preset


def _pair():
    base = preset("xl330", "m3")
    donor = base.with_(
        kt=0.5, R=4.5, armature=0.004, q_offset=0.02, friction_base=0.05, friction_viscous=0.1, load_friction_base=0.3
    )
    return base, donor


def test_a_swapped_group_comes_from_the_donor_and_the_rest_stays():
    base, donor = _pair()
    motor = swap_group(base, donor, "motor")
    assert (motor.kt, motor.R) == (0.5, 4.5)
    assert motor.armature == base.armature and motor.q_offset == base.q_offset
    assert dict(motor.friction) == dict(base.friction)
    friction = swap_group(base, donor, "friction")
    assert dict(friction.friction) == dict(donor.friction)
    assert (friction.kt, friction.R, friction.armature) == (base.kt, base.R, base.armature)
    assert swap_group(base, donor, "armature").armature == 0.004
    assert swap_group(base, donor, "q_offset").q_offset == 0.02
    assert group_keys(base, "friction") == ("friction_base", "friction_viscous", "load_friction_base")


def test_swapping_every_group_gives_the_donor():
    base, donor = _pair()
    donor = donor.with_(firmware=donor.firmware.with_(error_gain=2 * donor.firmware.error_gain))
    p = base
    for g in GROUPS:
        p = swap_group(p, donor, g)
    assert p.packed() == pytest.approx(donor.packed(), rel=0, abs=0)
    assert p.firmware.error_gain == donor.firmware.error_gain
    assert swap_keys(base, donor, ["kt"]).R == base.R


def test_swap_refuses_another_model_and_an_unknown_group():
    base, _ = _pair()
    with pytest.raises(ParameterError, match="m3.*m1"):
        swap_group(base, preset("xl330", "m1"), "motor")
    with pytest.raises(ParameterError, match="no_such_group"):
        swap_group(base, base, "no_such_group")


@pytest.mark.parametrize("kc, kv", [(0.0, 0.0), (0.0, 0.02), (0.03, 0.02)])
def test_no_load_speed_is_the_dc_motor_steady_state(kc, kv):
    """M1 at full duty, no load: kt·(V − kt·ω)/R = K_c + K_v·ω, so ω = (kt·V/R − K_c)/(kt²/R + K_v)."""
    p = preset("xl330", "m1").with_(friction_base=kc, friction_viscous=kv)
    v = 7.3 * p.firmware.max_pwm
    expected = (p.kt * v / p.R - kc) / (p.kt**2 / p.R + kv)
    assert no_load_speed(p, 7.3) == pytest.approx(expected, rel=1e-6)
    assert no_load_speed(p, 6.0) < no_load_speed(p, 7.3)
    with pytest.raises(ParameterError, match="supply"):
        no_load_speed(p, 0.0)
