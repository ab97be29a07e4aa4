"""The per-servo set-up of every family's bus on its virtual bus (vendor SDK over the pty): Return Delay Time read
first and written only when it differs (an EEPROM item), and an STS servo not in position mode refused, naming its
id, joint and mode (in wheel mode it ignores goal positions)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from servo_ff.bus.bus_interface import make_bus
from servo_ff.bus.bus_types import BusConfig, GoalRejected
from servo_ff.bus.families import FAMILIES, PROTOCOLS, load
from servo_ff.bus.virtual_bus import ServoLoad

IDS = [1, 2]
NAMES = {1: "hip", 2: "knee"}


def virtual(protocol: str, **kw):
    return load(protocol, "virtual_bus")(ids=IDS, model=FAMILIES[protocol].default_servo, **kw)


def config(vb, protocol: str, **kw) -> BusConfig:
    model = FAMILIES[protocol].default_servo
    return BusConfig(
        port=vb.device,
        ids=IDS,
        model=model,
        protocol=protocol,
        latency_timer_ms=1.0,
        timeout_ms=100.0,
        names=NAMES,
        **kw,
    )


def rdt_writes(vb) -> list[tuple[int, int]]:
    """(servo index, value) of every write the servos take at Return Delay Time (the registers' own write)."""
    addr, seen, write = vb.table.item("Return Delay Time").address, [], vb.regs.write

    def spy(k, a, data):
        if a <= addr < a + len(data):
            seen.append((k, data[addr - a]))
        return write(k, a, data)

    vb.regs.write = spy
    return seen


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_return_delay_is_written_only_when_it_differs(protocol, caplog):
    """Before: every set-up wrote it to every servo (EEPROM wear; 2 set-ups of 2 servos holding 0: 4 writes)."""
    vb = virtual(protocol, return_delay=0)
    vb.regs.set("Return Delay Time", 5, [1])  # the knee holds another value
    seen = rdt_writes(vb)
    with vb, make_bus(config(vb, protocol, return_delay=0)) as bus:
        bus.connect()
        with caplog.at_level(logging.INFO):
            bus.setup()
            bus.setup()
        assert seen == [(1, 0)], seen  # the knee once, the hip never
        assert vb.regs.get("Return Delay Time").tolist() == [0, 0]
        lines = [r.getMessage() for r in caplog.records if "Return Delay Time" in r.getMessage()]
        assert lines == ["id 2 (joint 'knee'): Return Delay Time 5 -> 0 (2 µs units)"], lines
    vb = virtual(protocol, return_delay=7)
    seen = rdt_writes(vb)
    with vb, make_bus(config(vb, protocol, return_delay=None)) as bus:  # None: the servo's value, read
        bus.connect()
        bus.setup()
        assert seen == [] and bus._delays == {1: 7, 2: 7}


def test_sts_servo_in_wheel_mode_is_refused_naming_id_joint_and_mode():
    """Before: set-up took it; torque on, goal 0.5 rad for 1 s: the knee stayed at 0.0 rad, reported valid."""
    vb = virtual("sts", return_delay=0, loads=ServoLoad())
    vb.regs.set("Operating Mode", 1, [1])
    with vb, make_bus(config(vb, "sts")) as bus:
        bus.connect()
        with pytest.raises(GoalRejected, match=r"id 2 \(joint 'knee'\) is in Operating Mode 1 \(wheel / constant"):
            bus.setup()
        assert vb.regs.get("Operating Mode").tolist() == [0, 1], "refused, never written"
        bus.setup([1])  # the one in position mode is set up and driven
        vb.regs.set("Operating Mode", 0, [1])  # the user set it
        bus.setup([2])
        bus.torque(True)
        goals = np.array([0.5, 0.5])
        for _ in range(400):
            s = bus.cycle(goals)
            if s.valid.all() and np.abs(s.position - goals).max() < 0.02:
                break
        assert np.abs(s.position - goals).max() < 0.02, s.position


@pytest.mark.parametrize(
    "mode, why",
    [
        (1, r"\(wheel / constant speed\), not 0 \(position\): it turns at Goal Velocity \(46\) and would ignore every"),
        (2, r"\(PWM \(open loop\)\), not 0 \(position\): it drives the open-loop duty of Goal Time \(44\)"),
        (
            3,
            r"\(step\), not 0 \(position\): Goal Position \(42\) is a number of steps to move by there: it would",
        ),
        (7, r"\(unknown\), not 0 \(position\): not a mode of the STS memory table \(0-3\)"),
    ],
    ids=["wheel", "pwm", "step", "unknown"],
)
def test_sts_refusal_says_why_each_mode_is_not_driven(mode, why):
    """Feetech STS memory table, Operating Mode (0x21): 1 turns at the running speed (0x2E), 2 is open-loop PWM (0x2C),
    3 takes Goal Position (0x2A) as a number of steps to move by. Before: every mode was said to 'ignore every goal
    position' (step mode moves by each goal)."""
    vb = virtual("sts", return_delay=0)
    vb.regs.set("Operating Mode", mode, [1])
    with vb, make_bus(config(vb, "sts")) as bus:
        bus.connect()
        with pytest.raises(GoalRejected, match=r"id 2 \(joint 'knee'\) is in Operating Mode %d " % mode + why):
            bus.setup()


@pytest.mark.parametrize(
    "mode, why",
    [
        (0, "current\\), .*Goal Current \\(102\\)"),
        (1, "velocity\\), .*Goal Velocity \\(104\\)"),
        (16, "PWM\\), .*Goal PWM"),
    ],
    ids=["current", "velocity", "pwm"],
)
def test_dxl2_servo_not_in_a_position_mode_is_refused_naming_id_joint_and_mode(mode, why):
    """ROBOTIS e-manual, Operating Mode (11): 3 position, 4 extended position, 5 current-based position go to Goal
    Position; 0, 1, 16 follow Goal Current / Velocity / PWM. Before (review 19b, /tmp/review_19b/dxl2_mode.py): the
    knee in velocity mode was set up and driven, reported valid, and the emulator took its goals as in position
    mode. Now refused at set-up, never written; the modes that go to Goal Position are kept in ``bus.modes`` (the
    effort limit reads them there)."""
    vb = virtual("dxl2", return_delay=0)
    vb.regs.set("Operating Mode", mode, [1])
    with vb, make_bus(config(vb, "dxl2")) as bus:
        bus.connect()
        with pytest.raises(GoalRejected, match=rf"id 2 \(joint 'knee'\) is in Operating Mode {mode} \({why}"):
            bus.setup()
        assert vb.regs.get("Operating Mode").tolist() == [3, mode], "refused, never written"
        for ok in (4, 5, 3):
            vb.regs.set("Operating Mode", ok, [1])  # the user set it
            bus.setup([2])
            assert bus.modes == {1: 3, 2: ok}


def test_the_dxl2_emulator_follows_goal_position_only_in_a_position_mode():
    """The virtual 2.0 servo in velocity mode (set behind the set-up's back) stays where it is under a goal, as the
    STS one does outside position mode (before: it went to the goal in every mode)."""
    vb = virtual("dxl2", return_delay=0, loads=ServoLoad())
    with vb, make_bus(config(vb, "dxl2")) as bus:
        bus.connect()
        bus.setup()
        bus.torque(True)
        vb.regs.set("Operating Mode", 1, [1])
        goals = np.array([0.5, 0.5])
        for _ in range(400):
            s = bus.cycle(goals)
            if s.valid.all() and abs(s.position[0] - 0.5) < 0.02:
                break
        assert abs(s.position[0] - 0.5) < 0.02 and abs(s.position[1]) < 0.02, s.position


@pytest.mark.parametrize(
    "protocol, item",
    [("dxl2", "Operating Mode"), ("sts", "Operating Mode")] + [(p, "Max Position Limit") for p in PROTOCOLS],
)
def test_a_servo_refused_at_set_up_is_left_out_with_leave_out(protocol, item):
    """Every family's set-up refusals (a mode that ignores Goal Position, a Min/Max Position Limit narrower than the
    joint limits) are one kind: raised by default, or with ``leave_out`` the servo is left out as a missing one is
    (out of ``ids``: never read, written or torqued; why in ``refused``) and the others are driven. Before: no way
    but the raise, so one such servo stopped the whole bus."""
    vb = virtual(protocol, return_delay=0, loads=ServoLoad())
    value = 1 if item == "Operating Mode" else vb.table.item(item).default // 2
    vb.regs.set(item, value, [1])
    with vb, make_bus(config(vb, protocol)) as bus:
        bus.connect()
        with pytest.raises(GoalRejected, match=r"id 2 \(joint 'knee'\)"):
            bus.setup()
        bus.setup(leave_out=True)
        assert bus.ids == [1] and list(bus.refused) == [2] and "id 2 (joint 'knee')" in bus.refused[2]
        bus.torque(True)
        for _ in range(400):
            s = bus.cycle(np.array([0.3]))
            if s.valid.all() and abs(s.position[0] - 0.3) < 0.02:
                break
        assert list(s.ids) == [1] and abs(s.position[0] - 0.3) < 0.02, s.position
        assert vb.regs.get("Torque Enable").tolist() == [1, 0] and vb.regs.get(item)[1] == value


def test_a_missing_servo_refused_when_it_joins_is_left_out_not_probed_again():
    """Missing at connect, it answers later in velocity mode: with ``leave_out`` its join is refused once and it
    leaves ``missing`` for ``refused`` (before: no ``leave_out``; the node retried its set-up every period)."""
    vb = virtual("dxl2", return_delay=0)
    vb.set_silent(2, True)
    with vb, make_bus(config(vb, "dxl2")) as bus:
        assert bus.connect() == ([1], [2])
        bus.setup(leave_out=True)
        vb.regs.set("Operating Mode", 1, [1])
        vb.set_silent(2, False)
        assert not bus.join(2, leave_out=True)
        assert bus.ids == [1] and bus.missing == [] and "Operating Mode 1 (velocity)" in bus.refused[2]
        assert not bus.join(2, leave_out=True)  # not probed again


@pytest.mark.parametrize("protocol", ["sts", "dxl1"])
def test_no_marker_goes_to_a_servo_gone_silent_at_its_set_up(protocol):
    """A servo answers at connect, then goes silent: its set-up fails (BusError after its retries), and the port
    resyncs as its failed READs, left owed, expire. Every marker goes to a servo that answered last. Before, every
    other marker went to the silent one and waited the late horizon in vain (3 of 7 unanswered: STS set-up 7.5 s
    against 7.2 s now, margin 100 ms)."""
    from dataclasses import replace

    from servo_ff.bus.bus_types import BusError
    from servo_ff.bus.select_port import SelectPort

    sent: list[tuple[int, int]] = []
    choose = SelectPort._next_marker

    def recorded(port, ids, lengths, k):
        sent.append(choose(port, ids, lengths, k))
        return sent[-1]

    vb = virtual(protocol, return_delay=0)
    with vb, make_bus(replace(config(vb, protocol), timeout_ms=30.0)) as bus:
        assert bus.connect() == ([1, 2], [])
        vb.set_silent(2, True)
        SelectPort._next_marker = recorded
        try:
            with pytest.raises(BusError, match="id 2"):
                bus.setup(ids=[2])
        finally:
            SelectPort._next_marker = choose
        assert bus.port.resyncs > 0 and sent, "the scenario resyncs"
        assert [i for i, _ in sent] == [1] * len(sent) and bus.port.resync_failures == 0, sent
