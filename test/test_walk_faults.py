"""servo_walk_node's faults and edges (docs/walking.md, *Faults and limits*): its engine process killed (SIGKILL)
or stopped (SIGSTOP) mid-walk — the node stays up and answers, says it in one ERROR line, publishes a continuous stop
to the stance and walks again on a new process after a cmd_vel; the worker's own hang and close; a ``horizon`` the
messages cannot live with refused, a long one whose messages start at now; balance offsets that switch on and off
ramped, not stepped; the start-up waits said. The fault tests run the node on the harness's executor over DDS on the
wall clock; the others drive it by hand on a fake clock, as test_nodes_walk.py does."""

from __future__ import annotations

import math
import os
import signal
import sys
import time

import numpy as np
import pytest

pytest.importorskip("placo")
rclpy = pytest.importorskip("rclpy")

from nodes_harness import rosout_matched, watched  # noqa: E402

from servo_ff.ros.harness import RosHarness, wait_for  # noqa: E402

TICK = 0.008  # [s] the feed-forward node's period on the OP3


def _walk_node(ros: RosHarness, name: str, add: bool = False, node_class=None, **values):
    from rclpy.parameter import Parameter

    from servo_ff.io.paths import share_file
    from servo_ff.nodes.walk_node import WalkNode

    values = {"urdf_path": str(share_file("urdf", "op3.urdf")), **values}
    overrides = [Parameter(k, value=v) for k, v in values.items()]
    node = (node_class or WalkNode)(name, **ros.node_kwargs(), parameter_overrides=overrides)
    return ros.add(node) if add else node


def _followed(received: list, walk, t_from: float) -> np.ndarray:
    """The desired positions (ticks, joints) the feed-forward node follows from ``t_from`` [s] every 8 ms to the end:
    each message (bytes) of ``received`` parsed as it parses it and followed from its first point (its stamp) on,
    replacing the one before."""
    from servo_ff.ros.desired_trajectory import parse_trajectory

    index = {j: i for i, j in enumerate(walk.joints)}
    followed = [parse_trajectory(data, index, 0.0) for data in received]
    out = []
    for t in np.arange(t_from, followed[-1].t0 + followed[-1].times[-1], TICK):
        live = [tr for tr in followed if tr.t0 <= t]
        if live:
            out.append(live[-1].sample(t)[0])
    return np.array(out)


def _kv(status) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def _errors(logs: list, walk) -> list[str]:
    return [m.msg for m in logs if m.level >= 40 and m.name.endswith(walk.get_name())]


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGSTOP"])
def test_a_lost_engine_process_is_one_error_a_continuous_stop_and_a_new_process_that_walks_again(sig):
    """Before: SIGKILL of the worker mid-walk ended the node with a traceback two messages later (the feed-forward
    node held a frozen mid-step pose); SIGSTOP blocked its executor in a 120 s wait (no message, parameter services
    unanswered, nothing said). Now: the node answers a parameter get meanwhile, says it once (ended / hung), its
    messages go on, continuous, to the stance at rest (the published plan cut at now), a new process starts and a
    cmd_vel walks again."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from geometry_msgs.msg import Twist
    from rcl_interfaces.msg import Log
    from rcl_interfaces.srv import GetParameters
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    from servo_ff.nodes.walk_node import WalkNode

    def at_fault(n, v):  # at the count of a fault: the stop and the new worker are in place (before: counted first)
        return (n.stop is not None, n.worker._proc.pid) if v else None

    Watched, at_count = watched(WalkNode, "faults", at_fault)
    with RosHarness(salt=91) as ros:
        walk = _walk_node(
            ros, "servo_walk_f", True, Watched, engine_process=True, start_delay=0.0, approach_time=0.5, cmd_timeout=0.3
        )
        probe = ros.make_node("fault_probe")
        received: list = []  # the messages' bytes
        probe.create_subscription(JointTrajectory, "feedforward/trajectory", received.append, 100, raw=True)
        logs: list = []
        probe.create_subscription(Log, "/rosout", logs.append, 500)
        statuses: list = []  # the walk node's /diagnostics
        name = f"{walk.get_fully_qualified_name()}: walk"
        probe.create_subscription(
            DiagnosticArray, "/diagnostics", lambda m: statuses.extend(s for s in m.status if s.name == name), 50
        )
        rosout_matched(walk, logs)
        states = probe.create_publisher(JointState, "joint_states", 10)
        pose = JointState(name=list(walk.joints), position=list(walk.engine.q_stand[walk.perm]))
        wait_for(lambda: states.publish(pose) or walk.q0 is not None, 60.0, "the pose taken")
        cmd = probe.create_publisher(Twist, "cmd_vel", 10)
        forward = Twist()
        forward.linear.x = 0.1
        wait_for(lambda: cmd.publish(forward) or walk.now_s() > walk.t_walk + 1.2, 30.0, "1.2 s forward", interval=0.05)
        # the cmd_vel stale (none in flight to cancel the stop's halt request); the plan still walks forward
        wait_for(lambda: walk.cmd_stale_logged, 30.0, "the cmd_vel stale")
        proc = walk.worker._proc
        old = proc.pid
        n_before, t_fault = len(received), time.time()
        try:
            os.kill(old, getattr(signal, sig))
            client = probe.create_client(GetParameters, f"{walk.get_name()}/get_parameters")
            gets = {"asked_before_handled": 0, "asked_after": 0}  # parameter gets answered, by when each was asked

            def answered() -> bool:  # one get at a time: the executor answers while the fault is met and after it
                handled = walk.faults == 1
                answer = ros.call(
                    client, GetParameters.Request(names=["horizon"]), timeout=60.0
                )  # before: a 120 s wait
                assert answer.values[0].double_value == 0.5
                gets["asked_after" if handled else "asked_before_handled"] += 1
                return gets["asked_after"] >= 5

            wait_for(answered, 120.0, "5 parameter gets answered after the fault handled", interval=0.05)
            assert sig == "SIGKILL" or gets["asked_before_handled"] >= 1, gets  # a hang is met only after HUNG_AFTER
            wait_for(lambda: walk.faults == 1, 30.0, "the fault handled")
            ((stopping, pid),) = at_count
            assert stopping and pid != old and pid == walk.worker._proc.pid, (at_count, old)
            said = wait_for(lambda: _errors(logs, walk), 10.0, "the ERROR line")
            assert f"walk worker (pid {old}) " + ("hung" if sig == "SIGSTOP" else "ended (exit code -9") in said[0]
            assert "stance" in said[0] and "new engine process" in said[0], said
            assert proc.poll() is not None  # killed (a stopped one too) and reaped
            said = wait_for(lambda: [s for s in statuses if "1 engine_faults" in s.message], 10.0, "the fault's status")
            assert said[0].level == DiagnosticStatus.WARN and {"engine_faults": "1"}.items() <= _kv(said[0]).items()

            # the stop: messages on, ending at the stance at rest, within the walk's own motion per tick
            stance = walk.engine.q_stand[walk.perm]

            def standing() -> bool:
                from servo_ff.ros.desired_trajectory import parse_trajectory

                if len(received) <= n_before:
                    return False
                last = parse_trajectory(received[-1], {j: i for i, j in enumerate(walk.joints)}, 0.0)
                return np.abs(last.q - stance).max() < 1e-6 and np.abs(last.dq).max() < 1e-6

            wait_for(standing, 30.0, "a message standing in the stance")
            assert walk.standing or walk.engine.halt_requested  # the new engine started standing
            q = _followed(received, walk, t_fault - 0.5)
            assert np.abs(np.diff(q, axis=0)).max() < 0.05  # measured 0.024–0.026 (the walk's own); before: no stop
            assert walk.stop.duration < 1.0  # a brake of 0.1 s, the move over one step period: 0.58 s
            assert np.abs(_followed(received, walk, walk.stop.end) - stance).max() < 1e-6  # at rest there

            # walking again on a cmd_vel, on the new process
            wait_for(lambda: cmd.publish(forward) or not walk.engine.halt_requested, 30.0, "the cmd_vel taken")
            n_again = len(received)

            def walking() -> bool:
                from servo_ff.ros.desired_trajectory import parse_trajectory

                if len(received) <= n_again + 3 or walk.standing:
                    return False
                last = parse_trajectory(received[-1], {j: i for i, j in enumerate(walk.joints)}, 0.0)
                return np.ptp(last.q, axis=0).max() > 0.01

            wait_for(walking, 30.0, "walking again")
            assert walk.worker._proc.pid != old and walk.faults == 1 and len(_errors(logs, walk)) == 1
        finally:
            if proc.poll() is None:  # (the node did not kill it)
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait(timeout=10)


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP")
def test_a_stopped_worker_is_hung_not_ended_and_close_kills_it():
    """Before: take() waited its whole timeout, then said "ended (exit code None; TimeoutError)" (the TimeoutError
    caught as an OSError), and close() took 10 s and raised (SIGTERM does not end a stopped process)."""
    from servo_ff.dynamics.walk_pattern import WalkFrames, WalkParams
    from servo_ff.dynamics.walk_worker import WalkWorker
    from servo_ff.io.paths import share_file

    worker = WalkWorker(share_file("urdf", "op3.urdf"), WalkParams(), WalkFrames(), timeout=2.0)
    try:
        worker.start((0.0, 0.0, 0.0))
        worker.request([0.01 * k for k in range(10)], (0.0, 0.0, 0.0), None, 1.0)
        worker.take(10)
        os.kill(worker._proc.pid, signal.SIGSTOP)
        worker.request([0.1 + 0.01 * k for k in range(10)], (0.0, 0.0, 0.0), None, 1.0)
        with pytest.raises(RuntimeError, match=rf"walk worker \(pid {worker._proc.pid}\) hung: no answer in 2 s"):
            worker.take(1)
        with pytest.raises(RuntimeError, match="hung: no samples for"):
            worker.check()  # the request is over hung_after (1 s) old
        worker.close()  # a stopped worker does not answer its stop: killed (no wall-time bound asserted)
        assert worker._proc.returncode == -signal.SIGKILL
    finally:
        if worker._proc.poll() is None:
            worker._proc.send_signal(signal.SIGCONT)
            worker._proc.kill()
            worker._proc.wait(timeout=10)


def test_a_horizon_shorter_than_the_next_message_is_refused_with_its_reason():
    """Before: horizon 0.05 s (< publish_period 0.1 s) was taken; each message ended before the next came (the desired
    held, then jumped 0.11 rad in one 8 ms tick)."""
    from rclpy.parameter import Parameter

    with RosHarness(salt=92) as ros:
        with pytest.raises(ValueError, match=r"horizon 0\.1 s is shorter than publish_period 0\.1 s \+ 0\.05 s"):
            _walk_node(ros, "servo_walk_bad", horizon=0.1)
        walk = _walk_node(ros, "servo_walk_r", start_delay=3600.0)
        try:
            refused = walk.set_parameters([Parameter("horizon", value=0.12)])[0]
            assert not refused.successful and "must reach past the next one" in refused.reason
            assert walk.table["horizon"] == 0.5
            assert walk.set_parameters([Parameter("horizon", value=0.15)])[0].successful
        finally:
            walk.destroy_node()


def test_a_long_horizon_set_at_run_time_gives_messages_that_start_at_now():
    """Before: horizon 6 s made the messages start 2.3–4.0 s after now (the window trimmed 2 s behind its newest
    sample, deleting the samples around now), and the support coefficient at now was the window's first (off by up
    to 1)."""
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from servo_ff.ros.desired_trajectory import parse_trajectory

    clock = [1.0]
    with RosHarness(salt=92) as ros:
        walk = _walk_node(ros, "servo_walk_h", start_delay=0.0, approach_time=0.2)
        try:
            walk.now_s = lambda: clock[0]
            walk._on_joint_states(serialize_message(JointState(name=walk.joints, position=list(walk.engine.q_stand))))
            index = {j: i for i, j in enumerate(walk.joints)}
            for k in range(40):  # 1 s at 0.5 s, then 3 s at 6 s: past the former trim
                if k == 10:
                    assert walk.set_parameters([Parameter("horizon", value=6.0)])[0].successful
                clock[0] += 0.1
                walk._publish_trajectory()
                traj = parse_trajectory(walk._cdr.data(), index, clock[0])
                first, last = traj.t0 + traj.times[0], traj.t0 + traj.times[-1]
                assert clock[0] - walk.dt - 1e-9 <= first <= clock[0] + 1e-9, (clock[0], first)
                assert last >= clock[0] + walk.table["horizon"] - 1e-9
                i = int(np.argmin(np.abs(np.asarray(walk.times) - first)))
                assert abs(walk.times[i] - first) < 1e-6 and walk.support(first) == pytest.approx(walk.cs[i], abs=1e-6)
        finally:
            walk.destroy_node()


def test_balance_offsets_switching_on_and_off_are_ramped_not_stepped():
    """An IMU reading of a trunk pitched 0.4 rad (offsets held at ±0.2 rad), the IMU silent, then back: before, the
    followed desired stepped 0.2 rad in one 8 ms tick at each change; now the offsets move by a minimum-jerk over one
    publish_period (1.875 · 0.2 · 0.008 / 0.1 = 0.03 rad per tick at most) and reach ±0.2 and 0. The plan is held by
    hand (the stance), so what moves is the offsets only."""
    from sensor_msgs.msg import Imu

    clock = [1.0]
    with RosHarness(salt=93) as ros:
        walk = _walk_node(ros, "servo_walk_b", start_delay=3600.0, balance_ankle_pitch=1.0, imu_timeout=0.1)
        try:
            walk.now_s = lambda: clock[0]
            stance = walk.engine.q_stand[walk.perm]
            walk.times, walk.qs, walk.cs = list(walk.dt * np.arange(400)), [stance] * 400, [0.5] * 400  # 0 … 3.99 s
            walk.q0, walk.t0, walk.t_walk = stance, 0.0, 0.5
            imu = Imu()
            imu.orientation.y, imu.orientation.w = math.sin(0.2), math.cos(0.2)  # pitched 0.4 rad
            received, full = [], []
            for _ in range(24):  # to 3.4 s (the window reaches 3.4 + horizon + 4 dt)
                clock[0] += 0.1
                if not 2.0 <= clock[0] < 3.0:  # silent from 2 s to 3 s
                    walk._on_imu(imu)
                walk._publish_trajectory()
                received.append(walk._cdr.data())
                full.append(walk.balance.offset_at(clock[0], 0.1) is not None)
            assert full[:9] == [True] * 9 and not any(full[10:19]) and all(full[20:])  # (readings as measured)
            q = _followed(received, walk, 1.1)
            off = q - stance
            assert np.abs(np.diff(q, axis=0)).max() < 0.035  # measured 0.0298; before: 0.2
            assert np.abs(off).max() == pytest.approx(0.2, abs=1e-9)  # the whole offset reached
            k_silent = round((2.5 - 1.1) / TICK)  # in the silence the offsets are gone
            assert np.abs(off[k_silent]).max() < 1e-12 and np.abs(off[-1]).max() == pytest.approx(0.2, abs=1e-9)
        finally:
            walk.destroy_node()


def test_a_walk_node_says_it_waits_for_joint_states_and_for_the_clock():
    """Before: no /joint_states (or use_sim_time with no /clock) was silence: nothing planned, nothing said."""
    from rcl_interfaces.msg import Log

    with RosHarness(salt=94) as ros:
        probe = ros.make_node("wait_probe")
        logs: list = []
        probe.create_subscription(Log, "/rosout", logs.append, 100)
        wall = _walk_node(ros, "servo_walk_w", add=True, start_delay=3600.0)
        sim = _walk_node(ros, "servo_walk_s", add=True, start_delay=3600.0, use_sim_time=True)
        rosout_matched(wall, logs)
        rosout_matched(sim, logs)

        def line(node, text: str) -> list[str]:
            return [m.msg for m in logs if m.name.endswith(node.get_name()) and text in m.msg]

        said = wait_for(lambda: line(wall, "waiting for "), 20.0, "the joint_states line")
        assert said[0].startswith(f"waiting for {ros.ns}/joint_states (none in ") and wall.q0 is None
        said = wait_for(lambda: line(sim, "waiting for "), 20.0, "the clock line")
        assert said[0].startswith("waiting for /clock (use_sim_time true, no clock in ") and sim.q0 is None


def test_a_long_request_is_given_time_and_a_child_that_ends_at_once_is_said_not_raised():
    """A request of 10 s of walk (a run-time horizon of 10 s, a jump of the clock forward) takes the child ≈ 1.5 s:
    it is allowed hung_after + 0.5 s per second of walk beyond the first (before: 1 s, the healthy child killed as
    hung, the robot stopped). A child that ends before its set-up is sent is said by check() with its exit code
    (before: BrokenPipeError out of the constructor, the node's timer callback, the node)."""
    from servo_ff.dynamics.walk_pattern import WalkFrames, WalkParams
    from servo_ff.dynamics.walk_worker import PLAN_S_PER_WALK_S, WalkWorker, WorkerFault
    from servo_ff.io.paths import share_file

    worker = WalkWorker(share_file("urdf", "op3.urdf"), WalkParams(), WalkFrames(), timeout=30.0)
    try:
        worker.start((0.0, 0.0, 0.0))
        t0 = time.monotonic()
        worker.request([0.01 * k for k in range(1000)], (0.0, 0.0, 0.0), None, 1.0)  # 10 s of walk
        assert worker.deadline() >= t0 + worker.hung_after + PLAN_S_PER_WALK_S * 9.0 - 0.01
        worker.take(1000)  # (its answer, within the allowance)
        assert worker.deadline() <= time.monotonic()  # none pending
    finally:
        worker.close()
    real = sys.executable
    try:
        sys.executable = "/bin/false"  # a child that ends at once
        dead = WalkWorker(share_file("urdf", "op3.urdf"), WalkParams(), WalkFrames(), timeout=30.0)
    finally:
        sys.executable = real
    try:
        wait_for(lambda: dead._proc.poll() is not None, 10.0, "the child's end")
        with pytest.raises(WorkerFault, match=r"ended \(exit code 1\)"):
            dead.check()
    finally:
        dead.kill()


def test_workers_that_keep_ending_at_start_are_given_up_after_five():
    """Every new worker ends at once (here: its interpreter is /bin/false): after MAX_FAILED_STARTS in a row the
    node starts no more and stands at the stance (before: a new interpreter and placo import every period, an ERROR
    line each, for ever)."""
    from rcl_interfaces.msg import Log
    from sensor_msgs.msg import JointState

    from servo_ff.nodes.walk_process import MAX_FAILED_STARTS

    with RosHarness(salt=93) as ros:
        walk = _walk_node(ros, "servo_walk_g", add=True, engine_process=True, start_delay=0.0, approach_time=0.5)
        probe = ros.make_node("restart_probe")
        logs: list = []
        probe.create_subscription(Log, "/rosout", logs.append, 500)
        rosout_matched(walk, logs)
        states = probe.create_publisher(JointState, "joint_states", 10)
        pose = JointState(name=list(walk.joints), position=list(walk.engine.q_stand[walk.perm]))
        wait_for(
            lambda: states.publish(pose) or walk.worker is not None and walk.worker.stance() is not None,
            60.0,
            "a worker up",
        )  # (stance(): read without taking the pipe the node reads)
        real = sys.executable
        try:
            sys.executable = "/bin/false"  # every worker started from now on ends at once
            os.kill(walk.worker._proc.pid, signal.SIGKILL)
            wait_for(lambda: getattr(walk, "engine_given_up", False), 60.0, "the node giving up")
        finally:
            sys.executable = real
        assert walk.faults == MAX_FAILED_STARTS + 1  # the killed one, then the five that never came up
        said = wait_for(lambda: [m for m in _errors(logs, walk) if "no more is started" in m], 10.0, "the last line")
        assert len(said) == 1 and f"{MAX_FAILED_STARTS} walk workers in a row" in said[0], said
        faults = walk.faults
        wait_for(lambda: walk.now_s() > walk.stop.end + 0.5, 30.0, "past the stop")
        assert walk.faults == faults  # no more


def test_engine_processes_that_end_before_the_first_pose_are_given_up_after_five():
    """engine_process, every child ends at once (its interpreter /bin/false), before the first pose is taken. Before:
    each /joint_states started a new child and logged an ERROR (≈ 55 a second, for ever), faults 0, the status OK;
    now each is a fault as during the walk: MAX_FAILED_STARTS in a row and no more is started, one line says so, the
    status ERROR."""
    from diagnostic_msgs.msg import DiagnosticStatus
    from rcl_interfaces.msg import Log
    from sensor_msgs.msg import JointState

    from servo_ff.nodes.walk_process import MAX_FAILED_STARTS

    with RosHarness(salt=95) as ros:
        probe = ros.make_node("start_fault_probe")
        logs: list = []
        probe.create_subscription(Log, "/rosout", logs.append, 500)
        states = probe.create_publisher(JointState, "joint_states", 10)
        real = sys.executable
        try:
            sys.executable = "/bin/false"  # every child from now on ends at once
            walk = _walk_node(ros, "servo_walk_e", engine_process=True, start_delay=0.0, approach_time=0.5)
            rosout_matched(walk, logs)  # (not spun yet: no fault before the probe hears it)
            ros.add(walk)
            pose = JointState(name=list(walk.joints), position=list(walk.engine.q_stand[walk.perm]))
            wait_for(lambda: states.publish(pose) or getattr(walk, "engine_given_up", False), 60.0, "given up")
        finally:
            sys.executable = real
        assert walk.faults == MAX_FAILED_STARTS and walk.q0 is None
        said = wait_for(lambda: [m for m in _errors(logs, walk) if "no more is started" in m], 10.0, "the last line")
        assert len(said) == 1 and f"{MAX_FAILED_STARTS} walk workers in a row" in said[0] and "no walk" in said[0]
        errors = _errors(logs, walk)
        assert len(errors) == MAX_FAILED_STARTS, errors  # one per child: four "starting", the last one
        pid, seen = walk.worker.pid, walk.waiting.seen
        wait_for(lambda: states.publish(pose) or walk.waiting.seen > seen + 20, 30.0, "more /joint_states")
        assert walk.faults == MAX_FAILED_STARTS and walk.worker.pid == pid and walk.q0 is None  # none started
        st = walk.diagnostics.status()
        assert st.level == DiagnosticStatus.ERROR and st.message.startswith("given up"), st


def test_an_engine_process_hanging_at_start_holds_no_callback_and_is_a_fault_after_its_timeout(tmp_path):
    """engine_process, the child hangs at start-up (its interpreter a `sleep`: placo's import stuck, the child
    stopped). Before: the first /joint_states waited in worker.start for its timeout (120 s), the executor held: no
    /diagnostics, no line. Now the node's status goes on ("waiting for the engine process"), a warning names the
    child, and after the worker's timeout it is one fault: killed, a new child, which walks."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rcl_interfaces.msg import Log
    from sensor_msgs.msg import JointState

    sleeper = tmp_path / "sleeper.sh"
    sleeper.write_text("#!/bin/sh\nexec sleep 1000\n")
    sleeper.chmod(0o755)
    with RosHarness(salt=96) as ros:
        real = sys.executable
        try:
            sys.executable = str(sleeper)
            walk = _walk_node(ros, "servo_walk_k", add=True, engine_process=True, start_delay=0.0, approach_time=0.5)
        finally:
            sys.executable = real  # the children started from now on: placo's
        probe = ros.make_node("start_hang_probe")
        logs: list = []
        probe.create_subscription(Log, "/rosout", logs.append, 500)
        rosout_matched(walk, logs)
        name = f"{walk.get_fully_qualified_name()}: walk"
        phases: list = []  # (when it came [s, wall], phase)
        probe.create_subscription(
            DiagnosticArray,
            "/diagnostics",
            lambda m: phases.extend((time.monotonic(), _kv(s)["phase"]) for s in m.status if s.name == name),
            50,
        )
        states = probe.create_publisher(JointState, "joint_states", 10)
        pose = JointState(name=list(walk.joints), position=list(walk.engine.q_stand[walk.perm]))
        probe.create_timer(0.02, lambda: states.publish(pose))  # (a servo node streaming)
        wait_for(lambda: walk.waiting.seen, 30.0, "a /joint_states at the walk node")
        t_seen, hung = time.monotonic(), walk.worker.pid
        wait_for(lambda: [t for t, p in phases if t > t_seen + 2.0 and p == "waiting for the engine process"], 20.0,
                 "a status 2 s after the first /joint_states")  # fmt: skip
        said = wait_for(lambda: [m.msg for m in logs if "waiting for the engine process" in m.msg], 30.0, "the line")
        assert said[0].startswith(f"waiting for the engine process (pid {hung}) to start ("), said
        assert walk.q0 is None and walk.faults == 0  # (said from walk_waiting.ENGINE_SAY_AFTER on)
        assert not [m.msg for m in logs if "waiting for a whole pose" in m.msg]  # the pose is whole: unsaid
        walk.worker.timeout = 0.5  # as if its 120 s had passed
        wait_for(lambda: states.publish(pose) or walk.q0 is not None, 60.0, "the pose, on a new child")
        errors = _errors(logs, walk)
        assert walk.faults == 1 and walk.worker.pid != hung, errors
        assert len(errors) == 1 and f"walk worker (pid {hung}) hung: not started in 0.5 s; killed" in errors[0]
