"""The STS effort the hardware path reports (Present Load: the drive duty, not a torque) is the model's motor torque
τ_m = kt·(duty·V_in − kt·θ̇)/R, the torque the sim publishes for the same physics (before: duty × the datasheet
stall torque, 1.912 N·m against the model's V·kt/R = 3.35 N·m at 7.4 V, and no back-EMF term: 0.57× the sim's at
a hold, ×5 while moving)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from servo_ff.bus.bus_interface import make_bus
from servo_ff.bus.bus_types import BusConfig
from servo_ff.bus.feetech.virtual_bus import StsVirtualBus
from servo_ff.bus.virtual_bus import ServoLoad
from servo_ff.models.motor import duty_torque
from servo_ff.models.presets import preset
from servo_ff.models.servo_bank import ServoBank

pytest.importorskip("scservo_sdk")

KP = 32  # the STS3215's P coefficient register (bam's kp)


def rest(bus, goal: float, speed: float = 0.01, near: float = 0.1, timeout: float = 15.0):
    """Goal ``goal`` [rad] written every cycle until the servo rests (|θ̇| < ``speed`` rad/s over 20 reads in a row,
    within ``near`` rad of it: the P law sags under the load, and a torque limit stops it anywhere); that last state
    read."""
    deadline, still = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        bus.write_goals(np.array([goal]), np.array([KP]))
        st = bus.read_state()
        ok = st.valid[0] and abs(st.velocity[0]) < speed and abs(st.position[0] - goal) < near
        still = still + 1 if ok else 0
        if still >= 20:
            return st
        time.sleep(0.005)
    raise AssertionError(f"the servo did not rest within {near} rad of {goal} rad within {timeout} s")


def swept(bus, vb, goal: float, timeout: float = 10.0) -> list:
    """Goal ``goal`` written every cycle until the servo is within 0.1 rad of it: per read (velocity, effort
    reported, the emulator's velocity and motor torque just after)."""
    rows, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        bus.write_goals(np.array([goal]), np.array([KP]))
        st = bus.read_state()
        truth = vb.snapshot()
        rows.append((st.velocity[0], st.effort[0], truth["dtheta"][0], truth["tau_m"][0]))
        if abs(truth["theta"][0] - goal) < 0.1:
            return rows
    raise AssertionError(f"the servo did not reach {goal} rad within {timeout} s")


def open_bus(vb, link):
    config = BusConfig(
        port=str(link), ids=[1], model="sts3215", protocol="sts", latency_timer_ms=1.0, timeout_ms=50.0, p_gain=True
    )
    bus = make_bus(config).open()
    bus.connect()
    bus.setup()
    bus.write_goals(bus.read_state().position, np.array([KP]))
    bus.torque(True)
    return bus


def test_the_reported_effort_is_the_models_motor_torque_at_a_hold(tmp_path):
    """A 0.8 kg, 0.1 m pendulum held at 0.4 … 1.2 rad: the effort the bus reports is the emulator's motor torque
    within 2 % (0.0335 N·m per 0.1 % of duty; V_in in 0.1 V). Before: 0.134 / 0.287 / 0.396 for 0.233 / 0.501 /
    0.694 N·m (×0.57)."""
    vb = StsVirtualBus(ids=[1], model="sts3215", link=str(tmp_path / "tty"), loads=ServoLoad.pendulum(0.8, 0.1))
    with vb:
        bus = open_bus(vb, tmp_path / "tty")
        try:
            for q in (0.4, 0.8, 1.2, -1.0):
                st = rest(bus, q)
                truth = vb.snapshot()
                assert abs(truth["dtheta"][0]) < 0.02  # at rest: the truth read after the state is its torque
                assert st.effort[0] == pytest.approx(truth["tau_m"][0], rel=0.02, abs=0.005), q
        finally:
            bus.torque(False)
            bus.close()


def test_the_reported_effort_has_the_back_emf_term_while_moving(tmp_path):
    """A pure inertia swept between −2.5 and 2.5 rad, three times: across the constant-velocity stretch (the
    firmware's internal target slews at 3400 counts/s), the reported effort is the emulator's motor torque within
    0.03 N·m, where duty × stall torque reads the duty the back-EMF takes (before: ≈ 1.8 N·m for ≈ 0.35 N·m)."""
    vb = StsVirtualBus(ids=[1], model="sts3215", link=str(tmp_path / "tty"), loads=ServoLoad.fixed_inertia(0.002))
    with vb:
        bus = open_bus(vb, tmp_path / "tty")
        try:
            rest(bus, -2.5)
            rows = [r for goal in (2.5, -2.5, 2.5) for r in swept(bus, vb, goal)]
        finally:
            bus.torque(False)
            bus.close()
    v, eff, v_true, tau = np.array(rows).T
    cruise = (np.abs(v) > 3.0) & (np.abs(v - v_true) < 0.05)  # at speed, the truth taken at the same velocity
    assert cruise.sum() >= 10, (v, v_true)
    assert np.median(np.abs(eff[cruise] - tau[cruise])) < 0.03, (eff[cruise], tau[cruise])


def test_the_hardware_conversion_is_the_sims_torque_function():
    """The sim's bank (bam's STS3215 m1) stepped through a swing: the motor torque it publishes equals
    :func:`duty_torque` of its duty (volts / V_in) and velocity, the conversion the hardware path applies."""
    params = preset("sts3215", "m1")
    bank = ServoBank(params, 1, ServoLoad.pendulum(0.8, 0.1).as_pendulum(), theta=np.array([-1.0]))
    bank.goal = np.array([1.0])
    vin = params.firmware.vin
    for _ in range(300):
        dtheta = bank.dtheta  # the step's torque is the one at its start
        bank.advance(0.002)
        expected = duty_torque(bank.volts / vin, vin, dtheta, params.kt, params.R)
        np.testing.assert_allclose(bank.tau_m, expected, rtol=1e-9, atol=1e-12)


def test_the_tables_motor_model_is_the_presets():
    """The STS tables' kt and R (the effort conversion's) are bam's STS3215 m1, the sim's preset (the STS3250, not
    identified, assumes them, as its virtual bus does); without them a duty gives effort NaN, never a duty × stall
    torque."""
    import dataclasses

    from servo_ff.bus import control_table as ct
    from servo_ff.bus.bus_types import load_effort

    params = preset("sts3215", "m1")
    for name in ("sts3215", "sts3250"):
        sts = ct.control_table(name)
        assert (sts.kt, sts.R, sts.load_is_duty) == (params.kt, params.R, True), name
    unknown = dataclasses.replace(ct.control_table("sts3250"), kt=None, R=None)
    assert np.isnan(load_effort(unknown, None, np.array([500]), np.zeros(1), np.full(1, 12.0))).all()


def test_an_effort_limit_holds_that_effort_as_reported(tmp_path):
    """A 0.8 kg, 0.1 m pendulum asked to 2.0 rad (past level: up to 0.78 N·m of gravity) under an effort limit of
    0.3 / 0.5 N·m (command_limits.effort_limit at the V_in the bus read): it sags to rest where gravity equals the
    limit, and the effort the bus reports, and the emulator's motor torque, are the limit within one 0.1 % duty step
    (0.0034 N·m; at rest: |θ̇| < 0.002 rad/s, a back-EMF term under 0.0011 N·m).
    Before: Torque Limit = τ/1.912 N·m of full duty, 1.75× the torque asked for (0.3 → 0.53 N·m)."""
    from servo_ff.bus.command_limits import effort_limit

    vb = StsVirtualBus(ids=[1], model="sts3215", link=str(tmp_path / "tty"), loads=ServoLoad.pendulum(0.8, 0.1))
    with vb:
        bus = open_bus(vb, tmp_path / "tty")
        try:
            bus.read_health()
            for nm in (0.3, 0.5):
                w = effort_limit(bus.table, nm, kt=bus.kt, vin=bus.supply[1])
                bus.write_item(1, w.item, w.raw)
                st = rest(bus, 2.0, speed=0.002, near=float("inf"), timeout=30.0)
                truth = vb.snapshot()
                assert st.effort[0] == pytest.approx(nm, abs=0.004), (nm, st.effort[0], st.position[0], truth)
                assert truth["tau_m"][0] == pytest.approx(nm, abs=0.004), (nm, truth["tau_m"][0])
        finally:
            bus.torque(False)
            bus.close()
