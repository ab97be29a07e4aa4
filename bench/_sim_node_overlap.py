"""Would a second thread lift the sim node's serial cap (issue 25)? Same process, no executor, blocks of periods
alternating (humanoid20, 500 Hz, 1 ms physics, the gait followed, as ``bench/_sim_node_rtf.py`` runs the node):

* ``serial``: the node's period as it is (``SimClock._tick_owned``: goal, layer, /clock, five messages);
* ``executor``: the node as it runs, its timers in the executor (``as_fast_batch`` periods per callback);
* ``layer``: the layer's own calls of a period (command, two physics steps, joint states, IMU, foot forces);
* ``thread``: the layer's calls of period k+1 in a worker thread while the main thread publishes period k's
  readings (double-buffered: the worker hands over its readings, the node publishes those);
* ``mj_thread``: only ``mujoco.mj_step`` (which releases the GIL) in the worker, every Python part in the main
  thread, period k's messages published during period k+1's physics steps.

Then a probe without the node: two ``mj_step`` per period called from one numba ``nogil`` kernel (libmujoco's C
function by pointer: no Python and no GIL for the whole physics of a period) in a worker, against Python work of
about a node period's extra in the main thread; ``cpu/wall`` is the process CPU time over wall time in the
overlapped run (≈ 1: the second core was not there to overlap on); before and after it, a control: two
independent GIL-free loops in two threads (their cpu/wall says whether this process had a second core).

    PYTHONPATH=src python bench/_sim_node_overlap.py [rounds]

Not a bench itself (``run_all.py`` skips files starting with ``_``); none of this is in the node.
"""

from __future__ import annotations

import ctypes
import glob
import os
import queue
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
BLOCK = 200  # periods per block


def make_node():
    """The MuJoCo sim node in this process (the bench's parameters), active, its loop stopped, the gait set."""
    from _sim_node_rtf import gait_message
    from rclpy.parameter import Parameter

    from servo_ff.nodes.sim_node import MujocoSimNode
    from servo_ff.ros.harness import RosHarness, wait_for

    values = {
        "urdf_path": str(ROOT / "urdf" / "humanoid20.urdf"),
        "servo_config": str(ROOT / "config" / "servos_humanoid.yaml"),
        "floating_base": True,
        "publish_clock": True,
        "real_time_factor": 0.0,
        "rate_hz": 500.0,
        "physics_dt": 0.001,
        "counts_per_rev": 4096,
        "latency": 1,
        "position_min": [-2.8],
        "position_max": [2.8],
    }
    ros = RosHarness(salt=93)
    node = ros.add(
        MujocoSimNode(
            "servo_sim", **ros.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]
        )
    )
    wait_for(lambda: node.active, 60.0, "the sim node active")
    ros._hold.set()  # the harness's executor thread pauses: from here on only this thread spins
    with ros._busy:
        node._stop_loop()
    node._on_trajectory(gait_message(0.0))
    return ros, node


class Snapshot:
    """What ``MujocoOutputs.publish`` reads of the servos, from a worker's readings (imu, foot forces)."""

    def __init__(self, servos):
        self.sim, self.imu_reading, self.forces = servos.sim, None, None

    def imu(self):
        return self.imu_reading

    def foot_forces(self):
        return self.forces


def variants(ros, node) -> dict:
    """The ways of running about ``BLOCK`` periods (see the module docstring): each returns the periods run."""
    import mujoco

    be, s = node.backend, node.backend.servos
    out, snap = be.outputs, Snapshot(s)

    def serial() -> None:
        out.servos = s
        for _ in range(BLOCK):
            node._tick_owned(False)

    def executor() -> int:  # as the node runs: its timers in the executor, as_fast_batch periods per callback
        out.servos, n0 = s, node.sim_time_ns
        node._start_loop()
        while node.sim_time_ns - n0 < 5 * BLOCK * node.period_ns:
            ros.executor.spin_once(timeout_sec=0.1)
        node._stop_loop()
        return (node.sim_time_ns - n0) // node.period_ns

    def layer() -> None:
        g = be.goal
        for _ in range(BLOCK):
            s.command(g)
            s.step(2)
            s.joint_state(), s.imu(), s.foot_forces()

    def publish(readings) -> None:  # period k's messages from its readings, stamped with its end
        js, snap.imu_reading, snap.forces = readings
        be.state = tuple(js)
        node.publish_state(node._stamp)

    req, done = queue.SimpleQueue(), queue.SimpleQueue()

    def layer_worker() -> None:
        while (goal := req.get()) is not None:
            s.command(goal)
            s.step(2)
            done.put((s.joint_state(), s.imu(), s.foot_forces()))

    def thread() -> None:
        out.servos = snap
        node.follow_trajectory(node.sim_time_ns * 1e-9)
        req.put(be.goal)
        for _ in range(BLOCK):
            readings = done.get()  # the state at the end of period k
            node._set_time(node.sim_time_ns + node.period_ns, False)
            node.follow_trajectory(node.sim_time_ns * 1e-9)  # period k+1's goal: a pure function of the time
            req.put(be.goal)
            publish(readings)
        done.get()

    mreq, mdone = queue.SimpleQueue(), queue.SimpleQueue()

    def mj_worker() -> None:
        m, d = s.model, s.data
        while mreq.get() is not None:
            mujoco.mj_step(m, d)
            mdone.put(1)

    def mj_thread() -> None:
        out.servos, prev = snap, None
        for _ in range(BLOCK):
            node.follow_trajectory(node.sim_time_ns * 1e-9)
            s.command(be.goal)
            s.before_step()
            mreq.put(1)
            if prev is not None:
                publish(prev)
            mdone.get()
            s.after_step()
            s.before_step()
            mreq.put(1)
            node._set_time(node.sim_time_ns + node.period_ns, False)
            mdone.get()
            s.after_step()
            prev = (s.joint_state(), s.imu(), s.foot_forces())
        publish(prev)

    for target in (layer_worker, mj_worker):
        threading.Thread(target=target, daemon=True).start()
    return {"serial": serial, "executor": executor, "layer": layer, "thread": thread, "mj_thread": mj_thread}


def node_rows(rounds: int) -> dict[str, float]:
    ros, node = make_node()
    runs = variants(ros, node)
    us = {k: [] for k in runs}
    for _ in range(rounds):
        for k, f in runs.items():
            t = time.perf_counter()
            n = f() or BLOCK
            us[k].append((time.perf_counter() - t) / n * 1e6)
    a = {k: np.array(v) for k, v in us.items()}
    print(f"## node period, same process, {rounds} rounds of {BLOCK} periods alternating (µs per period, median)")
    print(" ".join(f"{k} {np.median(v):.1f}" for k, v in a.items()))
    for k in ("serial", "executor", "thread", "mj_thread"):
        r = a["layer"] / a[k]
        print(f"  layer/{k} = {np.median(r):.3f} [{np.percentile(r, 25):.3f}–{np.percentile(r, 75):.3f}]")
    return {
        f"layer_over_{k}": float(np.median(a["layer"] / a[k])) for k in ("serial", "executor", "thread", "mj_thread")
    }


def nogil_probe(rounds: int, python_iterations: int = 1500, periods: int = 500) -> None:
    """Two mj_step per period from a numba nogil kernel in a worker, overlapped with Python work."""
    import mujoco
    import numba
    from mujoco_servos import make

    from servo_ff.dynamics.mujoco_servos import ServoOptions

    lib = ctypes.CDLL(glob.glob(os.path.join(os.path.dirname(mujoco.__file__), "libmujoco.so*"))[0])
    c_step = lib.mj_step
    c_step.argtypes, c_step.restype = [ctypes.c_void_p, ctypes.c_void_p], None

    @numba.njit(nogil=True)
    def steps(m, d, n):
        for _ in range(n):
            c_step(m, d)

    servos, _ = make(ServoOptions())
    m, d = servos.model._address, servos.data._address
    reference, _ = make(ServoOptions())
    for _ in range(50):
        mujoco.mj_step(reference.model, reference.data)
    steps(m, d, 50)
    assert np.array_equal(servos.data.qpos, reference.data.qpos) and np.array_equal(
        servos.data.qvel, reference.data.qvel
    )

    def work(n: int) -> int:
        x = 0
        for i in range(n):
            x += i * i
        return x

    def serial() -> None:
        for _ in range(periods):
            steps(m, d, 2)
            work(python_iterations)

    req, started, done = queue.SimpleQueue(), queue.SimpleQueue(), queue.SimpleQueue()

    def worker() -> None:
        while (handshake := req.get()) is not None:
            if handshake:
                started.put(1)  # the main thread waits for this: the worker has the GIL to enter the kernel
            steps(m, d, 2)
            done.put(1)

    threading.Thread(target=worker, daemon=True).start()

    def overlapped(handshake: bool) -> None:
        for _ in range(periods):
            req.put(handshake)
            if handshake:
                started.get()
            work(python_iterations)
            done.get()

    for handshake in (False, True):
        gain, util = [], []
        for _ in range(rounds):
            servos.reset()
            t = time.perf_counter()
            serial()
            a = time.perf_counter() - t
            servos.reset()
            c0, t = time.process_time(), time.perf_counter()
            overlapped(handshake)
            b = time.perf_counter() - t
            gain.append(a / b)
            util.append((time.process_time() - c0) / b)
            print(
                f"  serial {a / periods * 1e6:.1f} µs/period, overlapped {b / periods * 1e6:.1f}, "
                f"cpu/wall {util[-1]:.2f}"
            )
        how = "the worker started before the Python work" if handshake else "a queue each way"
        print(
            f"## GIL-free physics in a worker ({how}): serial/overlapped = {np.median(gain):.2f}, "
            f"cpu/wall {np.median(util):.2f}"
        )


def parallel_control(rounds: int, n: int = 20_000_000) -> None:
    """Whether this process gets a second core now: two independent numba nogil loops, in a row and in two
    threads (cpu/wall ≈ 2 with a free core, ≈ 1 without)."""
    import numba

    @numba.njit(nogil=True)
    def spin(k):
        x = 0.0
        for i in range(k):
            x += (i + 1.0) ** 0.5
        return x

    spin(10)
    gain, util = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        spin(n), spin(n)
        a = time.perf_counter() - t
        threads = [threading.Thread(target=spin, args=(n,)) for _ in range(2)]
        c0, t = time.process_time(), time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        b = time.perf_counter() - t
        gain.append(a / b)
        util.append((time.process_time() - c0) / b)
    print(
        f"## control, two independent GIL-free loops: in a row/threads = {np.median(gain):.2f}, "
        f"cpu/wall {np.median(util):.2f}"
    )


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    ratios = node_rows(rounds)
    parallel_control(3)
    nogil_probe(5)
    parallel_control(3)
    print("RESULT " + " ".join(f"{k}={v:.3f}" for k, v in ratios.items()))
    sys.stdout.flush()
    os._exit(0)  # the paused executor thread: no orderly shutdown needed for a measurement


if __name__ == "__main__":
    sys.exit(main())
