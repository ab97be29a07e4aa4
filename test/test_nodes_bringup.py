"""Bring-up table, config YAML, ``servo-ff up`` (dry run and a real sim bring-up) and the launch files."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from servo_ff.bringup import BRINGUPS, config_dir, plan
from servo_ff.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]


def test_every_bringup_has_a_launch_file_config_and_node_modules():
    for name in BRINGUPS:
        launch = ROOT / "launch" / f"{name}.launch.py"
        assert launch.is_file()
        assert f'launch_description("{name}")' in launch.read_text()
        args = {"bag": "/tmp/x"} if name == "replay" else {}
        nodes = plan(name, **args)
        assert nodes
        doc = yaml.safe_load((config_dir() / f"{name}.yaml").read_text())
        assert "/**" in doc and "joints" in doc["/**"]["ros__parameters"]
        for n in nodes:
            assert n.config == f"{name}.yaml"
            assert n.name in doc, f"{name}.yaml has no section for node {n.name}"
            assert "ros__parameters" in doc[n.name]
            # setup.py registers servo_ff/nodes/<x>_node.py as servo_<x>_node
            stem = n.module.rsplit(".", 1)[1]
            assert n.executable == f"servo_{stem.removesuffix('_node')}_node"
            assert (ROOT / "src" / "servo_ff" / "nodes" / f"{stem}.py").is_file()


def test_plan_arguments_are_checked():
    assert [n.name for n in plan("identify", source="hardware")][0] == "servo_hardware"
    for bringup, args in (("robot", {}), ("identify", {"source": "hardware"})):  # the feed-forward node sets its kp
        (ff,) = [n for n in plan(bringup, **args) if n.name == "servo_feedforward"]
        assert ff.overrides == {"servo_node": "servo_hardware"}, bringup
    with pytest.raises(ValueError, match="source"):
        plan("identify", source="mujoco")
    with pytest.raises(ValueError, match="bag"):
        plan("replay")
    with pytest.raises(ValueError, match="no argument"):
        plan("sim", bag="x")
    with pytest.raises(ValueError, match="unknown bring-up"):
        plan("walk")


def test_up_dry_run_prints_one_process_per_node(capsys):
    assert cli_main(["up", "replay", "--arg", "bag:=/data/run1", "--dry-run"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("servo_fit: ")
    assert "servo_ff.nodes.fit_node" in out[0] and "replay.yaml" in out[0]
    override = yaml.safe_load(Path(out[0].split("--params-file ")[-1].split()[0]).read_text())
    assert override == {"servo_fit": {"ros__parameters": {"source": "bag", "bag_path": "/data/run1"}}}  # as the YAML
    assert cli_main(["up", "sim", "--dry-run"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["servo_sim", "servo_feedforward", "servo_state_publisher"]
    assert cli_main(["up", "replay", "--dry-run"]) == 2  # missing bag: one clear error line
    assert "bag" in capsys.readouterr().err


def test_up_dry_run_says_duration_is_not_used(capsys):
    """Before: --duration beside --dry-run was accepted, nothing said."""
    assert cli_main(["up", "sim", "--dry-run", "--duration", "5"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["[up] --duration 5: not used with --dry-run (nothing is started)"], err


def test_up_starts_sim_node_from_the_yaml(tmp_path):
    """`servo-ff up identify` subset: run the sim node process exactly as `up` builds it and read its topic."""
    pytest.importorskip("rclpy")
    from nodes_harness import RosHarness, wait_for
    from sensor_msgs.msg import JointState

    from servo_ff.bringup import python_env
    from servo_ff.cli.up import commands

    h = RosHarness(salt=2)
    try:
        (name, cmd), *_ = commands("identify", {"source": "sim"})
        assert name == "servo_sim"
        cmd = [*cmd, "-r", f"__ns:={h.ns}"]  # the probe listens in the same private namespace
        env = python_env()
        env["ROS_DOMAIN_ID"] = str(h.domain)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            node = h.make_node("up_probe")
            got: list[JointState] = []
            node.create_subscription(JointState, "joint_states", got.append, 10)
            wait_for(lambda: got, 20.0, "joint_states from the servo_sim process")
            assert list(got[-1].name) == ["pendulum_1"]  # joints from the /** section of identify.yaml
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    finally:
        h.shutdown()


def _line_or_exit(proc: subprocess.Popen, words: str, timeout: float) -> tuple[str, list[str]]:
    """The first output line of ``proc`` holding ``words`` ("" if it exits or ``timeout`` [s] passes first), and
    every line read."""
    import queue
    import threading

    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout], daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            ln = lines.get(timeout=0.2)
        except queue.Empty:
            if proc.poll() is not None:
                break
            continue
        seen.append(ln)
        if words in ln:
            return ln, seen
    return "", seen


def test_up_sim_runs_the_actuator_of_an_actuator_file_alone(tmp_path, caplog):
    """`servo-ff up sim --params-file F` where F gives servo_sim only an actuator_file (an identified XL330 m1): the
    sim runs that actuator, and one line says the feed-forward's α̂ is its α̂ (test_bringup_actuator_alpha.py: the
    feed-forward node gets the actuator_file). Before: sim.yaml set servo mx64 /
    model m4, and the sim node exited 2 ("servo='mx64' contradicts actuator_file … (servo 'xl330'): drop servo"),
    which no user could drop."""
    pytest.importorskip("rclpy")
    from nodes_harness import RosHarness

    from servo_ff.bringup import python_env
    from servo_ff.cli.up import commands
    from servo_ff.models.presets import preset

    identified = tmp_path / "m1.yaml"
    preset("xl330", "m1").save_yaml(identified)
    extra = tmp_path / "af.yaml"
    extra.write_text(f"servo_sim:\n  ros__parameters:\n    actuator_file: {identified}\n")
    h = RosHarness(salt=6)
    try:
        with caplog.at_level("INFO"):  # the namespace: the YAML's sections rewritten as /**/<node>
            (name, cmd), *_ = commands("sim", {"namespace": h.ns}, params_files=[extra])
        said = [r.getMessage() for r in caplog.records if "actuator_file" in r.getMessage()]
        assert len(said) == 1 and "the feed-forward's α̂ is its α̂" in said[0], said
        env = {**python_env(), "ROS_DOMAIN_ID": str(h.domain)}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            line, seen = _line_or_exit(proc, "simulating 2 ", 60.0)
            assert "xl330/m1" in line and str(identified) in line, "".join(seen)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    finally:
        h.shutdown()


def test_launch_files_build_descriptions():
    """Where launch / launch_ros are installed: every launch file builds and declares its arguments (launch's
    own pytest plugin is disabled in pyproject.toml: it does not load under pytest 9)."""
    pytest.importorskip("launch")
    pytest.importorskip("launch_ros")
    from launch.actions import DeclareLaunchArgument

    for name in BRINGUPS:
        spec = importlib.util.spec_from_file_location(f"{name}_launch", ROOT / "launch" / f"{name}.launch.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        ld = mod.generate_launch_description()
        assert ld.entities
        declared = {e.name for e in ld.entities if isinstance(e, DeclareLaunchArgument)}
        assert declared == set(BRINGUPS[name][1])


def test_an_up_params_file_wins_over_the_arguments_in_any_namespace_and_says_so(tmp_path, caplog):
    """`servo-ff up robot --arg port:=… --params-file mine.yaml` (mine.yaml sets port too): the node gets the file's
    port with a namespace and without one, and one line says the file's value is used (before: with a namespace
    the file won, without one the argument did — the wrong port opened, unsaid)."""
    pytest.importorskip("rclpy")
    from rclpy.context import Context
    from rclpy.node import Node

    from servo_ff.cli.up import commands

    mine = tmp_path / "mine.yaml"
    mine.write_text("servo_hardware:\n  ros__parameters:\n    port: /dev/ttyMINE\n    rate_hz: 50.0\n")
    for ns in ("", "legs"):
        caplog.clear()
        args = {"port": "/dev/ttyARG", **({"namespace": ns} if ns else {})}
        (cmd,) = [c for name, c in commands("robot", args, params_files=[mine]) if name == "servo_hardware"]
        ctx = Context()
        ctx.init(args=["servo", *cmd[cmd.index("--ros-args") :]])
        try:
            node = Node("servo_hardware", context=ctx, automatically_declare_parameters_from_overrides=True)
            assert node.get_parameter("port").value == "/dev/ttyMINE", ns
            assert node.get_parameter("rate_hz").value == 50.0
            node.destroy_node()
        finally:
            ctx.try_shutdown()
        said = [r.getMessage() for r in caplog.records if "applied last" in r.getMessage()]
        assert len(said) == 1 and "servo_hardware's port" in said[0], said


def test_launch_arguments_override_the_yaml_in_any_namespace(tmp_path):
    """port/baud/params_file/namespace as bring-up arguments: what the node really receives (rcl's own parsing
    of the command line `servo-ff up` and the launch files build), YAML < params_file < arguments."""
    pytest.importorskip("rclpy")
    from rclpy.context import Context
    from rclpy.node import Node

    extra = tmp_path / "extra.yaml"
    extra.write_text("servo_hardware:\n  ros__parameters:\n    rate_hz: 50.0\n    baud: 57600\n")
    for ns in ("", "legs"):
        (hw, ff, _) = plan("robot", port="/dev/ttyLEGS", baud="3000000", namespace=ns, params_file=str(extra))
        assert hw.name == "servo_hardware" and hw.namespace == ("/legs" if ns else "")
        ctx = Context()
        ctx.init(args=["servo", *hw.ros_args(config_dir())])
        try:
            node = Node("servo_hardware", context=ctx, automatically_declare_parameters_from_overrides=True)
            got = {k: node.get_parameter(k).value for k in ("port", "baud", "rate_hz", "ids", "joints")}
            assert node.get_namespace() == ("/legs" if ns else "/")
            assert got == {
                "port": "/dev/ttyLEGS",
                "baud": 3000000,
                "rate_hz": 50.0,
                "ids": [1, 2],
                "joints": ["shoulder", "elbow"],
            }, got
            node.destroy_node()
        finally:
            ctx.try_shutdown()
    with pytest.raises(ValueError, match="baud"):
        plan("robot", baud="fast")
    assert {"port", "baud", "params_file", "namespace"} <= set(BRINGUPS["robot"][1])
    assert {"bag", "goal_topic", "params_file", "namespace"} <= set(BRINGUPS["replay"][1])
    (fit,) = plan("replay", bag="/b", goal_topic="/arm_controller/commands")
    assert fit.overrides["goal_topic"] == "/arm_controller/commands"


def test_up_identify_ends_with_alpha_on_the_feedforward_node(tmp_path):
    """`servo-ff up identify --arg realtime:=false` as a user runs it (a short reference and two ILC iterations
    from a params file): the sim owns /clock as fast as it steps, the ILC node on sim time, each ILC trial one
    JointTrajectory → ILC record → fit → α set on the feed-forward node the bring-up started → every node
    stopped, exit code 0."""
    pytest.importorskip("rclpy")
    from servo_ff.bringup import python_env
    from servo_ff.dynamics.alpha import load_alpha
    from servo_ff.io.ilc_record import load_ilc_record
    from servo_ff.ros.harness import domain_id

    fast = {n.name: dict(n.overrides) for n in plan("identify", realtime="false")}
    assert list(fast) == ["servo_sim", "servo_feedforward", "servo_ilc", "servo_fit"]
    assert fast["servo_sim"] == {
        "publish_clock": True,
        "real_time_factor": 0.0,
        "as_fast_batch": 0.002,
    }  # owns /clock, fast
    assert fast["servo_ilc"]["use_sim_time"]  # trials on the sim's time; feed-forward and fit act after, on wall time
    assert not any("use_sim_time" in fast[n] for n in ("servo_feedforward", "servo_fit"))
    assert fast["servo_ilc"]["execution"] == "trajectory"
    assert not any(n.overrides for n in plan("identify"))  # wall clock: the YAML as it is (streamed trials)
    with pytest.raises(ValueError, match="source:=sim"):
        plan("identify", source="hardware", realtime="false")
    (tmp_path / "ilc_result.npz").write_bytes(b"stale")  # an earlier run's file is not fitted
    params = tmp_path / "short.yaml"
    params.write_text("""servo_sim:
  ros__parameters:
    rate_hz: 100.0
servo_ilc:
  ros__parameters:
    reference: sub_oscillations
    reference_duration: 1.5
    reference_amplitude: 0.6
    rate_hz: 100.0
    max_iterations: 2
    threshold: 0.0
    settle_time: 0.4
""")
    env = python_env()
    env["ROS_DOMAIN_ID"] = str(domain_id(7))  # this run's own domain
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    proc = subprocess.run(
        [sys.executable, "-m", "servo_ff", "up", "identify", "--arg", "realtime:=false", "--params-file", str(params)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "alpha.pendulum_1 set on servo_feedforward" in out, out
    assert "servo_fit exited with code 0" in out, out
    rec = load_ilc_record(tmp_path / "ilc_result.npz")
    assert rec.commands.shape == (3, 150) and rec.errors[-1] < rec.errors[0], rec.errors
    table = load_alpha(tmp_path / "alpha.yaml", ["pendulum_1"])
    assert np.isfinite(table.alpha).all() and table.alpha[0, 0] > 0


def test_docs_parameter_tables_are_what_the_nodes_declare():
    """docs/nodes.md's parameter tables are generated from the nodes' own ParamSpec rows
    (python -m servo_ff.nodes.param_docs docs/nodes.md): a parameter added, renamed or re-ranged fails here."""
    pytest.importorskip("rclpy")
    from servo_ff.nodes.param_docs import BEGIN, END, tables

    page = (ROOT / "docs" / "nodes.md").read_text()
    assert page.split(BEGIN)[1].split(END)[0].strip() == tables().strip()


def _children(pid: int) -> dict[int, str]:
    """The live child processes of ``pid`` (Linux /proc): pid → command line."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            out[int(d.name)] = cmdline
    return out


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_up_fails_when_a_node_ends_by_itself_and_leaves_no_node_when_killed():
    """`servo-ff up sim`: the sim node ending by itself (SIGTERM to it alone) stops the others and `up` exits 1,
    saying so (before: 0, as if the bring-up had done its work); `up` killed by SIGKILL takes its nodes with it
    (before: all three ran on, a hardware node holding torque)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("/proc and PR_SET_PDEATHSIG: Linux")
    pytest.importorskip("rclpy")
    import os
    import signal

    from diagnostic_msgs.msg import DiagnosticArray
    from nodes_harness import RosHarness, wait_for
    from std_msgs.msg import String

    from servo_ff.bringup import python_env
    from servo_ff.ros.robot_description import latched_qos

    h = RosHarness(salt=3)  # a private ROS_DOMAIN_ID for the bring-up's nodes
    env = {**python_env(), "ROS_DOMAIN_ID": str(h.domain)}
    try:
        up = [sys.executable, "-m", "servo_ff", "up", "sim"]
        proc = subprocess.Popen(up, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            kids = wait_for(lambda: len(k := _children(proc.pid)) == 3 and k, 60.0, "the three nodes")
            probe = h.make_node("up_probe")
            seen: set[str] = set()  # the nodes up: each one's diagnostics or output
            probe.create_subscription(
                DiagnosticArray, "/diagnostics", lambda m: seen.update(s.name for s in m.status), 50
            )
            probe.create_subscription(String, "/robot_description", lambda m: seen.add("description"), latched_qos())
            wait_for(lambda: {"description"} <= seen and any("feed-forward" in n for n in seen), 90.0, "the nodes up")
            (sim,) = [pid for pid, cmd in kids.items() if "sim_node" in cmd]
            os.kill(sim, signal.SIGTERM)
            out, _ = proc.communicate(timeout=60)
            assert proc.returncode == 1 and "servo_sim ended while the bring-up ran" in out, out[-2000:]
        finally:
            proc.kill()
        proc = subprocess.Popen(up, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kids = wait_for(lambda: len(k := _children(proc.pid)) == 3 and k, 60.0, "the three nodes")
        proc.kill()
        proc.wait(timeout=10)
        wait_for(lambda: not any(_alive(pid) for pid in kids), 30.0, "the nodes ended with up")
    finally:
        for pid in list(kids) if "kids" in locals() else []:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        h.shutdown()


def test_bad_bring_up_input_is_one_line_and_exit_2(tmp_path, capsys):
    """A namespace that is no ROS name, an argument given twice, a params_file that is no YAML: one line, exit 2,
    before any node starts (before: rcl tracebacks in every node, the last value kept unsaid, a parser traceback);
    a node given a parameter of the wrong type ends with one line and exit 2 (before: a traceback, exit 1)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("servo_sim:\n  ros__parameters: [1, 2\n")
    text = tmp_path / "text.yaml"
    text.write_text("servo_sim:\n  ros__parameters:\n    rate_hz: fast\n")  # (before: rcl kept 500.0, unsaid)
    for args, said in (
        (["--params-file", str(text)], "rate_hz is a string ('fast'), the bring-up's is a number"),
        (["--arg", "namespace:=bad ns!"], "is not a ROS name"),
        (["--arg", "namespace:=a//b"], "is not a ROS name"),
        (["--arg", "namespace:=r1", "--arg", "namespace:=r2"], "given twice"),
        (["--arg", f"params_file:={bad}", "--arg", "namespace:=r1"], "malformed YAML"),
    ):
        assert cli_main(["up", "sim", "--dry-run", *args]) == 2, args
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, (args, err)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("servo_sim:\n  ros__parameters:\n    rate_hz: 50\n")  # an integer for a double
    from servo_ff.bringup import python_env

    cmd = [sys.executable, "-m", "servo_ff.nodes.sim_node", "--ros-args", "--params-file", str(wrong)]
    run = subprocess.run(cmd, env=python_env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "rate_hz" in run.stderr and "Traceback" not in run.stderr, run.stderr[-2000:]
