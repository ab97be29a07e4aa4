"""The rig of the hardware-node safety tests: a virtual Dynamixel bus (truth record on) with pendulum loads, a
harness with a client on joint_states / diagnostics / commands, and readers of what the bus received. The recovery
test also runs it on the Protocol 1.0 and Feetech STS virtual buses (``protocol``; truth record on 2.0 only)."""

from __future__ import annotations

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from nodes_harness import RosHarness, wait_for
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from servo_ff.bus import control_table as ct
from servo_ff.bus.bus_types import GAIN_GOAL_DATA_ADDR
from servo_ff.bus.families import FAMILIES, load
from servo_ff.bus.faults import INTACT
from servo_ff.nodes.hardware_node import HardwareNode

JOINTS, IDS = ["hip", "knee"], [1, 2]
UP = [1.2, -1.0]  # rad: held there with torque on, each falls ≈ 0.8–1.2 rad with torque off (0.25 kg at 0.1 m)
COUNT = ct.RAD_PER_COUNT  # rad per position count
PROTOCOLS = tuple(FAMILIES)  # every family's virtual bus with its default servo


def node_params(link, **extra) -> list[Parameter]:
    values = {
        "joints": JOINTS,
        "ids": IDS,
        "port": str(link),
        "servo": "mx106",
        "rate_hz": 100.0,
        "latency_timer_ms": 1.0,
        # the virtual bus is a thread of this process: on a loaded box it answers late, and a 20 ms margin made a
        # scan miss a servo ('found ids [2], MISSING ids [1]') or stale cycles count the bus lost (shake runs)
        "timeout_ms": 100.0,
        "retries": 3,
        "position_min": [-2.0],
        "position_max": [2.0],
        "kp": [32.0],
        "diagnostics_period": 0.2,
        "health_period": 0.1,
        "reconnect_period": 0.2,
        "stale_cycles": 1000,
        "max_reply_age": 30.0,
        **extra,
    }
    return [Parameter(k, value=v) for k, v in values.items()]


class Rig:
    """A virtual bus (truth record on), a harness and a client listening to joint_states and diagnostics."""

    def __init__(self, tmp_path, salt: int, loads, protocol: str = "dxl2", model: str | None = None, **bus_options):
        self.link = tmp_path / "ttyDXL"
        self.protocol = protocol
        bus_class, self.model = load(protocol, "virtual_bus"), model or FAMILIES[protocol].default_servo
        truth = protocol == "dxl2"
        self.bus = bus_class(ids=IDS, model=self.model, loads=loads, link=str(self.link), truth=truth, **bus_options)
        self.bus.start()
        self.h = RosHarness(salt=salt)
        self.client = self.h.make_node("safety_client")
        self.states: list[JointState] = []
        self.diags: list[DiagnosticArray] = []
        self.client.create_subscription(JointState, "joint_states", self.states.append, 100)
        self.client.create_subscription(DiagnosticArray, "/diagnostics", self.diags.append, 100)
        self.pub = self.client.create_publisher(Float64MultiArray, "servo/commands", 10)
        self.pub_names = self.client.create_publisher(JointState, "servo/joint_command", 10)

    def node(self, name: str, node_class: type[HardwareNode] = HardwareNode, **extra) -> HardwareNode:
        kw = self.h.node_kwargs()
        extra = {"servo": self.model, "protocol": self.protocol, **extra}
        return self.h.add(node_class(name, **kw, parameter_overrides=node_params(self.link, **extra)))

    def change(self, name: str, transition: int) -> bool:
        cli = self.client.create_client(ChangeState, f"{name}/change_state")
        return self.h.call(cli, ChangeState.Request(transition=Transition(id=transition)), timeout=15.0).success

    def state_of(self, name: str) -> str:
        cli = self.client.create_client(GetState, f"{name}/get_state")
        return self.h.call(cli, GetState.Request()).current_state.label

    def torque(self) -> np.ndarray:
        """Torque on per servo (1/0): Torque Enable, and on Protocol 1.0 a Torque Limit (34, "PWM Limit") above 0 too
        (the 1.0 firmware's alarm shutdown sets it to 0 and leaves Torque Enable at 1)."""
        on = self.bus.regs.get("Torque Enable").copy()
        return on * (self.bus.regs.get("PWM Limit") > 0) if self.protocol == "dxl1" else on

    def physics(self) -> dict[str, np.ndarray]:
        return self.bus.snapshot()

    def truth(self) -> dict[str, np.ndarray]:
        with self.bus._lock:
            return self.bus.truth.arrays()

    def status(self, joint: str):
        for d in reversed(self.diags):
            for s in d.status:
                if s.name.endswith(f": {joint}"):
                    return s
        return None

    def node_by_name(self, name: str) -> HardwareNode:
        return next(n for n in self.h.nodes if n.get_name() == name)

    def close(self) -> None:
        self.h.shutdown()
        self.bus.stop()


def hold_goal_written_after(tr: dict[str, np.ndarray], t_request: float, dxl_id: int) -> tuple[int, int, float]:
    """From the bus's truth record: (goal counts of the first goal write to ``dxl_id`` after ``t_request``, the
    position counts of the last intact state reply of ``dxl_id`` sent before that write, when that reply was sent)."""
    w = np.flatnonzero((tr["wr_t"] > t_request) & (tr["wr_id"] == dxl_id) & (tr["wr_addr"] == GAIN_GOAL_DATA_ADDR))
    assert w.size, f"no goal written to id {dxl_id} after the request"
    w = w[0]
    goal = int.from_bytes(bytes(tr["wr_data"][w][2:6]), "little", signed=True)  # P gain (2 bytes), goal (4)
    state_reads = tr["rd_addr"][tr["rp_read"]] == ct.STATE_BLOCK[0]
    r = np.flatnonzero(state_reads & (tr["rp_id"] == dxl_id) & (tr["rp_fate"] == INTACT) & (tr["rp_t"] < tr["wr_t"][w]))
    assert r.size, f"no state reply of id {dxl_id} before the goal write"
    r = r[-1]
    pos = int.from_bytes(bytes(tr["rp_data"][r][6:10]), "little", signed=True)  # current (2), velocity (4), pos
    return goal, pos, float(tr["rp_t"][r])


def fallen_at_rest(rig: Rig, start: np.ndarray, by: float = 0.3):
    """Wait until every joint fell more than ``by`` rad from ``start`` and stopped; its resting position."""

    def rest():
        s = rig.physics()
        return [s["theta"]] if (np.abs(s["theta"] - start) > by).all() and (np.abs(s["dtheta"]) < 1e-3).all() else None

    return wait_for(rest, 20.0, "the joints to fall with torque off and come to rest")[0]


def assert_holds_fresh_reading(rig: Rig, t_request: float, before: np.ndarray) -> None:
    """The goal written on activate is the reading taken after the request (within one count), not ``before``."""
    tr = rig.truth()
    for k, i in enumerate(IDS):
        goal, pos, t_reply = hold_goal_written_after(tr, t_request, i)
        assert t_reply > t_request, f"id {i}: the goal written on activate comes from a reading older than activate"
        assert abs(goal - pos) <= 1, f"id {i}: goal {goal} counts != fresh reading {pos} counts"
        fell = abs(float(ct.counts_to_rad(goal)) - before[k])  # rad between the old reading and the goal
        assert fell > 0.3, f"id {i}: goal {goal} is where the joint was before it fell"


def lift(rig: Rig, node: HardwareNode | None = None) -> None:
    """The joints held UP with torque on (by ``node``, active, or by a node that exits with on_exit=hold)."""
    helper = node or rig.node("servo_lift", on_exit="hold")
    servos = sum(isinstance(n, HardwareNode) for n in rig.h.nodes)
    wait_for(lambda: helper.active and rig.pub.get_subscription_count() >= servos, 20.0, "a node active")
    rig.pub.publish(Float64MultiArray(data=UP))
    wait_for(lambda: np.allclose(rig.physics()["theta"], UP, atol=0.03), 20.0, "the joints up")
    if node is None:
        rig.h.remove(helper)
