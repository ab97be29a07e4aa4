"""The fit node's online RLS on α̂ (parameter ``rls``, source ``topics``): started after the first live fit, fed the
live samples every ``rls_period`` (:class:`~servo_ff.identification.alpha_rls.LiveAlphaRefiner`), its state on
``fit/result`` and, once trusted, α̂ set on the feed-forward node.

A mixin of :class:`~.fit_node.FitNode` (uses its parameter table, live samples, publisher and logger).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from std_msgs.msg import String

from servo_ff.identification.alpha_data import data_from_streams
from servo_ff.identification.alpha_rls import LiveAlphaRefiner, RLSOptions
from servo_ff.workflows.alpha import AlphaResult
from servo_ff.workflows.fit_options import gate_from


class FitRLS:
    """Online RLS of the fit node."""

    def _start_rls(self, fitted: AlphaResult) -> None:
        """RLS from the first live fit, updated every ``rls_period``."""
        options = RLSOptions(self.table["rls_forgetting"])
        self.refiner = LiveAlphaRefiner(fitted.fit, self.torque, options, gate_from(self.table.values))
        self._rls_held = False  # a hold for lack of motion said (once per hold)
        self.create_timer(self.table["rls_period"], self._on_rls)

    def _on_rls(self) -> None:
        """Online RLS: the live samples since the last update; α̂ (once trusted) to the feed-forward node."""
        v = self.table.values
        js, gl, volts = self._samples()
        if len(js) < 20 or len(gl) < 20 or not volts.size:
            return
        t0 = max(gl[0, 0], js[0, 0])
        try:
            data = data_from_streams(gl[:, 0], gl[:, 1], js[:, 0], js[:, 1], volts[-1, 1], v["kp"], v["dt"], "RLS")
            self.refiner.feed(data, t0)
        except ValueError as e:
            self.get_logger().warning(f"RLS update skipped: {e}", throttle_duration_sec=10.0)
            return
        self._say_hold(v["joint"], self.refiner.held)
        state = {"joint": v["joint"], "rls": {**self.refiner.rls.state(), "held": self.refiner.held}}
        self.pub_result.publish(String(data=json.dumps(state)))
        if state["rls"]["trusted"] and (self.worker is None or not self.worker.is_alive()):
            push = {"joint": v["joint"], "alpha": state["rls"]["alpha"]}
            self.worker = threading.Thread(target=self._push_rls, args=(push,), name="rls", daemon=True)
            self.worker.start()

    def _say_hold(self, joint: str, held: str) -> None:
        """One line when the RLS starts holding α̂ for lack of motion (the batch gate's minima), one when it resumes
        (before: a still joint's noise moved a trusted α̂, pushed every period)."""
        if held and not self._rls_held:
            self.get_logger().warning(f"RLS holds α̂({joint}): {held} (the fit's gate); it resumes when the joint moves")
        elif not held and self._rls_held:
            self.get_logger().info(f"RLS resumes on α̂({joint}): the joint moves")
        self._rls_held = bool(held)

    def _push_rls(self, push: dict[str, Any]) -> None:  # before: a failed push went unsaid
        ok, what = self._set_feedforward(push)
        if not ok:
            self.get_logger().warning(f"RLS α̂ not set: {what}", throttle_duration_sec=10.0)
