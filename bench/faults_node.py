"""Node-level fault scenario of issue 24: ``servo_hardware_node`` (in this process, rclpy over DDS) on a virtual
Dynamixel 2.0 bus (4 × MX-106 with pendulum loads, 1 % dropped and 0.2 % corrupt replies, truth record on), driven
through three faults:

1. **Bus loss with a silent servo.** Id 3 stops answering (the bus skips it), then the bus goes away (the pty closes:
   an adapter unplugged) for ``--outage`` s and comes back on the same link with the joints moved (a new emulator,
   its servos where they were put) and id 3 still silent. ``reconnect_s``: from the bus being back to the node
   connected. Then id 3 answers again and joins.
2. **A servo that reboots by itself.** Id 2 browns out (RAM back at defaults: torque off, indirect map and P gain
   gone). ``reboot_restored``: 1 if the node detected it, wrote the indirect map and P gain again, held the fresh
   reading (the goal written = the reading before it, ±1 count) and turned the torque back on.
3. **Every hardware-error bit** of the bus: overload, encoder, electrical shock (injected), overheating (winding
   temperature above its limit), input voltage (supply sag), each on one servo. ``hw_errors_reported``: the
   fraction that reached /diagnostics at ERROR on the status of that servo, naming the bit, with no REBOOT sent
   before the reboot requested through ``servo/reboot`` (which then clears it).

From the truth records: ``stale_valid`` counts state entries the node stored as valid that are not the intact reply
of their own transaction (the last state sync read the bus received before the reply arrived); ``bad_goals``
counts goals written outside the joint limits or non-finite, plus first goals after a reconnection or a restore
that are not the fresh reading (a snap back).

    .venv/bin/python bench/faults_node.py [--outage 5] [--seed 1]

Last line: ``RESULT stale_valid=… reconnect_s=… reboot_restored=… hw_errors_reported=… bad_goals=…``
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from servo_ff.bus import control_table as ct  # noqa: E402
from servo_ff.bus.bus_types import GAIN_GOAL_DATA_ADDR, GAIN_GOAL_INDIRECT, HEALTH_INDIRECT  # noqa: E402
from servo_ff.bus.faults import INTACT, Faults  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus  # noqa: E402
from servo_ff.ros.harness import RosHarness, wait_for  # noqa: E402

IDS = [1, 2, 3, 4]
JOINTS = ["j1", "j2", "j3", "j4"]
LIMIT = 2.0  # rad
MAP = list(HEALTH_INDIRECT) + list(GAIN_GOAL_INDIRECT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--outage", type=float, default=5.0, help="seconds the bus is away")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steady", type=float, default=20.0, help="seconds of commanded motion before each phase")
    args = ap.parse_args()

    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from rclpy.parameter import Parameter
    from std_msgs.msg import Float64MultiArray
    from std_srvs.srv import SetBool, Trigger

    from servo_ff.nodes.hardware_node import HardwareNode

    link = Path(tempfile.mkdtemp(prefix="faults-node-")) / "ttyDXL"
    buses: list[list] = []  # [virtual bus, started, stopped]

    def new_bus(theta=None) -> VirtualBus:
        faults = Faults(drop_rate=0.01, corrupt_rate=0.002, seed=args.seed + len(buses))
        load = ServoLoad.pendulum(0.1, 0.1)
        vb = VirtualBus(ids=IDS, model="mx106", loads=load, link=str(link), truth=True, faults=faults, thermal=True)
        if theta is not None:
            vb.theta[:] = theta
        buses.append([vb, time.monotonic(), math.inf])
        vb.start()
        return vb

    records: list[tuple] = []  # (ids, valid, position, stamps)

    class AuditedNode(HardwareNode):
        def _store(self, state):
            st = state.stamps if state.stamps is not None else np.full(len(state.ids), state.stamp)
            records.append((tuple(state.ids), state.valid.copy(), state.position.copy(), np.array(st, dtype=float)))
            return super()._store(state)

    values = {
        "joints": JOINTS,
        "ids": IDS,
        "port": str(link),
        "servo": "mx106",
        "rate_hz": 100.0,
        "latency_timer_ms": 1.0,
        "timeout_ms": 20.0,
        "retries": 3,
        "position_min": [-LIMIT],
        "position_max": [LIMIT],
        "kp": [32.0],
        "diagnostics_period": 0.2,
        "health_period": 0.1,
        "reconnect_period": 0.2,
        "stale_cycles": 20,
        "max_reply_age": 30.0,
    }
    vb = new_bus()
    h = RosHarness(salt=71)
    node = h.add(
        AuditedNode(
            "bench_hw", **h.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]
        )
    )
    c = h.make_node("bench_client")
    diags: list[DiagnosticArray] = []
    c.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 200)
    pub = c.create_publisher(Float64MultiArray, "servo/commands", 10)
    snap_backs = 0
    reconnect_s = math.nan
    restored = 0
    reported = injected = 0

    def steady(seconds: float, end: list[float]) -> None:
        """Sine goals at 50 Hz for ``seconds`` (the cycles the audit checks, under the reply faults), then ``end``."""
        t0 = time.monotonic()
        while (t := time.monotonic() - t0) < seconds:
            pub.publish(Float64MultiArray(data=(0.6 * np.sin(2.0 * t + np.arange(len(IDS)))).tolist()))
            time.sleep(0.02)
        pub.publish(Float64MultiArray(data=end))
        wait_for(lambda: np.allclose(node.pos, end, atol=0.05), 60.0, "the joints at the goal")

    try:
        wait_for(lambda: node.active and pub.get_subscription_count(), 60.0, "the node active")
        steady(args.steady, [0.8, -0.6, 0.5, -0.4])

        # 1. bus loss with id 3 silent --------------------------------------------------------------------------
        vb.set_silent(3, True)
        # skipped by the bus (or, after a reconnection forced by a starved emulator, left out as missing)
        wait_for(
            lambda: node.bus is not None and (node.bus.stats[3].skipping or 3 in node.bus.missing), 60.0, "id 3 out"
        )
        vb.stop()
        buses[-1][2] = time.monotonic()
        wait_for(lambda: not node.connected, 60.0, "the loss detected")
        t_lost = time.monotonic()
        time.sleep(args.outage)  # the bus is away (a scenario, not a synchronisation)
        moved = [0.2, -0.1, 0.5, 0.3]
        t_back = time.monotonic()
        vb = new_bus(moved)
        vb.set_silent(3, True)
        wait_for(lambda: node.connected, 30.0, "reconnection")
        reconnect_s = time.monotonic() - t_back
        print(
            f"1. bus lost after {t_lost - buses[0][1]:.1f} s, back {args.outage:g} s later: reconnected in "
            f"{reconnect_s:.2f} s with id 3 silent"
        )
        snap_backs += first_goals_not_fresh(vb, t_back, [1, 2, 4], "after the reconnection")
        t_join = time.monotonic()
        vb.set_silent(3, False)
        wait_for(lambda: goal_writes(vb, 3, t_join) > 0, 60.0, "id 3 joined")
        snap_backs += first_goals_not_fresh(vb, t_join, [3], "id 3 joining")
        print("   id 3 answers again: joined at its fresh reading")

        steady(args.steady, [0.3, -0.1, 0.5, 0.3])

        # 2. id 2 reboots by itself ------------------------------------------------------------------------------
        reg = int(ct.kp_to_p_gain(np.array([32.0]), vb.table)[0])
        t_bo = time.monotonic()
        vb.brown_out(2)
        wait_for(lambda: node.unrequested_reboots[1] >= 1, 60.0, "the reboot detected")
        wait_for(lambda: vb.enable[1] == 1, 60.0, "torque back on id 2")
        a = vb.table.item("Indirect Address 1").address
        ind = [int.from_bytes(vb.mem[1, a + 2 * j : a + 2 * j + 2].tobytes(), "little") for j in range(len(MAP))]
        done = node.reboot_note[1][0]
        fresh = first_goals_not_fresh(vb, t_bo, [2], "after the restore", before=done, last=True) == 0
        restored = int(ind == MAP and vb.regs.get("Position P Gain")[1] == reg and fresh)
        print(
            f"2. id 2 browned out: detected, indirect map {'ok' if ind == MAP else 'WRONG'}, P gain "
            f"{vb.regs.get('Position P Gain')[1]} (want {reg}), fresh goal {'ok' if fresh else 'WRONG'}"
        )

        steady(args.steady, [0.3, -0.1, 0.5, 0.3])

        # 3. every hardware-error bit -------------------------------------------------------------------------------
        cases = [
            ("overload", "inject", ct.HW_OVERLOAD),
            ("motor encoder", "inject", ct.HW_ENCODER),
            ("electrical shock", "inject", ct.HW_ELECTRICAL_SHOCK),
            ("overheating", "heat", ct.HW_OVERHEATING),
            ("input voltage", "sag", ct.HW_INPUT_VOLTAGE),
        ]
        reboot = c.create_client(Trigger, "servo/reboot")
        torque = c.create_client(SetBool, "servo/torque_enable")
        for n, (name, how, bit) in enumerate(cases):
            k = n % len(IDS)
            hit = list(range(len(IDS))) if how == "sag" else [k]
            reboots = vb.stats.instructions.get("REBOOT", 0)
            with vb._lock:
                if how == "inject":
                    vb.inject_error(IDS[k], bit)
                elif how == "heat":
                    vb.thermal.temp[k] = vb.regs.get("Temperature Limit")[k] + 20.0
                else:
                    vb.faults.sag_volts, vb.faults.sag_duration = vb.supply_voltage - 1.0, math.inf
                    vb.faults.sag_start = vb.elapsed()
            ok = True
            for j in hit:
                injected += 1
                try:
                    wait_for(lambda j=j, x=name: error_on(diags, JOINTS[j], x, DiagnosticStatus.ERROR), 60.0, name)
                    reported += vb.stats.instructions.get("REBOOT", 0) == reboots
                except TimeoutError:
                    ok = False
            with vb._lock:  # the cause goes away; the latched bits stay until the reboot
                vb.thermal.temp[:] = vb.thermal.options.ambient
                vb.faults.sag_start = math.inf
            r = h.call(reboot, Trigger.Request(), timeout=15.0)
            for j in hit:
                wait_for(lambda j=j: not error_on(diags, JOINTS[j], "", DiagnosticStatus.ERROR), 60.0, "cleared")
            h.call(torque, SetBool.Request(data=True), timeout=15.0)
            print(
                f"3. {name:16} on {', '.join(JOINTS[j] for j in hit)}: "
                f"{'reported, no reboot unasked' if ok else 'NOT REPORTED'}; reboot on request: {r.message[:60]}"
            )
    finally:
        h.shutdown()
        vb.stop()
        buses[-1][2] = min(buses[-1][2], time.monotonic())

    stale, checked = audit(records, buses)
    written, out_of_limits = goals_out_of_limits(buses)
    print(
        f"audit: {checked} valid entries checked, {stale} stale; {written} goals written, {out_of_limits} out of "
        f"limits or non-finite, {snap_backs} snap backs"
    )
    print(
        f"RESULT stale_valid={stale} reconnect_s={reconnect_s:.2f} reboot_restored={restored} "
        f"hw_errors_reported={reported / max(injected, 1):.3g} bad_goals={out_of_limits + snap_backs}"
    )
    return 0


def error_on(diags, joint: str, text: str, level) -> bool:
    """The latest status of ``joint`` is at ``level`` and names ``text``."""
    for d in reversed(diags):
        for s in d.status:
            if s.name.endswith(f": {joint}"):
                return s.level == level and text in s.message
    return False


def goal_writes(vb: VirtualBus, dxl_id: int, after: float) -> int:
    with vb._lock:
        tr = vb.truth.arrays()
    return int(
        np.count_nonzero((tr["wr_id"] == dxl_id) & (tr["wr_addr"] == GAIN_GOAL_DATA_ADDR) & (tr["wr_t"] > after))
    )


def first_goals_not_fresh(vb, after: float, ids, what: str, before: float = math.inf, last: bool = False) -> int:
    """Of ``ids``: the first goal written after ``after`` (``last``: the last one before ``before``) that is not
    the position of the last intact state reply sent before it (±1 count)."""
    with vb._lock:
        tr = vb.truth.arrays()
    bad = 0
    state_reads = tr["rd_addr"][tr["rp_read"]] == ct.STATE_BLOCK[0]
    for i in ids:
        w = np.flatnonzero(
            (tr["wr_t"] > after) & (tr["wr_t"] < before) & (tr["wr_id"] == i) & (tr["wr_addr"] == GAIN_GOAL_DATA_ADDR)
        )
        if not w.size:
            print(f"   id {i}: no goal written {what}")
            bad += 1
            continue
        w = w[-1] if last else w[0]
        goal = int.from_bytes(bytes(tr["wr_data"][w][2:6]), "little", signed=True)
        r = np.flatnonzero(state_reads & (tr["rp_id"] == i) & (tr["rp_fate"] == INTACT) & (tr["rp_t"] < tr["wr_t"][w]))
        pos = int.from_bytes(bytes(tr["rp_data"][r[-1]][6:10]), "little", signed=True) if r.size else None
        if pos is None or abs(goal - pos) > 1:
            print(f"   id {i}: goal {goal} counts {what}, fresh reading {pos}: SNAP BACK")
            bad += 1
    return bad


def audit(records, buses) -> tuple[int, int]:
    """(valid entries that are not the intact reply of their own transaction, valid entries checked)."""
    stale = checked = 0
    truths = []
    for vb, start, stop in buses:
        with vb._lock:
            tr = vb.truth.arrays()
        reads = np.flatnonzero(tr["rd_addr"] == ct.STATE_BLOCK[0])
        index = {(int(r), int(i)): k for k, (r, i) in enumerate(zip(tr["rp_read"], tr["rp_id"]))}
        truths.append((start, stop, tr, reads, index))
    for ids, valid, position, stamps in records:
        for j, i in enumerate(ids):
            if not valid[j]:
                continue
            checked += 1
            s = stamps[j]
            src = next((t for t in truths if t[0] <= s <= t[1]), None)
            if src is None:
                stale += 1
                continue
            _, _, tr, reads, index = src
            before = reads[tr["rd_t"][reads] <= s]
            k = index.get((int(before[-1]), i)) if before.size else None
            if k is None or tr["rp_fate"][k] != INTACT:
                stale += 1
                continue
            counts = int.from_bytes(bytes(tr["rp_data"][k][6:10]), "little", signed=True)
            if abs(float(ct.counts_to_rad(counts)) - float(position[j])) > 0.5 * ct.RAD_PER_COUNT:
                stale += 1
    return stale, checked


def goals_out_of_limits(buses) -> tuple[int, int]:
    written = bad = 0
    lim = np.abs(ct.rad_to_counts([-LIMIT, LIMIT]) - ct.CENTER_COUNTS).max()
    for vb, _, _ in buses:
        with vb._lock:
            tr = vb.truth.arrays()
        g = tr["wr_addr"] == GAIN_GOAL_DATA_ADDR
        raw = tr["wr_data"][g, 2:6].copy().view("<i4")[:, 0]
        written += int(g.sum())
        bad += int(np.sum(np.abs(raw - ct.CENTER_COUNTS) > lim))
    return written, bad


if __name__ == "__main__":
    sys.exit(main())
