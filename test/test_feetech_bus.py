"""FeetechBus (``FAMILIES["sts"]``, on scservo_sdk) against the virtual STS bus: positions track goals through the
physics in SI units, P gains written only when they change, replies belong to their transaction (checked against
the bus's truth record), a silent servo is skipped and re-probed, bad goals are never written, the overload and
its reboot equivalent, and bad input refused with one clear line."""

import logging
import os
import select
import threading
import time
import tty

import numpy as np
import pytest
from dxl_harness import audited_cycles, late_read_then_next, losing_one_gain_write

from servo_ff.bus import control_table as ct
from servo_ff.bus import protocol1 as p1
from servo_ff.bus import truth as tr
from servo_ff.bus.bus_interface import bus_class, make_bus
from servo_ff.bus.bus_types import BusConfig, BusError, GoalRejected
from servo_ff.bus.feetech import status
from servo_ff.bus.feetech.bus import STATE_ADDR, FeetechBus
from servo_ff.bus.feetech.virtual_bus import StsVirtualBus
from servo_ff.bus.virtual_bus import Faults, ServoLoad
from servo_ff.models.motor import duty_torque
from servo_ff.models.params import P_KP

STS = ct.control_table("sts3215")
IDS = [1, 2, 3, 4, 5, 6]
RPC = STS.rad_per_count


def config(device, ids=IDS, **kw) -> BusConfig:
    kw.setdefault("latency_timer_ms", 1.0)
    kw.setdefault("timeout_ms", 20.0)
    return BusConfig(port=device, ids=ids, model="sts3215", protocol="sts", **kw)


def vbus(ids=IDS, **kw) -> StsVirtualBus:
    kw.setdefault("return_delay", 0)
    kw.setdefault("dt_max", 0.002)  # physics sub-step (CPU of a shared machine; the law is not under test here)
    return StsVirtualBus(ids=ids, **kw)


def state_values(payload: bytes) -> np.ndarray:
    """(position, velocity) [rad, rad/s] of a 6-byte state reply, as the bus computes them (sign-magnitude)."""
    raw = np.frombuffer(payload[:4], dtype="<u2")
    pos = int(STS.decode("Present Position", int(raw[0])))
    vel = int(STS.decode("Present Velocity", int(raw[1])))
    return np.array([(pos - STS.center) * RPC, vel * STS.velocity_unit])


def settle(bus, goals, p_gains=None, timeout=5.0, tol=0.01):
    t_end = time.monotonic() + timeout
    while True:
        s = bus.cycle(goals, p_gains)
        done = s.valid.all() and np.abs(s.position - goals).max() < tol and np.abs(s.velocity).max() < 0.05
        if done or time.monotonic() > t_end:
            return s


def test_registered_bus_tracks_goals_in_si_units():
    """make_bus(protocol sts) is a FeetechBus; goals [rad] reach the registers as counts, the physics moves the
    servos there, and the state comes back in rad, rad/s and N·m (Present Load: the drive duty, sign in bit 10;
    effort = the model's motor torque kt·(duty·V_in − kt·θ̇)/R: a pendulum held on either side pulls with opposite
    signs)."""
    assert bus_class("sts") is FeetechBus
    with vbus(loads=ServoLoad.pendulum(0.3, 0.1)) as vb:
        with make_bus(config(vb.device)) as bus:
            assert isinstance(bus, FeetechBus) and bus.connect() == (IDS, [])
            bus.setup()
            bus.torque(True)
            goals = np.array([-1.2, -0.8, -0.5, 0.5, 0.8, 1.2])
            s = settle(bus, goals, tol=0.03)  # a 0.3 kg pendulum at 0.1 m sags ≤ 0.27/17.7 rad under the P law
            assert s.valid.all() and np.isnan(s.current).all()
            np.testing.assert_allclose(s.position, goals, atol=0.03)  # rad
            np.testing.assert_array_equal(vb.regs.get("Goal Position"), np.rint(goals / RPC + 2048))
            np.testing.assert_allclose(s.position, vb.snapshot()["theta"], atol=3 * RPC)
            duty = vb.regs.get("Present Load") * 1e-3
            torque = duty_torque(duty, 7.4, s.velocity, STS.kt, STS.R)
            np.testing.assert_allclose(s.effort, torque, atol=0.02)  # N·m
            np.testing.assert_allclose(s.effort, vb.snapshot()["tau_m"], atol=0.02)  # the emulator's motor torque
            assert (np.sign(s.effort) == np.sign(np.sin(goals))).all()  # gravity pulls down, the motor holds up
            assert np.abs(s.effort).min() > 0.03  # gravity beyond the static friction (0.05 N·m)
            h = bus.read_health()
            assert h.valid.all() and (h.hw_error == 0).all()
            np.testing.assert_allclose(h.voltage, 7.4)
            np.testing.assert_allclose(h.temperature, 30.0)


def test_p_gains_are_written_only_when_they_change():
    with vbus() as vb:
        with FeetechBus(config(vb.device, p_gain=True)) as bus:
            bus.connect()
            bus.setup()
            goals = np.zeros(6)

            def writes():
                bus.read_item(1, "Lock")  # answered: every earlier instruction has been served
                return vb.stats.instructions.get("SYNC_WRITE", 0)

            w0, t0 = writes(), bus.transactions
            for _ in range(10):
                bus.cycle(goals, np.full(6, 32))
            assert bus.transactions - t0 == 21 and writes() - w0 == 11  # the gains once, then goals only
            kp = np.full(6, 32)
            kp[1] = 20
            w0, t0 = writes(), bus.transactions
            bus.cycle(goals, kp)
            assert bus.transactions - t0 == 3 and writes() - w0 == 2
            assert vb.regs.get("Position P Gain").tolist() == [32, 20, 32, 32, 32, 32]
            assert vb.p[1, P_KP] == 20.0  # bam kp = P coefficient (p_gain_per_kp 1)
            assert int(ct.kp_to_p_gain(20.0, STS)) == 20 and STS.p_gain_max == 254
            assert vb.regs.flash[1, 21] == 32  # Lock stays 1: the cycle's gains are not saved
            with pytest.raises(ValueError, match=r"p_gains: need 6 integers in 0\.\.254"):
                bus.cycle(goals, np.full(6, 255))


def test_a_lost_p_gain_write_is_read_back_at_the_health_read_and_sent_again(caplog):
    """One SYNC_WRITE of the P coefficient (21) lost on the wire: the health read after a gain write reads 21 back
    (one 1-byte sync read, only then), the next cycle writes the lost gain again, one warning per servo; cycles
    keep 2 transactions (before: never sent again — after 159 cycles and 3 health reads the registers still read
    [32, 32] against kp 64 asked)."""
    ids = [1, 2]
    with losing_one_gain_write(StsVirtualBus, 21)(ids=ids, return_delay=0, dt_max=0.002) as vb:
        with FeetechBus(config(vb.device, ids=ids, p_gain=True)) as bus:
            bus.connect()
            bus.setup()
            goals = np.zeros(2)
            bus.cycle(goals, [32, 32])
            t0 = bus.transactions
            bus.read_health()
            assert bus.transactions - t0 == 2  # the health block, then the gains just written read back
            t0 = bus.transactions
            bus.read_health()
            assert bus.transactions - t0 == 1  # nothing written since: no read-back
            vb.lose_next = True
            t0 = bus.transactions
            for _ in range(5):
                bus.cycle(goals, [64, 64])
            assert bus.transactions - t0 == 11  # the gains once (lost), then goals only
            assert [bus.read_item(i, "Position P Gain") for i in ids] == [32, 32]
            with caplog.at_level(logging.WARNING):
                t0 = bus.transactions
                assert bus.read_health().valid.all()
                assert bus.transactions - t0 == 2
            lines = [r.getMessage() for r in caplog.records if "lost write" in r.getMessage()]
            assert [line.split(":")[0] for line in lines] == ["id 1", "id 2"], lines
            assert "Position P Gain (21) reads 32, 64 was written" in lines[0], lines
            t0 = bus.transactions
            bus.cycle(goals, [64, 64])
            assert bus.transactions - t0 == 3  # sent again
            assert [bus.read_item(i, "Position P Gain") for i in ids] == [64, 64]
            bus.read_health()
            t0 = bus.transactions
            bus.read_health()
            for _ in range(5):
                bus.cycle(goals, [64, 64])
            assert bus.transactions - t0 == 1 + 10  # in force, checked: nothing more


def test_setup_raises_status_return_level_0_before_any_acknowledged_write(caplog):
    """Servos at Status Return Level 0 (PING and READ answered only): set-up reads the level, writes 1 without waiting
    for a status (Lock stays 1: not saved, as Return Delay Time), then torque off …; one line per servo (before: the
    level was never set, the Torque Enable write waited for a status that never came: 'setup of id 1 failed after
    2 attempt(s): … There is no status packet!')."""
    ids = [1, 2]
    vb = vbus(ids=ids)
    vb.regs.set("Status Return Level", 0)
    vb.regs.flash[:, 8] = 0  # saved so: a power cycle brings it back
    with vb:
        with FeetechBus(config(vb.device, ids=ids, retries=1)) as bus:
            assert bus.connect() == (ids, [])
            with caplog.at_level(logging.INFO):
                bus.setup()
            assert vb.regs.get("Status Return Level").tolist() == [1, 1]
            assert vb.regs.flash[:, 8].tolist() == [0, 0]  # acts now, not saved over a power-off
            lines = [r.getMessage() for r in caplog.records if "Status Return Level 0 -> 1" in r.getMessage()]
            assert [line.split(":")[0] for line in lines] == ["id 1", "id 2"], lines
            bus.torque(True)
            assert vb.regs.get("Torque Enable").tolist() == [1, 1]
            assert settle(bus, np.array([0.3, -0.3]), tol=0.03).valid.all()


def test_late_dropped_and_corrupt_replies_never_reported_as_fresh_state():
    """Replies held back 20 ms (margin 4 ms) arrive in later cycles; the truth record says which transaction each
    reply answered: no valid entry may carry another transaction's data, and every stamp is after the send."""
    ids = list(range(1, 9))
    faults = Faults(drop_rate=0.03, corrupt_rate=0.003, late_rate=0.008, late_s=0.02, seed=11)
    with vbus(ids, faults=faults, loads=ServoLoad.fixed_inertia(0.002), truth=True) as vb:
        with FeetechBus(config(vb.device, ids, timeout_ms=4.0, skip_after=1000)) as bus:
            # moving servos: every transaction's payload differs. Torque set in the emulator (the lossy bus is what is
            # tested): a write through the bus waits 4 ms per attempt, which a loaded host's scheduling of the emulator
            # thread exceeded (3 attempts unanswered in 6-12 ms: 1 of 20 set-ups at load 9)
            vb.regs.set("Torque Enable", 1)
            goals = lambda k: np.full(len(ids), 0.8 * np.sin(0.2 * k))  # noqa: E731
            recs, audit = audited_cycles(vb, bus, STATE_ADDR, state_values, goals, need=200)
    late = sum(s.late for s in bus.stats.values())
    assert vb.stats.held > 0 and late > 0, (vb.stats, bus.port.counters)  # the scenario did produce late replies
    assert audit.stale_valid == 0, audit.examples
    assert audit.before_sent == 0 and audit.checked > 200, (audit.checked, len(recs))
    assert sum(s.corrupt for s in bus.stats.values()) > 0


def test_a_reply_later_than_its_read_never_answers_the_next_read():
    """Every reply held back 20 ms (margin 4 ms) while Return Delay Time (0) is read: that read fails or reads 0;
    the next read, of Temperature Limit (70, the same length), answers 70 (or fails while the held replies drain).
    Before, the failed read was forgotten one margin after its window, and a retry's late reply answered the next."""
    with vbus([1]) as vb:
        with FeetechBus(config(vb.device, [1], timeout_ms=4.0, retries=5)) as bus:
            bus.connect()  # (5 retries: a 4 ms margin on a loaded machine)
            reads = late_read_then_next(vb, bus, "Return Delay Time", "Temperature Limit")
    assert all(first in (0, None) and then == 70 for first, then in reads), reads


def test_silent_servo_is_skipped_then_reprobed_and_counted_as_timeouts():
    with vbus(truth=True) as vb:
        cfg = config(vb.device, timeout_ms=30.0, skip_after=3, probe_period_s=0.05)
        # (torque on below: the servos move, so a stale entry would differ from its own reply)
        with FeetechBus(cfg) as bus:
            bus.connect()
            bus.setup()
            bus.torque(True)
            vb.set_silent(6)  # the last position: each miss costs a whole slot + margin
            st = bus.stats[6]
            for _ in range(50):
                s = bus.cycle(np.zeros(6))
                assert not s.valid[5]
                if st.skipping:
                    break
            assert st.skipping and st.timeouts >= 3 and st.corrupt == 0 and bus.skipped == [6]
            assert "re-probed every 0.05 s" in bus.servo_status(6)
            timeouts, n_reads, served = st.timeouts, len(vb.truth.rd_t), bus.state_reads
            t0, tr0, probes0 = time.monotonic(), bus.transactions, st.probes
            cycles, recs = 0, []
            while time.monotonic() - t0 < 0.2 or cycles < 20:
                s = bus.cycle(np.full(6, 0.3 * np.sin(0.3 * cycles)))  # moving: every read's payload differs
                recs.append((bus.state_reads - served, s.ids, s.valid, np.stack([s.position, s.velocity], 1), s.stamps))
                cycles += 1
                assert not s.valid[5] and np.isnan(s.position[5])
            probes = st.probes - probes0
            assert probes >= 1 and st.timeouts == timeouts  # not asked; probes (PING) are not sync-read timeouts
            assert bus.transactions - tr0 == 2 * cycles + probes  # sync read + sync write, plus the probes
            assert set(vb.truth.rd_n[n_reads:]) <= {5}  # the sync reads asked 5 servos only
            # the five that answer are this read's own replies (the block of a 5-servo read, not a stale dict)
            audit = tr.audit_states(vb.truth.arrays(), recs, STATE_ADDR, state_values, offset=served)
            assert audit.stale_valid == 0 and audit.checked >= 4 * cycles, audit.examples
            vb.set_silent(6, False)
            t0 = time.monotonic()
            while st.skipping and time.monotonic() - t0 < 5.0:
                s = bus.cycle(np.zeros(6))
            assert not st.skipping and bus.servo_status(6) == "ok"
            for _ in range(20):  # (a stall of this shared machine can cost a cycle)
                s = bus.cycle(np.zeros(6))
                if s.valid.all():
                    break
            assert s.valid.all() and vb.truth.rd_n[-1] == 6


def test_bad_goals_are_never_written_and_setup_checks_the_servo_limits():
    with vbus([1, 2]) as vb:
        with FeetechBus(config(vb.device, [1, 2], timeout_ms=100.0)) as bus:
            bus.connect()
            bus.setup()
            writes = vb.stats.instructions.get("SYNC_WRITE", 0)
            for bad in (5e6, -5e6, 1e300, float("inf"), float("nan"), 3.2):
                with pytest.raises(GoalRejected):
                    bus.cycle([0.0, bad])
            assert vb.stats.instructions.get("SYNC_WRITE", 0) == writes
            bus.write_item(2, "Max Position Limit", 3000)  # saved: unlock, write, lock
            assert int.from_bytes(vb.regs.flash[1, 11:13].tobytes(), "little") == 3000
            assert vb.regs.get("Lock").tolist() == [1, 1]
            with pytest.raises(ValueError, match="'Present Position' is read-only"):
                bus.write_item(2, "Present Position", 5)
        cfg = config(vb.device, [1, 2], joint_limits={2: (-1.0, 2.0)}, timeout_ms=100.0)
        with (
            FeetechBus(cfg) as bus,
            pytest.raises(GoalRejected, match=r"id 2: joint limits \(-1, 2\) rad exceed the servo's Min/Max"),
        ):
            bus.setup()


def test_overload_is_reported_and_cleared_by_the_reboot_equivalent():
    """An STS reply with status bits set still carries valid data; the overload shows in read_health() in the
    Hardware Error Status layout; reboot() (torque off, goal = present) clears it, torque comes back."""
    with vbus([1, 2, 3], loads=ServoLoad.fixed_inertia(0.002)) as vb:
        with FeetechBus(config(vb.device, [1, 2, 3])) as bus:
            bus.connect()
            bus.setup()
            bus.torque(True)
            settle(bus, np.array([0.0, 0.3, 0.5]))
            vb.inject_overload(3)
            s = bus.cycle(np.array([0.0, 0.3, 0.5]))
            assert s.valid.all() and bus.status_bits[3] == status.OVERLOAD
            h = bus.read_health()
            assert h.hw_error.tolist() == [0, 0, ct.HW_OVERLOAD] and bus.hardware_error(3) == ct.HW_OVERLOAD
            assert h.torque.tolist() == [1, 1, 0]  # Torque Enable (40) in the health read
            assert ct.hardware_error_text(int(h.hw_error[2])) == "overload"
            assert vb.enable.tolist() == [1.0, 1.0, 0.0]  # Unloading Condition: torque released
            bus.reboot(3)
            assert vb.hw_error[2] == 0 and vb.enable[2] == 0.0
            assert abs(vb.regs.value(2, "Goal Position") - vb.regs.value(2, "Present Position")) <= 2
            bus.torque(True, ids=[3])
            assert vb.enable.tolist() == [1.0, 1.0, 1.0] and bus.read_health().hw_error.tolist() == [0, 0, 0]
            vb.brown_out(2)  # restarts by itself: torque off, no status bit (what the hardware node looks for)
            h = bus.read_health()
            assert h.torque.tolist() == [1, 0, 1] and h.hw_error.tolist() == [0, 0, 0] and h.valid.all()


def test_unknown_model_number_names_the_id_the_number_and_the_known_tables():
    with vbus([1, 2, 3]) as vb:
        vb.regs.set("Model Number", 1234, [1])
        with (
            FeetechBus(config(vb.device, [1, 2, 3])) as bus,
            pytest.raises(
                BusError,
                match=r"id 2 on \S+ reports model number 1234: no control table for it over protocol sts; "
                r"known: 777 \(sts3215\), 2825 \(sts3250\)$",
            ),
        ):
            bus.connect()


def test_bad_baud_and_wrong_model_are_refused_at_configuration():
    with pytest.raises(ValueError, match=r"^baud 2000000 is not a STS3215 rate \(its Baud Rate codes\); valid: "):
        config("/dev/null", baud=2_000_000)
    with pytest.raises(ValueError, match="valid: 1000000, 500000, 250000, 128000, 115200, 76800, 57600, 38400$"):
        config("/dev/null", baud=9600)
    with pytest.raises(ValueError, match=r"model sts3215 \(STS3215\) speaks protocol sts, not dxl2"):
        BusConfig(port="/dev/null", ids=[1], model="sts3215")
    with pytest.raises(ValueError, match=r"joint_limits\[1\] = \(-4, 4\) rad exceeds the STS3215 position range"):
        config("/dev/null", [1], joint_limits={1: (-4.0, 4.0)})
    with pytest.raises(BusError, match="cannot open Feetech port '/nonexistent/tty'"):
        FeetechBus(config("/nonexistent/tty", [1])).open()
    assert config("/dev/null", baud=76800).baud == 76800  # an STS rate the stock SDK's PortHandler refuses


# ------------------------------------------------------------------ garbled replies, deterministic
FAKE_MARGIN_MS = 1000.0  # the fake answers from a Python thread: on a loaded box it can wake > 20 ms late


class FakeStsServos:
    """A pty whose 'servos' answer every SYNC_READ with ``replies`` (bytes): deterministic faults."""

    def __init__(self, replies: bytes):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.device = os.ttyname(self.slave)
        self.replies = replies
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        dec = p1.StreamDecoder1()
        while not self._stop.is_set():
            if select.select([self.master], [], [], 0.01)[0]:
                for p in dec.feed(os.read(self.master, 1024)):
                    if p.code == p1.INST_SYNC_READ:
                        os.write(self.master, self.replies)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(2.0)
        os.close(self.master)
        os.close(self.slave)


def _reply(i: int, pos: int = 2048, err: int = 0) -> bytes:
    return p1.encode(i, err, pos.to_bytes(2, "little") + bytes(4))


def _garble(packet: bytes, at: int) -> bytes:
    b = bytearray(packet)
    b[at] ^= 0x5A
    return bytes(b)


@pytest.mark.parametrize("garbled_at,what", [(6, "data byte"), (2, "ID byte")])
def test_one_checksum_error_marks_only_its_own_servo_corrupt(garbled_at, what):
    """Replies: 1 ok, 2 garbled, 3 ok, 4 and 5 missing → 2 corrupt (by its ID byte, or as the only empty slot
    between 1 and 3), 4 and 5 timeouts."""
    with FakeStsServos(_reply(1) + _garble(_reply(2), garbled_at) + _reply(3)) as fake:
        with FeetechBus(config(fake.device, [1, 2, 3, 4, 5], timeout_ms=FAKE_MARGIN_MS)) as bus:
            s = bus.read_state()
            assert s.valid.tolist() == [True, False, True, False, False]
            got = {i: (st.corrupt, st.timeouts) for i, st in bus.stats.items()}
            assert got == {1: (0, 0), 2: (1, 0), 3: (0, 0), 4: (0, 1), 5: (0, 1)}, what
            assert bus.port.scanner.stats.crc_errors == 1


def test_an_impossible_len_holds_nothing_back_and_implausible_values_are_corrupt():
    """Reply 1 arrives with LEN 200 (garbled): replies 2 and 3 right behind it are still read in time. Reply 3
    passes its checksum but reads position 0x9000 (bits a single-turn STS never sets): corrupt, not valid. Reply 2
    carries the overload bit: its data is valid."""
    bad = bytearray(_reply(1))
    bad[3] = 200
    with FakeStsServos(bytes(bad) + _reply(2, 2100, status.OVERLOAD) + _reply(3, 0x9000)) as fake:
        with FeetechBus(config(fake.device, [1, 2, 3], timeout_ms=FAKE_MARGIN_MS)) as bus:
            s = bus.read_state()
            assert s.valid.tolist() == [False, True, False]
            assert s.position[1] == pytest.approx(52 * RPC) and bus.status_bits[2] == status.OVERLOAD
            assert bus.stats[1].corrupt == 1 and bus.stats[3].corrupt == 1 and bus.stats[2].ok == 1
