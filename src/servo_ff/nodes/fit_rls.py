"""The fit node's online RLS on α̂ (parameter ``rls``, source ``topics``): started after the first live fit, fed the
live samples every ``rls_period`` (:class:`~servo_ff.identification.alpha_rls.LiveAlphaRefiner`), its state on
``fit/result``. The feed-forward node runs what this node last set on it: the batch α̂ of the fit, the refined α̂
while it is trusted, the batch α̂ again once trust is lost; each, once that node took it, is written to ``output``
(the refined one with an ``rls`` record: refined, when, samples, prediction errors, the batch α̂), so a restarted
feed-forward node reads what it ran (before: the file kept the batch fit while the node ran the refined α̂, and
a lost trust left the untrusted α̂ on the node).

A mixin of :class:`~.fit_node.FitNode` (uses its parameter table, live samples, publisher and logger).
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import numpy as np
from std_msgs.msg import String

from servo_ff.identification.alpha_data import data_from_streams
from servo_ff.identification.alpha_rls import EXCITATION_SPAN, LiveAlphaRefiner, RLSOptions
from servo_ff.workflows.alpha import AlphaResult
from servo_ff.workflows.fit_options import gate_from


class FitRLS:
    """Online RLS of the fit node."""

    def _start_rls(self, fitted: AlphaResult) -> None:
        """RLS from a live fit (each fit restarts it: its reference is what the fit set on the feed-forward node),
        updated every ``rls_period`` (one timer)."""
        options = RLSOptions(self.table["rls_forgetting"])
        span = min(EXCITATION_SPAN, 0.4 * self.table["window"])  # a sample's spans before and after it in the window
        period, window = self.table["rls_period"], self.table["window"]
        if period > window - span:  # a sample is judged once the span after it is in: the next window must hold it
            self.get_logger().warning(
                f"rls_period {period:g} s > window {window:g} s - the {span:g} s excitation span: the samples of "
                f"{period - window + span:g} s between two RLS updates are never fed (a shorter rls_period or a "
                "longer window feeds them all)"
            )
        self.refiner = LiveAlphaRefiner(fitted.fit, self.torque, options, gate_from(self.table.values), span)
        self._rls_fitted = fitted
        self._ff_alpha = [float(a) for a in fitted.fit.alpha]  # α̂ the feed-forward node has from this node
        self._rls_held = False  # a hold for lack of motion said (once per hold)
        if self._rls_timer is None:
            self._rls_timer = self.create_timer(self.table["rls_period"], self._on_rls)

    def _on_rls(self) -> None:
        """Online RLS: the live samples since the last update; α̂ (once trusted) to the feed-forward node."""
        v = self.table.values
        if self.refiner is None:  # the joint changed: no RLS until the next fit
            return
        js, gl, volts = self._samples()
        if len(js) < 20 or len(gl) < 20:
            return
        if mixed := self._mixed_publishers():  # the fit's rule: two publishers of the joint are not fed
            self.get_logger().warning(f"RLS holds α̂({v['joint']}): {mixed}", throttle_duration_sec=10.0)
            return
        try:  # the fit's supply rule (before: the last reading, the vin parameter not read)
            u_bat, _ = self._live_supply(volts, self._say_supply)
        except ValueError as e:  # before: updated on a 6.1 s old 12 V while the supply was NaN
            self.get_logger().warning(f"RLS holds α̂({v['joint']}): {e}", throttle_duration_sec=10.0)
            return
        t0 = max(gl[0, 0], js[0, 0])
        try:
            kp, _ = self._live_kp(t0, js[-1, 0])  # a gain change in the window: skipped, said
            say = self._say_gap  # before: one 'recorder gap' line every rls_period (2 lines/s)
            data = data_from_streams(gl[:, 0], gl[:, 1], js[:, 0], js[:, 1], u_bat, kp, v["dt"], "RLS", say)
            self.refiner.feed(data, t0)
        except ValueError as e:
            self.get_logger().warning(f"RLS update skipped: {e}", throttle_duration_sec=10.0)
            return
        self._say_hold(v["joint"], self.refiner.held)
        state = {
            "joint": v["joint"],
            "rls": {**self.refiner.rls.state(), "held": self.refiner.held, "still": self.refiner.still},
        }
        self.pub_result.publish(String(data=json.dumps(state)))
        rls = state["rls"]
        want = rls["alpha"] if rls["trusted"] else rls["reference"]
        if want != self._ff_alpha and (self.worker is None or not self.worker.is_alive()):
            self.worker = threading.Thread(target=self._push_rls, args=(v["joint"], want, rls), name="rls", daemon=True)
            self.worker.start()

    def _say_supply(self, text: str) -> None:
        """A supply line of an RLS update (a NaN reading left out, a given vin over the readings): one per 5 s."""
        self._throttle("RLS supply", self.get_logger().warning, f"RLS: {text}")

    def _say_gap(self, text: str) -> None:
        """A joint_states pause in the RLS's window: one line per 5 s (the same pause is in the next windows too)."""
        self._throttle("RLS recorder gap", self.get_logger().warning, text)

    def _say_hold(self, joint: str, held: str) -> None:
        """One line when the RLS starts holding α̂ for lack of motion (the batch gate's minima around each new sample),
        one when it resumes (before: a still joint's noise moved a trusted α̂, pushed every period)."""
        if held and not self._rls_held:
            self.get_logger().warning(f"RLS holds α̂({joint}): {held} (the fit's gate); it resumes when the joint moves")
        elif not held and self._rls_held:
            self.get_logger().info(f"RLS resumes on α̂({joint}): the joint moves")
        self._rls_held = bool(held)

    def _push_rls(self, joint: str, alpha: list[float], rls: dict[str, Any]) -> None:
        """Set ``alpha`` (the refined α̂ when ``rls`` is trusted, else the batch one) on the feed-forward node, then
        write it to ``output``; a change of trust said in one line (before: a failed push went unsaid)."""
        ok, what = self._set_feedforward({"joint": joint, "alpha": alpha})
        if not ok:
            self.get_logger().warning(f"RLS α̂ not set: {what}", throttle_duration_sec=10.0)
            return
        was_refined = self._ff_alpha != rls["reference"]
        self._ff_alpha = alpha
        wrote = self._write_rls(alpha, rls)
        errors = f"prediction rms {rls['rms_rls']:.3g} vs the batch α̂'s {rls['rms_reference']:.3g}"
        if rls["trusted"] and not was_refined:
            self.get_logger().info(f"RLS α̂({joint}) trusted ({errors}): {what}; wrote {wrote} (kept up to date)")
        elif not rls["trusted"]:  # one line per 5 s at most (before: unthrottled, one per flip of trust)
            say = self.get_logger().warning
            self._throttle("RLS trust lost", say, f"RLS α̂({joint}) no longer trusted ({errors}): the batch α̂ "
                           f"{np.round(alpha, 4).tolist()} set back; {what}; wrote {wrote}")  # fmt: skip

    def _write_rls(self, alpha: list[float], rls: dict[str, Any]) -> str | None:
        """``output`` made to hold what the feed-forward node now runs: the refined ``alpha`` with an ``rls`` record
        (refined, when [UTC], samples, prediction errors, the batch α̂) when trusted, else the batch fit; its path
        (None: no output, or not written, said)."""
        try:
            if not rls["trusted"]:
                return self._write_yaml(self._rls_fitted)
            when = datetime.now(timezone.utc).isoformat(timespec="seconds")
            record = {k: rls[k] for k in ("samples", "rms_rls", "rms_reference", "reference")}
            fitted = replace(self._rls_fitted, fit=replace(self._rls_fitted.fit, alpha=np.asarray(alpha, float)))
            return self._write_yaml(fitted, {"rls": {"refined": True, "at": when, **record}})
        except (ValueError, OSError) as e:
            self.get_logger().error(f"RLS α̂ not written to {self.table['output']}: {e}", throttle_duration_sec=10.0)
            return None
