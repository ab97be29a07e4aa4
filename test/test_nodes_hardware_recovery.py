"""Reliability of servo_hardware_node (issue 24) on a virtual Dynamixel 2.0 bus (pty, truth record on; the
unrequested reboot also on the Protocol 1.0 and Feetech STS virtual buses, whose health read carries Torque Enable):

* the bus goes away and comes back with one servo still silent: the node reconnects without it (it is left out,
  ERROR in /diagnostics, probed) and holds where the joints are *now* (they moved while the bus was away: the goal
  written after the reconnection is the fresh reading, from the bus's truth record; no snap back); the silent
  servo joins at its own fresh reading once it answers;
* a servo browns out and reboots by itself (RAM at defaults): detected, its set-up (indirect map, P gain) written
  again and its fresh position held before torque comes back; /diagnostics says what happened;
* torque turned off behind the node's back is detected the same way; a hardware error is not a reboot: the servo
  stays torque off with its error reported and is never rebooted without a request;
* an overheating shutdown is not a reboot either, once cooled (1.0's and STS's alarm bits last only while their
  cause does): the torque stays off until the user asks.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest
from nodes_harness import wait_for, watched

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from hardware_rig import COUNT, IDS, PROTOCOLS, UP, Rig, hold_goal_written_after  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from servo_ff.bus import control_table as ct  # noqa: E402
from servo_ff.bus.bus_types import GAIN_GOAL_DATA_ADDR, GAIN_GOAL_INDIRECT, HEALTH_INDIRECT  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus  # noqa: E402
from servo_ff.nodes.hardware_node import HardwareNode  # noqa: E402

PENDULUM = ServoLoad.pendulum(0.25, 0.1)
MAP = list(HEALTH_INDIRECT) + list(GAIN_GOAL_INDIRECT)  # the indirect addresses the node sets up
KP = {"dxl2": 32.0, "dxl1": 40.0, "sts": 40.0}  # not the power-on P gain (1.0 and STS: 32), so a lost gain shows


def indirect_map(bus: VirtualBus, k: int) -> list[int]:
    a = bus.table.item("Indirect Address 1").address
    return [int.from_bytes(bus.mem[k, a + 2 * j : a + 2 * j + 2].tobytes(), "little") for j in range(len(MAP))]


def goal_writes(tr, dxl_id: int, after: float = -np.inf) -> int:
    return int(
        np.count_nonzero((tr["wr_id"] == dxl_id) & (tr["wr_addr"] == GAIN_GOAL_DATA_ADDR) & (tr["wr_t"] > after))
    )


def lift(rig: Rig, node) -> None:
    """The joints held UP by ``node`` (patient: under load an activate can fail once and be retried)."""
    wait_for(lambda: node.active and rig.pub.get_subscription_count(), 60.0, "the node active")
    rig.pub.publish(Float64MultiArray(data=UP))
    wait_for(lambda: np.allclose(rig.physics()["theta"], UP, atol=0.03), 60.0, "the joints up")


@pytest.fixture
def rig(tmp_path, request):
    r = Rig(tmp_path, 61, PENDULUM, getattr(request, "param", "dxl2"))
    yield r
    r.close()


def test_reconnects_with_a_silent_servo_and_holds_where_the_joints_are_now(rig):
    # at each change of `connected` (written last): (value, torque per servo, hip goals written, any reading valid)
    Watched, seen = watched(HardwareNode, "connected", lambda n, v: v != getattr(n, "connected", v) and (
        v, rig.torque().tolist(), goal_writes(rig.truth(), 1), bool(n.valid.any())) or None)  # fmt: skip
    node = rig.node("servo_rc", Watched, stale_cycles=5)
    lift(rig, node)
    rig.bus.set_silent(2, True)  # the knee stops answering, then the whole bus goes away
    # skipped by the bus (or, after a reconnection under load, left out as missing)
    wait_for(lambda: node.bus is not None and (node.bus.stats[2].skipping or 2 in node.bus.missing), 30.0, "knee out")
    rig.bus.stop()
    wait_for(lambda: not node.connected, 30.0, "the loss detected")
    knee_before = float(node.pos[1])
    # back on the same link: the joints moved while it was away (no load: they stay where they were put)
    moved = [0.3, -0.2]
    rig.bus = VirtualBus(ids=IDS, model="mx106", loads=ServoLoad(), link=str(rig.link), truth=True)
    rig.bus.theta[:] = moved
    rig.bus.set_silent(2, True)  # the knee still silent
    t_back = time.monotonic()
    rig.bus.start()
    wait_for(lambda: node.connected, 30.0, "reconnection with the knee silent")
    # seen connected after the hold and the torque were written; seen lost after the readings were marked invalid
    # (before: connected first, with torque still off and no goal written: [0, 0], 0)
    (lost, _, _, valid), (back, torque, goals, _) = seen[1:3]  # (seen[0]: configure)
    assert (lost, valid) == (False, False) and (back, torque) == (True, [1, 0]) and goals > 0, seen
    wait_for(lambda: goal_writes(rig.truth(), 1) > 0, 30.0, "a goal written to the hip")
    goal, pos, t_reply = hold_goal_written_after(rig.truth(), t_back, 1)
    assert t_reply > t_back and abs(goal - pos) <= 1, f"hip goal {goal} counts != fresh reading {pos}"
    assert abs(float(ct.counts_to_rad(goal)) - moved[0]) < 0.01, "the hip is held where it is now"
    assert abs(float(ct.counts_to_rad(goal)) - UP[0]) > 0.5, "the hip snapped back to the goal held before the loss"
    wait_for(lambda: (rig.torque() == [1, 0]).all(), 30.0, "torque back on the hip only")  # written after the goal
    # the silent knee: ERROR naming it, last value held, no goal written to it
    s = wait_for(lambda: (s := rig.status("knee")) and "silent since the reconnection" in s.message and s, 30.0, "diag")
    assert s.level == DiagnosticStatus.ERROR and s.hardware_id.endswith("/servo_rc/dxl/2")
    n = len(rig.states)
    wait_for(lambda: len(rig.states) > n + 10, 30.0, "joint_states without the knee")
    assert all(m.position[1] == knee_before for m in rig.states[n:]), "the knee keeps its last value"
    assert goal_writes(rig.truth(), 2) == 0
    # the knee answers again: it joins at its own fresh reading (it was put at −0.2 rad, not UP[1])
    t_join = time.monotonic()
    rig.bus.set_silent(2, False)
    wait_for(lambda: goal_writes(rig.truth(), 2, t_join) > 0, 30.0, "a goal written to the knee")
    goal, pos, _ = hold_goal_written_after(rig.truth(), t_join, 2)
    assert abs(goal - pos) <= 1 and abs(float(ct.counts_to_rad(goal)) - moved[1]) < 0.01
    wait_for(lambda: (rig.torque() == [1, 1]).all(), 30.0, "torque on the knee")


@pytest.mark.parametrize("rig", list(PROTOCOLS), indirect=True)
def test_a_servo_that_reboots_by_itself_is_set_up_again_and_holds_its_fresh_position(rig, caplog):
    caplog.set_level(logging.WARNING, logger="servo_ff.bus")
    kp = KP[rig.protocol]
    node = rig.node("servo_bo", kp=[kp])
    lift(rig, node)
    gains = lambda: rig.bus.regs.get("Position P Gain")  # noqa: E731
    reg = int(ct.kp_to_p_gain(np.array([kp]), rig.bus.table)[0])
    assert gains()[1] == reg != rig.bus.table.item("Position P Gain").default
    p2 = rig.protocol == "dxl2"
    assert not p2 or indirect_map(rig.bus, 1) == MAP
    t_bo = time.monotonic()
    with rig.bus._lock:  # seen before the node can answer it
        rig.bus.brown_out(2)  # the knee: RAM back at defaults, torque off (2.0: indirect map gone), position kept
        assert rig.torque()[1] == 0 and gains()[1] != reg and (not p2 or indirect_map(rig.bus, 1) != MAP)
    wait_for(lambda: node.unrequested_reboots[1] == 1, 30.0, "the reboot detected")
    wait_for(lambda: rig.torque()[1] == 1, 30.0, "torque back on the knee")
    assert gains()[1] == reg, "P gain restored"  # STS and 1.0: the bus's cache of the gain written was cleared
    assert rig.bus.regs.get("Return Delay Time")[1] == rig.bus.regs.get("Return Delay Time")[0]
    if p2:
        assert indirect_map(rig.bus, 1) == MAP, "indirect map restored"
        # the goal written by the restore (the last goal write before its note): the reading taken after the reboot
        tr = rig.truth()
        done = node.reboot_note[1][0]
        w = np.flatnonzero((tr["wr_id"] == 2) & (tr["wr_addr"] == GAIN_GOAL_DATA_ADDR) & (tr["wr_t"] < done))[-1]
        goal, pos, t_reply = hold_goal_written_after(tr, tr["wr_t"][w] - 1e-9, 2)
        assert t_reply > t_bo and abs(goal - pos) <= 1, f"knee goal {goal} counts != its fresh reading {pos}"
        goal = float(ct.counts_to_rad(goal))
    else:  # no truth record: the goal register holds the reading the restore took (its note says which)
        held = float(node.reboot_note[1][1].split("fresh reading ")[1].split(" rad")[0])
        goal = float(rig.bus.goal[1])
        assert abs(goal - held) <= 1e-4 + rig.bus.table.rad_per_count, f"knee goal {goal} != fresh reading {held}"
    assert node.unrequested_reboots[0] == 0 and rig.torque()[0] == 1
    s = wait_for(lambda: (s := rig.status("knee")) and "rebooted by itself" in s.message and s, 30.0, "diagnostics")
    why = "RAM at defaults" if p2 else "torque off without a request"
    assert s.level == DiagnosticStatus.WARN and why in s.message, s.message
    assert {kv.key: kv.value for kv in s.values}["unrequested_reboots"] == "1"
    assert rig.bus.stats.instructions.get("REBOOT", 0) == 0
    # the restored knee holds: it does not fall (pendulum load)
    wait_for(lambda: abs(rig.physics()["theta"][1] - goal) < 20 * COUNT, 30.0, "knee held")

    # torque turned off behind the node's back (no hardware error): the same recovery
    with rig.bus._lock:
        rig.bus.regs.set("Torque Enable", 0, np.array([True, False]))
    wait_for(lambda: node.unrequested_reboots[0] == 1 and rig.torque()[0] == 1, 30.0, "hip torque restored")
    assert "torque off without a request" in node.reboot_note[0][1]
    # the gains a reboot reset are part of the restore, not 'lost writes' (before, 1.0: 'id 2: P Gain (28) reads 32,
    # 40 was written (a lost write)', the servo's one warning used up)
    assert not [r.getMessage() for r in caplog.records if "lost write" in r.getMessage()]


def test_a_hardware_error_is_reported_and_never_rebooted_without_a_request(rig):
    node = rig.node("servo_hw")
    lift(rig, node)
    rig.bus.inject_overload(1)  # torque off by the Shutdown rule, bit 5 latched
    s = wait_for(
        lambda: (s := rig.status("hip")) and s.level == DiagnosticStatus.ERROR and "overload" in s.message and s,
        30.0,
        "overload in /diagnostics",
    )
    assert s.hardware_id.endswith("/servo_hw/dxl/1") and "hip" in s.name
    n = len(rig.diags)
    wait_for(lambda: len(rig.diags) > n + 10, 60.0, "two seconds of diagnostics")
    assert rig.bus.stats.instructions.get("REBOOT", 0) == 0 and rig.bus.hw_error[0] & ct.HW_OVERLOAD
    assert rig.torque()[0] == 0 and node.unrequested_reboots[0] == 0


def set_temperature(bus: VirtualBus, k: int, celsius: float) -> None:
    """Servo ``k`` of the virtual bus at ``celsius`` (the thermal model then runs on from there, τ ≈ 600 s)."""
    with bus._lock:
        bus.thermal.temp[k] = celsius
        if bus.servos.bank.thermal is not None:
            bus.servos.bank.thermal.temp[k] = celsius


def health_reads(node, n: int) -> None:
    """Wait for ``n`` more health reads of ``node``, completed: their readings stored."""
    done = node.health_reads + n
    wait_for(lambda: node.health_reads >= done, 30.0, f"{n} health reads")


@pytest.mark.parametrize("protocol", ["dxl1", "sts"])
def test_an_overheating_shutdown_keeps_torque_off_once_cooled_until_the_user_asks(tmp_path, protocol):
    """The knee goes 10 °C above its Temperature Limit (MX-106 on 1.0: 80 °C, STS3215: 70 °C): the firmware
    releases its torque (Shutdown / Unloading Condition selects overheating). Cooled 5 °C below the limit, its
    alarm bit is gone (1.0 and STS keep it only while the cause lasts): torque off, no bit. The node keeps it off
    (ERROR in /diagnostics, latched; no reboot counted) until servo/torque_enable, which holds it where it fell.
    Before: the next health read took it for a servo that rebooted by itself and turned torque on (0.6–0.7 s
    after the shutdown on 1.0 and STS). A brown-out after that is still restored as before; so is one after an
    alarm seen with torque staying on (Shutdown 0) and gone again."""
    from std_srvs.srv import SetBool

    rig = Rig(tmp_path, 62, PENDULUM, protocol, thermal=True)
    try:
        node = rig.node("servo_oh")
        lift(rig, node)
        limit = float(rig.bus.regs.get("Temperature Limit")[1])
        set_temperature(rig.bus, 1, limit + 10)
        wait_for(lambda: rig.torque()[1] == 0, 30.0, "the overheating shutdown")
        wait_for(lambda: node.hw_error[1] & ct.HW_OVERHEATING, 30.0, "the node sees the alarm")
        set_temperature(rig.bus, 1, limit - 5)
        wait_for(lambda: node.temperature[1] < limit and node.hw_error[1] == 0, 30.0, "a health read, cooled")
        health_reads(node, 5)
        assert rig.torque().tolist() == [1, 0] and node.unrequested_reboots.tolist() == [0, 0]
        s = wait_for(lambda: (s := rig.status("knee")) and "protective shutdown" in s.message and s, 30.0, "diag")
        assert s.level == DiagnosticStatus.ERROR and "overheating" in s.message, s.message
        assert {kv.key: kv.value for kv in s.values}["hardware_error"] == "0"

        def knee_at_rest():
            p = rig.physics()
            return abs(p["theta"][1] - UP[1]) > 0.3 and abs(p["dtheta"][1]) < 1e-3 and float(p["theta"][1])

        fell = wait_for(knee_at_rest, 30.0, "the knee fallen with torque off")
        with rig.h._busy:  # between two callbacks: the knee joins as after a reconnection it was silent at
            node._joined(np.array([1]))  # (review: its torque was written on, the latch ignored)
        health_reads(node, 2)
        assert rig.torque().tolist() == [1, 0], "a protective shutdown stays off when its servo joins"
        r = rig.h.call(rig.client.create_client(SetBool, "servo/torque_enable"), SetBool.Request(data=True))
        assert r.success, r.message
        assert rig.torque().tolist() == [1, 1] and abs(node.gate.goal[1] - fell) < 0.02, "held where it fell"
        n = len(rig.diags)
        wait_for(lambda: len(rig.diags) > n + 1, 30.0, "diagnostics after the request")
        assert "protective shutdown" not in rig.status("knee").message, "the latch is released"

        with rig.bus._lock:  # a power blip now: restored as a servo that rebooted by itself
            rig.bus.brown_out(2)
        wait_for(lambda: node.unrequested_reboots[1] == 1 and rig.torque()[1] == 1, 30.0, "the knee restored")

        rig.bus.regs.set("Shutdown", 0, [0])  # the hip: overheating reported, torque kept on (EEPROM: kept)
        set_temperature(rig.bus, 0, limit + 10)
        wait_for(lambda: node.hw_error[0] & ct.HW_OVERHEATING, 30.0, "the hip's alarm seen, torque on")
        set_temperature(rig.bus, 0, limit - 5)
        wait_for(lambda: node.hw_error[0] == 0, 30.0, "the hip's alarm gone")
        health_reads(node, 2)
        with rig.bus._lock:
            rig.bus.brown_out(1)
        wait_for(lambda: node.unrequested_reboots[0] == 1 and rig.torque()[0] == 1, 30.0, "the hip restored")
    finally:
        rig.close()


def test_on_exit_hold_names_the_joints_left_on_and_those_kept_off(rig, capfd):
    """on_exit=hold with the knee's protective shutdown latched (overload: torque off): the exit line names the hip
    on at its goal and the knee off (before: 'torque left ON, holding [1.2, -1.0] rad' for both)."""
    node = rig.node("servo_exit", on_exit="hold")
    lift(rig, node)
    rig.bus.inject_overload(2)
    wait_for(lambda: 1 in node.shut_down, 30.0, "the knee's shutdown latched")
    rig.h.remove(node)  # as SIGINT / process exit does (spin_node destroys the node)
    assert rig.torque().tolist() == [1, 0]
    line = next((ln for ln in capfd.readouterr().err.splitlines() if "exit with on_exit=hold" in ln), "")
    assert "torque left ON for joint 'hip' (id 1), holding hip 1.2" in line, line
    assert line.endswith("; OFF for joint 'knee' (id 2) (protective shutdown latched)"), line


def test_on_exit_hold_says_a_joint_rebooted_by_itself_and_not_restored_is_off(rig):
    """A knee seen rebooted by itself (brown-out: torque off) whose restore has not come yet is off, not left ON
    (before: 'torque left ON for joints 'hip' (id 1), 'knee' (id 2)')."""
    node = rig.node("servo_exit_up", on_exit="hold")
    lift(rig, node)
    with rig.h._busy:  # between two callbacks: the health read saw the brown-out, its restore not done yet
        with rig.bus._lock:
            rig.bus.brown_out(2)
        node.unpowered.add(1)
        text = node._hold_text()
    assert text.startswith("torque left ON for joint 'hip' (id 1), holding hip 1.2"), text
    assert text.endswith("; OFF for joint 'knee' (id 2) (rebooted by itself, not restored)"), text


@pytest.mark.parametrize(
    "model, cause",
    [("ax12a", "overheating"), ("ax12a", "overload"), ("mx106-p1", "overheating"), ("mx106-p1", "overload")],
)
def test_a_protocol1_alarm_shutdown_gone_before_the_health_read_is_latched_not_a_brown_out(tmp_path, model, cause):
    """Protocol 1.0 firmware (ROBOTIS e-manual, AX-12A / MX-28 (1.0), Torque Limit (34) and Alarm Shutdown (18)):
    an alarm shutdown sets Torque Limit to 0 and leaves Torque Enable at 1, until Torque Limit is written. The
    knee's alarm (overheating, or overload) comes and goes between two health reads: the node never sees the bit,
    yet latches a protective shutdown (ERROR, kept off, no reboot counted) from Torque Limit 0. Before: the
    emulator cleared Torque Enable (the 2.0 way) and the node took it for a brown-out (torque back on, one
    unrequested reboot counted); with the firmware's behaviour it noticed nothing (torque "on", the knee limp).
    servo/torque_enable writes back the effort limit a command set (not Max Torque: no fight with it); a hip
    brown-out (Torque Limit back at Max Torque, Torque Enable 0) is still restored as before."""
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool

    from servo_ff.bus.command_limits import effort_limit
    from servo_ff.models.presets import preset

    params = {"params": preset("mx28", "m1")} if model == "ax12a" else {}  # the AX has no identified preset
    rig = Rig(tmp_path, 63, PENDULUM, "dxl1", model=model, thermal=True, **params)
    try:
        node = rig.node("servo_p1sd")
        lift(rig, node)
        limit = effort_limit(rig.bus.table, 1.0)  # the knee's effort limit, by a command
        rig.pub_names.publish(JointState(name=["knee"], effort=[1.0]))
        wait_for(lambda: rig.bus.regs.get("PWM Limit")[1] == limit.raw, 30.0, "the knee's effort limit written")
        hot = float(rig.bus.regs.get("Temperature Limit")[1])
        with rig.bus._lock:  # the alarm comes and goes between two health reads
            if cause == "overheating":
                set_temperature(rig.bus, 1, hot + 10)
                rig.bus.inject_error(2, 0)  # the firmware's check of the temperature now
            else:
                rig.bus.inject_overload(2)
            assert rig.bus.regs.get("Torque Enable").tolist() == [1, 1], "1.0: Torque Enable stays 1"
            assert rig.bus.regs.get("PWM Limit").tolist() == [1023, 0], "1.0: Torque Limit (34) := 0"
            set_temperature(rig.bus, 1, hot - 5)
            rig.bus.inject_error(2, ct.HW_OVERHEATING | ct.HW_OVERLOAD, on=False)  # the cause is gone
            assert rig.bus.hw_error.tolist() == [0, 0]
        wait_for(lambda: 1 in node.shut_down, 30.0, "the knee's shutdown latched")
        health_reads(node, 5)
        assert rig.torque().tolist() == [1, 0] and node.unrequested_reboots.tolist() == [0, 0]
        assert node.hw_error.tolist() == [0, 0], "the node never saw the alarm bit"
        s = wait_for(lambda: (s := rig.status("knee")) and "protective shutdown" in s.message and s, 30.0, "diag")
        assert s.level == DiagnosticStatus.ERROR and "alarm bit already gone" in s.message, s.message
        with rig.h._busy:  # the knee joins as after a reconnection: its effort limit is written again (review: that
            node._joined(np.array([1]))  # write released the shutdown, Torque Limit back without a request)
        health_reads(node, 2)
        assert rig.torque().tolist() == [1, 0] and rig.bus.regs.get("PWM Limit")[1] == 0, "kept off"

        r = rig.h.call(rig.client.create_client(SetBool, "servo/torque_enable"), SetBool.Request(data=True))
        assert r.success, r.message
        assert rig.torque().tolist() == [1, 1] and rig.bus.regs.get("PWM Limit")[1] == limit.raw, "effort limit back"
        health_reads(node, 2)
        assert 1 not in node.shut_down and node.unrequested_reboots.tolist() == [0, 0]

        with rig.bus._lock:  # a power blip of the hip: Torque Enable 0, Torque Limit at Max Torque (14)
            rig.bus.brown_out(1)
        wait_for(lambda: node.unrequested_reboots[0] == 1 and rig.torque()[0] == 1, 30.0, "the hip restored")
        assert not node.shut_down and rig.bus.regs.get("PWM Limit").tolist() == [1023, limit.raw]
    finally:
        rig.close()


def test_a_protocol1_shutdown_released_while_the_bus_is_away_is_released_at_the_reconnection(tmp_path):
    """Protocol 1.0: the knee's overload shutdown (Torque Limit 0, Torque Enable 1) is latched; the bus goes silent
    and servo/torque_enable comes while it is away ('applied after reconnection'). At the reconnection its Torque
    Limit is written back before its torque: the knee holds again, nothing latched. Before (review 19b): the
    request cleared only the node's latch; Torque Limit stayed 0, the next health read latched again (Torque
    Enable [1, 1], Torque Limit [1023, 0], the knee limp at -0.19 rad). A shutdown that comes while the bus
    is away with no request since stays latched after the next reconnection."""
    from std_srvs.srv import SetBool

    rig = Rig(tmp_path, 64, PENDULUM, "dxl1")
    try:
        node = rig.node("servo_p1rc", stale_cycles=5)
        lift(rig, node)
        rig.bus.inject_overload(2)
        wait_for(lambda: 1 in node.shut_down, 30.0, "the knee's shutdown latched")

        def away_and_back(during=lambda: None) -> None:
            rig.bus.set_silent(1, True)
            rig.bus.set_silent(2, True)
            wait_for(lambda: not node.connected, 30.0, "the bus lost")
            during()
            rig.bus.set_silent(1, False)
            rig.bus.set_silent(2, False)
            wait_for(lambda: node.connected, 30.0, "reconnected")
            health_reads(node, 3)

        def ask():
            r = rig.h.call(rig.client.create_client(SetBool, "servo/torque_enable"), SetBool.Request(data=True))
            assert not r.success and "after reconnection" in r.message, r.message

        away_and_back(ask)
        assert rig.bus.regs.get("PWM Limit").tolist() == [1023, 1023], "Torque Limit back at Max Torque"
        assert rig.torque().tolist() == [1, 1] and not node.shut_down, node.shut_down
        wait_for(lambda: abs(rig.physics()["theta"][1] - node.gate.goal[1]) < 0.02, 30.0, "the knee held")

        away_and_back(lambda: rig.bus.inject_overload(2))  # no request this time
        wait_for(lambda: 1 in node.shut_down, 30.0, "the new shutdown latched")
        assert rig.bus.regs.get("PWM Limit").tolist() == [1023, 0], "kept: no request since"
    finally:
        rig.close()
