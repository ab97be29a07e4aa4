"""``servo-ff up {robot,sim,identify,replay}``: start the nodes of a bring-up, one process per node, from the
same table (:mod:`servo_ff.bringup`) and the same ``config/<bringup>.yaml`` as ``launch/*.launch.py``.

For machines without the ROS launch packages. Ctrl-C (SIGINT) or SIGTERM stops every node (then a Ctrl-C exits 130,
as every command does, SIGTERM 0); a node that ends by itself stops the others and ``up`` returns its exit code
(killed by a signal: 128 + its number; 0 only from the one-shot fit that ends its bring-up, 1 from any other: it was
to run on). On Linux the nodes end with ``up`` even when it is killed (SIGKILL): each gets SIGTERM
(``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import argparse
import logging
import math
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..bringup.params_check import check_config, check_kinds


def register(subparsers) -> None:
    from servo_ff.bringup import BRINGUPS

    p = subparsers.add_parser(
        "up",
        help="start the nodes of a bring-up (robot, sim, identify, replay) without ros2 launch",
        description=__doc__,
    )
    p.add_argument("bringup", choices=sorted(BRINGUPS), help="; ".join(f"{k}: {v[0]}" for k, v in BRINGUPS.items()))
    p.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME:=VALUE",
        help="bring-up argument, as in ros2 launch (robot/identify: port:=, baud:=; identify: "
        "source:=sim|hardware; replay: bag:=PATH, goal_topic:=; all: namespace:=, params_file:=); "
        "arguments override the YAML",
    )
    p.add_argument(
        "--config-dir",
        type=Path,
        default=None,
        help="directory of the <bringup>.yaml files (default: the package's config/)",
    )
    p.add_argument(
        "--params-file",
        action="append",
        default=[],
        type=Path,
        help="extra ROS parameter YAML given to every node after the bring-up's own and the arguments: it wins "
        "(a parameter it sets that an argument sets too is said)",
    )
    p.add_argument("--duration", type=_seconds, default=None, help="stop every node after this many seconds")
    p.add_argument("--dry-run", action="store_true", help="print the commands and exit")
    p.set_defaults(func=run)


def _seconds(text: str) -> float:
    """A ``--duration`` [s]: finite and > 0 (argparse's one line otherwise)."""
    try:
        t = float(text)
    except ValueError:
        t = math.nan
    if not (math.isfinite(t) and t > 0):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return t


def _parse_args(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if ":=" not in item:
            raise ValueError(f"--arg {item!r}: expected NAME:=VALUE")
        k, v = item.split(":=", 1)
        if k.strip() in out:  # before: the last one kept, unsaid
            raise ValueError(f"--arg {k.strip()} given twice ({out[k.strip()]!r}, {v!r})")
        out[k.strip()] = v
    return out


def commands(
    bringup: str,
    args: dict[str, str],
    config_dir: Path | None = None,
    params_files: list[Path] | None = None,
    nodes: list | None = None,
) -> list[tuple[str, list[str]]]:
    """(node name, command line) of every node of ``bringup`` (``nodes``: its plan, if made already)."""
    from servo_ff.bringup import config_dir as default_config_dir
    from servo_ff.bringup import plan, python_command

    cfg = config_dir or default_config_dir()
    out = []
    nodes = plan(bringup, **args) if nodes is None else nodes
    for extra in params_files or []:
        if not extra.is_file():
            raise FileNotFoundError(f"--params-file {extra} not found")
        check_config(extra)
        _warn_sections_of_no_node(bringup, extra, {n.name for n in nodes})
    for node in nodes:
        path = cfg / node.config
        if not path.is_file():
            raise FileNotFoundError(f"config file {path} for node {node.name} not found")
        check_config(path)
        for extra in params_files or []:
            check_kinds(extra, path, node.name)
        cmd = python_command(node, cfg)  # (the params_file argument's file checked in it: NodeLaunch)
        for extra in params_files or []:
            cmd += ["--params-file", str(node.matching(extra))]
            cmd += [a for f in node.actuator_files(extra) for a in ("--params-file", str(f))]  # the sim's actuator
            _warn_params_file_wins(bringup, node, extra)
        out.append((node.name, cmd))
    if args.get("feedforward") != "false":  # false: no servo_config α̂ (bringup.table), nothing to win over
        _warn_params_files_alpha(bringup, params_files or [])
    if {"servo_sim", "servo_feedforward"} <= {n.name for n in nodes}:
        _say_actuator_file_alpha(bringup, params_files or [], next(n for n in nodes if n.name == "servo_feedforward"))
    return out


def _say_actuator_file_alpha(bringup: str, params_files: list[Path], ff) -> None:
    """A ``--params-file`` giving servo_sim an ``actuator_file`` (the sim runs that actuator) and the feed-forward
    node ``ff`` no α̂ source of its own: its α̂ follows that file (:meth:`NodeLaunch.actuator_files`), or — a
    bring-up whose feed-forward α̂ follows servo_config — stays the bring-up's; said in one line."""
    from servo_ff.bringup.params_check import node_params

    for extra in params_files:
        path = node_params(extra, "servo_sim").get("actuator_file")
        if not path or node_params(extra, ff.name).keys() & {"alpha_file", "actuator_file", "servo", "model"}:
            continue
        if ff.actuator_files(extra):
            logging.getLogger(__name__).info(
                "%s: --params-file %s gives servo_sim the actuator_file %s: the sim runs it and the feed-forward's α̂ "
                "is its α̂ (servo_feedforward's actuator_file)",
                bringup, extra, path,
            )  # fmt: skip
        else:
            logging.getLogger(__name__).warning(
                "%s: --params-file %s gives servo_sim an actuator_file: the feed-forward's α̂ stays this bring-up's "
                "own (set servo_feedforward's actuator_file or alpha_file)",
                bringup, extra,
            )  # fmt: skip


def _warn_sections_of_no_node(bringup: str, extra: Path, names: set[str]) -> None:
    """A ``--params-file`` section naming no node of the bring-up (a typo: ``servo_simm``) is said in one line."""
    import yaml

    doc = yaml.safe_load(extra.read_text(encoding="utf-8"))  # (checked: check_config)
    for key in doc if isinstance(doc, dict) else ():
        if str(key) != "/**" and str(key).rsplit("/", 1)[-1] not in names:
            logging.getLogger(__name__).warning(
                "%s: --params-file %s: section %s names no node of this bring-up (%s): ignored",
                bringup, extra, key, ", ".join(sorted(names)),
            )  # fmt: skip


def _warn_params_file_wins(bringup: str, node, extra: Path) -> None:
    """A ``--params-file`` is applied last: a parameter it sets that the bring-up's arguments also set (``port``,
    ``kp``, …) takes the file's value — said in one line (the feed-forward α̂: :func:`_warn_params_files_alpha`)."""
    from servo_ff.bringup.servo_alpha import node_params
    from servo_ff.bringup.table import SERVO_ALPHA_BRINGUPS

    alpha = {"alpha_file", "u_nominal"} if bringup in SERVO_ALPHA_BRINGUPS else set()
    both = sorted((node_params(extra, node.name).keys() & node.overrides.keys()) - alpha)
    if both:
        logging.getLogger(__name__).warning(
            "%s: --params-file %s sets %s's %s, which the bring-up's arguments set too: the file's values are used "
            "(applied last)",
            bringup, extra, node.name, ", ".join(both),
        )  # fmt: skip


def _warn_params_files_alpha(bringup: str, params_files: list[Path]) -> None:
    """SERVO_ALPHA_BRINGUPS (sim_op3, sim_nimbro_op, sim_humanoid) give the feed-forward node the α̂ of the sim's
    servo_config's laws (one log line, the plan's); a ``--params-file`` is applied after it, so one that sets the
    node's α̂ wins, and one that sets the sim's servo_config is not the file that α̂ follows: each said in one more
    line."""
    from servo_ff.bringup.table import SERVO_ALPHA_BRINGUPS

    if bringup not in SERVO_ALPHA_BRINGUPS:
        return
    from servo_ff.bringup.servo_alpha import feedforward_params, node_params

    log = logging.getLogger(__name__)
    for extra in params_files:
        keys = sorted({"alpha_file", "servo", "model", "u_nominal"} & feedforward_params(str(extra)).keys())
        if keys:
            log.warning(
                "%s: --params-file %s sets the feed-forward node's %s: applied last, it wins over servo_config's α̂",
                bringup, extra, ", ".join(keys),
            )  # fmt: skip
        elif "servo_config" in node_params(extra, "servo_sim"):
            log.warning(
                "%s: --params-file %s sets servo_sim's servo_config: the feed-forward α̂ follows the plan's, not it "
                "(give it as --arg servo_config:=)",
                bringup, extra,
            )  # fmt: skip


def _die_with_parent() -> None:
    """In a child before exec (Linux): SIGTERM when ``up`` dies, even by SIGKILL — no node left running (a
    hardware node holding torque) with nobody to stop it."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _exit_code(name: str, rc: int, ends: bool) -> int:
    """``up``'s exit code when node ``name`` ended by itself with ``rc``: its own for an error, 128 + the signal
    that killed it; 0 only for a one-shot node (the fit) that ends the bring-up with success."""
    if rc < 0:
        print(f"[up] {name} was killed by {signal.Signals(-rc).name}", file=sys.stderr, flush=True)
        return 128 - rc
    if rc == 0 and not ends:  # before: 0, as if the bring-up had done its work
        print(f"[up] {name} ended while the bring-up ran: exit 1", file=sys.stderr, flush=True)
        return 1
    return rc


def run(ns: argparse.Namespace) -> int:
    from servo_ff.bringup import plan, python_env

    args = _parse_args(ns.arg)
    nodes = plan(ns.bringup, **args)  # once: a replay plan reads the bag and says what it found in one line
    cmds = commands(ns.bringup, args, ns.config_dir, ns.params_file, nodes)
    ends = {n.name for n in nodes if n.ends_bringup}
    if ns.dry_run:
        if ns.duration is not None:  # before: accepted, nothing said
            print(f"[up] --duration {ns.duration:g}: not used with --dry-run (nothing is started)", file=sys.stderr)
        for name, cmd in cmds:
            print(f"{name}: {shlex.join(cmd)}")
        return 0
    env = python_env()
    procs: list[tuple[str, subprocess.Popen]] = []
    stopping = {"flag": False, "signal": None}

    def stop(signum, _frame):
        stopping["flag"] = True
        stopping["signal"] = stopping["signal"] or signum

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    code = 0
    try:
        for name, cmd in cmds:
            print(f"[up] starting {name}: {shlex.join(cmd)}", flush=True)
            linux = sys.platform.startswith("linux")
            procs.append((name, subprocess.Popen(cmd, env=env, preexec_fn=_die_with_parent if linux else None)))
        t0 = time.monotonic()
        while not stopping["flag"]:
            for name, p in procs:
                rc = p.poll()
                if rc is not None:
                    print(f"[up] {name} exited with code {rc}; stopping the others", file=sys.stderr, flush=True)
                    code = _exit_code(name, rc, name in ends)
                    stopping["flag"] = True
                    break
            if ns.duration is not None and time.monotonic() - t0 >= ns.duration:
                break
            time.sleep(0.1)
    finally:
        for name, p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 5.0
        for name, p in procs:
            try:
                p.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                print(f"[up] {name} did not stop on SIGINT; terminating", file=sys.stderr)
                p.terminate()
                try:
                    p.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    print(f"[up] {name} did not stop on SIGTERM; killing", file=sys.stderr)
                    p.kill()
                    p.wait(timeout=2.0)
        for s, h in old.items():
            signal.signal(s, h)
    if code == 0 and stopping["signal"] == signal.SIGINT:  # the user's Ctrl-C: the CLI's rule (exit 130)
        raise KeyboardInterrupt
    return code
