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


class FitRLS:
    """Online RLS of the fit node."""

    def _start_rls(self, fitted: AlphaResult) -> None:
        """RLS from the first live fit, updated every ``rls_period``."""
        self.refiner = LiveAlphaRefiner(fitted.fit, self.torque, RLSOptions(self.table["rls_forgetting"]))
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
        state = {"joint": v["joint"], "rls": self.refiner.rls.state()}
        self.pub_result.publish(String(data=json.dumps(state)))
        if state["rls"]["trusted"] and (self.worker is None or not self.worker.is_alive()):
            push = {"joint": v["joint"], "alpha": state["rls"]["alpha"]}
            self.worker = threading.Thread(target=self._push_rls, args=(push,), name="rls", daemon=True)
            self.worker.start()

    def _push_rls(self, push: dict[str, Any]) -> None:  # before: a failed push went unsaid
        ok, what = self._set_feedforward(push)
        if not ok:
            self.get_logger().warning(f"RLS α̂ not set: {what}", throttle_duration_sec=10.0)
