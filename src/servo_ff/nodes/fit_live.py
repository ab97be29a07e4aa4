"""The fit node's live data (``source: topics``): ``/joint_states`` of its joint (stamped by the servo node),
``servo/commands`` goals, ``servo_supply`` voltages and ``servo/p_gains`` gains sent to the servo (stamped on
arrival), each (t [s], value) in a deque, and the copy of the last ``window`` seconds a fit or an RLS update takes;
the gain of the data by the bag's rule (:func:`servo_ff.io.rosbag_goals.kp_from_gains`: a change of over 1 %
within it refused, naming its time), the supply by the bag's rule too (:func:`servo_ff.io.rosbag_supply.bag_supply`:
the ``vin`` parameter wins, else the ``servo_supply`` readings, a NaN one left out and counted), the joint's states
from two publishers refused by the bag's rule (:mod:`servo_ff.io.joint_publishers`). A message without
a finite reading of the joint, stamped out of the window or before the last state (out of order), or goals of the
wrong length are refused, one throttled line per topic; states going back more than ``OLD_STAMP`` (a restarted
stream) drop those before, said; a jump back of the clock drops the samples of the old time
(:mod:`servo_ff.ros.clock_jump`).

A mixin of :class:`~.fit_node.FitNode` (uses its parameter table and logger).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
from sensor_msgs.msg import BatteryState, JointState
from std_msgs.msg import Float64MultiArray

from servo_ff.io.joint_publishers import REMAP_HINT, NameSets
from servo_ff.io.rosbag_goals import kp_from_gains
from servo_ff.io.rosbag_supply import bag_supply
from servo_ff.ros.clock_jump import OLD_STAMP
from servo_ff.ros.common import TOPIC_JOINT_STATES, TOPIC_P_GAINS, TOPIC_SUPPLY, Throttle


class FitLiveData:
    """Live samples of the joint being fitted."""

    def _init_live(self) -> None:
        self.buffer, self.goals, self.volts = deque(), deque(), deque()  # (t [s], value) of the live data
        self._throttle = Throttle(5.0)  # a refused live message: one line per topic every 5 s
        self._fields_seen: dict[str, list[bool]] = {}  # per joint: a finite velocity / effort seen (NaN: stale)
        self.late_states = 0  # joint_states refused as out of order (stamped before the last one)
        self.p_gains: deque = deque()  # (t [s], gains in `joints` order) sent on servo/p_gains
        self.js_names: deque = deque()  # (t [s], the joints its message names) of each state in `buffer`

    def _on_js(self, msg: JointState, info: dict | None = None) -> None:
        """A /joint_states message (``info``: rclpy's message info, None before Iron)."""
        if self.table["source"] != "topics":
            return
        joint, t = self.table["joint"], msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9  # the servo's stamp
        if joint not in msg.name:  # another publisher's joints (a gripper, joint_state_publisher): not this fit's
            return
        k = list(msg.name).index(joint)
        now, window = self._now(), self.table["window"]  # refused, said: no finite reading, a stamp out of window
        if k >= len(msg.position) or not math.isfinite(msg.position[k]) or not now - window <= t <= now + OLD_STAMP:
            return self._refuse("joint_states", f"no finite {joint} position stamped within the window ({t:.3f} s)")
        if self._not_fresh(msg, k):  # a silent servo's held position (NaN velocity / effort): a gap, not a sample
            return self._refuse("joint_states", f"{joint} has no finite velocity or effort (no fresh reading)")
        back = self.buffer[-1][0] - t if self.buffer else 0.0
        if back > OLD_STAMP:  # the stream restarted on an earlier time (a sim reset): the states before go
            self.get_logger().warning(
                f"joint_states of {joint} went back {back:.3f} s (> {OLD_STAMP:g} s: a restarted stream): "
                f"the {len(self.buffer)} live states before it dropped"
            )
            self.buffer.clear()
            self.js_names.clear()
        elif back > 0:  # one late state (before: it wiped the whole buffer, 50 of ~500 samples kept)
            self.late_states += 1
            return self._refuse("joint_states", f"{joint} stamped {back:.3f} s before the last state, out of order "
                                f"({self.late_states} so far)")  # fmt: skip
        seq = info.get("publication_sequence_number") if info else None  # which publisher sent it (NameSets)
        self.js_names.append((t, tuple(msg.name), seq))
        self.buffer.append((t, float(msg.position[k])))  # after its publisher: a sample counted is one named
        self._trim(self.buffer)
        self._trim(self.js_names)

    def _mixed_publishers(self) -> str:
        """The line saying the fitted joint's states of the last ``window`` s come from several publishers (a replay's
        rule: :class:`~servo_ff.io.joint_publishers.NameSets`), or "" (before: every message naming the joint was
        taken, a servo node's and a mock broadcaster's position = goal mixed)."""
        now, sets = self._now(), NameSets()
        for t, names, seq in list(self.js_names):
            if t >= now - self.table["window"]:
                sets.add(names, f"{now - t:.3f} s ago", seq)
        why = sets.mixed(self.resolve_topic_name(TOPIC_JOINT_STATES), self.table["joint"])
        return f"live topics: {why}: not mixed, not fitted ({REMAP_HINT}, or wait a window)" if why else ""

    def _not_fresh(self, msg: JointState, k: int) -> bool:
        """Joint ``k``'s velocity or effort is not finite while that field was finite before (never finite: not
        recorded by the publisher, not a missing reading)."""
        stale, seen = False, self._fields_seen.setdefault(msg.name[k], [False, False])  # before: one pair for every
        for i, values in enumerate((msg.velocity, msg.effort)):  # joint: NaN effort refused after another's finite
            finite = k < len(values) and math.isfinite(values[k])
            seen[i] |= finite
            stale |= seen[i] and not finite
        return stale

    def _refuse(self, topic: str, why: str) -> None:  # before: such messages were dropped, or stored, unsaid
        self._throttle(topic, self.get_logger().warning, f"{topic} refused for the live fit: {why}")  # per topic

    def _on_goal(self, msg: Float64MultiArray) -> None:
        if self.table["source"] != "topics":
            return
        joints = [j for j in self.table["joints"] if j]  # read-only: fixed with the node
        if self.table["joint"] not in joints or len(msg.data) != len(joints) or not np.isfinite(msg.data).all():
            why = f"{len(msg.data)} values for `joints` {joints} (must name {self.table['joint']}), or not finite"
            return self._refuse("servo/commands", why)
        self.goals.append((self._now(), float(msg.data[joints.index(self.table["joint"])])))
        self._trim(self.goals)

    def _on_supply(self, msg: BatteryState) -> None:
        """Every reading is held: the fit judges them by the bag's rule (:meth:`_live_supply`)."""
        self.volts.append((self._now(), float(msg.voltage)))
        self._trim(self.volts)

    def _live_supply(self, volts: np.ndarray, say) -> tuple[float, str]:
        """(U_bat [V], its source) of the live data by a bag's rule for the servo node's own topic
        (:func:`~servo_ff.io.rosbag_supply.bag_supply`): the ``vin`` parameter when given (a servo_supply median
        over 10 % away ``say``-ed), else the mean of the snapshot's readings ``volts`` ((t [s], V) rows), those not
        finite left out and counted (the servo node's NaN before its first health read), one implausible refusing.
        ValueError when none is left or the last is older than ``supply_timeout`` (before: the vin parameter was
        not read, a NaN reading refused at arrival)."""
        topic = self.resolve_topic_name(TOPIC_SUPPLY)
        rows = [(t, u) for t, u in volts.tolist()]
        used, vin, source = bag_supply("live topics", rows, topic, "own", self.table["vin"] or None, None, say=say)
        if source == "given":
            return float(vin), "given"
        stale = self._supply_stale(np.array(used, dtype=np.float64).reshape(-1, 2))
        if stale:  # before: the last reading, however old (12.44 s with a 5 s window), fitted on unsaid
            raise ValueError(f"{stale}: no current supply voltage for Eq. 19 (give vin if it is known)")
        return float(np.mean([u for _, u in used])), f"live {topic}"

    def _on_p_gains(self, msg: Float64MultiArray) -> None:
        self.p_gains.append((self._now(), tuple(float(g) for g in msg.data)))
        horizon = self._now() - self.table["window"]
        while len(self.p_gains) > 1 and self.p_gains[1][0] < horizon:  # the gain in effect at the window's start stays
            self.p_gains.popleft()

    def _live_kp(self, t0: float, t1: float) -> tuple[float, str]:
        """(kp, its source) of live data from ``t0`` to ``t1`` [s]: the ``kp`` parameter when given (a gain sent
        before the data that differs said), else the gain sent on servo/p_gains. ValueError when the gain changes
        within the data by the bag's rule (:func:`~servo_ff.io.rosbag_goals.kp_from_gains`), counting the given kp
        as the gain before a first message within it (before: kp 8 → 16 mid-window fitted as kp 8, α̂ [5.87, 0,
        14.44, 1.97] instead of [10.57, 7.56, 2.97, 1.35], passing the gate), or when no gain is known."""
        joints = [j for j in self.table["joints"] if j] or None
        topic, given, joint = self.resolve_topic_name(TOPIC_P_GAINS), self.table["kp"], self.table["joint"]
        rows = [(int(t * 1e9), g) for t, g in list(self.p_gains)]
        kp, why, span = None, f"nothing on {topic}", (int(t0 * 1e9), int(t1 * 1e9))
        if rows:  # the bag's rule: the gain at the data's start and those sent within it
            kp, why = kp_from_gains("live topics", rows, topic, joint, joints, span, span[0])
        first = (rows[0][0] - span[0]) * 1e-9 if rows else math.inf  # [s] into the data
        if kp is not None and 0 < first <= t1 - t0:  # the first gain known was sent within the data
            if given <= 0:
                raise ValueError(
                    f"live topics: the first gain on {topic} came {first:.3f} s into the data: the gain before it is "
                    "unknown; give kp or fit a window after it"
                )
            if abs(kp - given) > 0.01 * given:
                raise ValueError(
                    f"live topics: {topic} sets the P gain of {joint!r} to {kp:g} at {first:.3f} s, within the data, "
                    f"kp {given:g} (given) before it: no one kp fits it; fit a window after the change"
                )
        if given > 0:
            if kp is not None and abs(given - kp) > 0.01 * kp:
                say = f"live topics: kp {given:g} (given) is used, not {kp:g} sent on {topic}"
                self._throttle("kp", self.get_logger().warning, say)
            return float(given), "given"
        if kp is None:
            raise ValueError(f"source topics needs the kp parameter (the servo gain during the data): {why}")
        return kp, f"sent on {topic}"

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _samples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(joint_states, goals, voltages) of the last ``window`` s as (N, 2) arrays of (t [s], value), one copy each
        (the executor appends meanwhile); older ones left out (before: a stream that stopped was fitted as live).
        Voltages: those of the window, or of the last ``supply_timeout`` s when that is longer (none: see
        :meth:`_supply_stale`; before: the last reading however old)."""
        now, window = self._now(), self.table["window"]
        js, gl, volts = (
            np.array(list(b), dtype=np.float64).reshape(-1, 2) for b in (self.buffer, self.goals, self.volts)
        )
        fresh = now - max(window, self.table["supply_timeout"])
        return js[js[:, 0] >= now - window], gl[gl[:, 0] >= now - window], volts[volts[:, 0] >= fresh]

    def _supply_stale(self, volts: np.ndarray) -> str:
        """Why the voltages ``volts`` of a :meth:`_samples` snapshot are not fit to use now (none, or the last one
        older than ``supply_timeout`` [s]: named with its age), or "" when they are. From the snapshot, not the
        live deque (before: a reading arriving between the two left the snapshot empty: an IndexError)."""
        now, bound = self._now(), self.table["supply_timeout"]
        if not len(volts):  # stale whatever came since; named by the age of the newest one older than the snapshot
            older = [t for t, u in list(self.volts) if now - t > bound and math.isfinite(u)]
            if not older:
                return "no valid servo_supply reading held"
            return f"the last servo_supply reading is {now - older[-1]:.1f} s old (supply_timeout {bound:g} s)"
        age = now - volts[-1, 0]
        return f"the last servo_supply reading is {age:.1f} s old (supply_timeout {bound:g} s)" if age > bound else ""

    def _drop_old_time(self) -> str:
        """The clock jumped back: the live samples of the old time go (a fit across the jump would pair goals and
        states of different moments), and the RLS takes samples from the new time on."""
        return self._drop_live("the old time")

    def _drop_live(self, of: str) -> str:
        """Every live sample goes (they are ``of`` another time or joint); what went, or "" when none was held."""
        n = len(self.buffer), len(self.goals), len(self.volts)
        self.buffer.clear()
        self.js_names.clear()
        self.goals.clear()
        self.volts.clear()
        self._fields_seen.clear()
        if self.refiner is not None:
            self.refiner.last_time = -math.inf
        if not any(n):
            return ""
        return f"the live samples of {of} dropped ({n[0]} joint_states, {n[1]} goals, {n[2]} voltages)"

    def _trim(self, buf: deque) -> None:
        horizon = self._now() - self.table["window"]
        while buf and buf[0][0] < horizon:
            buf.popleft()
