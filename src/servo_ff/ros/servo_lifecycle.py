"""The lifecycle of a servo interface node (``rclpy.lifecycle``), as ros2_control manages hardware components:
configure = connect (torque stays off), activate = read afresh (``hw_refresh``), hold that position, torque on,
start the control loop; deactivate = hold, torque off, stop the loop; cleanup / shutdown = close; an error goes back
to unconfigured. With ``reads_while_inactive`` (hardware, sims) the loop also runs while inactive, without goals
(a sim steps its physics with torque off).
``autostart`` drives configure → activate once the node spins (retrying either; a parameter error is not retried,
:meth:`ServoLifecycle.config_refusal`) for users without a lifecycle manager. A mixin over the ``hw_*`` hooks of
:class:`~.servo_base.ServoInterfaceNode`."""

from __future__ import annotations

from rclpy.lifecycle import LifecycleState, TransitionCallbackReturn

from .throttle import throttle_key


class ServoLifecycle:
    """Transition callbacks: each runs its body, logs one line, and maps an exception to ERROR."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._guard_change_state()

    def _guard_change_state(self) -> None:
        """A ``change_state`` request for a transition the present state does not have (activate twice: a lifecycle
        manager retrying, or beside ``autostart``) is answered ``success: false`` with one line naming both. rclpy
        7.1 raises out of its service callback there (rclpy#1209, fixed upstream in #1319), which ended the
        process: a hardware node died, ``on_exit`` applied."""
        srv = getattr(self, "_service_change_state", None)
        if srv is None:  # no communication interface
            return
        inner = srv.callback

        def change_state(req, resp):
            t = req.transition
            have = self._state_machine.available_transitions  # (id, label, start id, start label, goal id, ...)
            if not any((x[1] == t.label) if t.label else (x[0] == t.id) for x in have):
                state = self._state_machine.current_state[1]
                self.get_logger().warning(
                    f"lifecycle transition {t.label or t.id} refused: not available in state {state!r} "
                    f"(available: {', '.join(x[1] for x in have) or 'none'})"
                )
                resp.success = False
                return resp
            return inner(req, resp)

        srv.callback = change_state

    _refused_config = ""  # the parameter error configure last failed on ("" none)

    def config_refusal(self) -> str:
        """Why the parameter set can never be configured ("" if it can): a joint limit or ``kp`` given at start-up
        beyond the servo type's range (:mod:`servo_ff.nodes.servo_ranges`; at run time the parameter callback
        refuses them). Configure fails on it with one line, and ``autostart`` does not retry it."""
        return ""

    def _autostart(self) -> None:
        if self._autostart_timer is not None:
            self.destroy_timer(self._autostart_timer)
            self._autostart_timer = None
        refused = self.config_refusal()  # a parameter error configure said once: never retried until it changes
        if self.state_label == "unconfigured" and not (refused and refused == self._refused_config):
            self.trigger_configure()
        if self.state_label == "inactive":
            self.trigger_activate()
        if self.state_label in ("unconfigured", "inactive"):  # e.g. the bus is not there yet: retry
            self._autostart_timer = self.create_timer(
                self.autostart_retry_period(), self._autostart, clock=self._steady
            )

    def _transition(self, name: str, body) -> TransitionCallbackReturn:
        try:
            ok, msg = body()
        except Exception as e:  # rclpy would turn an exception into a silent ERROR transition
            ok, msg = False, f"{type(e).__name__}: {e}"
            self.get_logger().error(f"{name} failed: {msg}")
            return TransitionCallbackReturn.ERROR
        finally:
            self.publish_torque_state()  # <prefix>/torque_enabled: the state the transition left (when changed)
        if ok:
            self.get_logger().info(f"{name}: {msg}")
            return TransitionCallbackReturn.SUCCESS
        # per reason (autostart's retries of one failure are one line; a different failure gets its own)
        self.throttle(throttle_key(f"lifecycle:{name}", msg), self.get_logger().error, f"{name} failed: {msg}")
        return TransitionCallbackReturn.FAILURE

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            refused = self._refused_config = self.config_refusal()
            if refused:  # a user's mistake, not a missing bus (before: the bus refused it at every retry, forever)
                again = "autostart configures once it is changed" if self.table["autostart"] else "change it first"
                return False, f"{refused}: a parameter error; {again}"
            ok, msg = self.hw_configure()
            if ok:
                self.configured, self.state_label = True, "inactive"
                self.publish_torque_state(force=True)  # once at configure, changed or not
                if self.reads_while_inactive:  # read-only: joint_states flow, no goal is written
                    self._start_loop()
            return ok, msg

        return self._transition("configure", body)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            ok, msg = self.hw_refresh()  # held where it stands now (it may have moved with torque off)
            if not ok:
                return ok, msg
            self._hold_present()
            ok, msg = self.hw_activate()
            if ok:
                self.active, self.state_label = True, "active"
                self._start_loop()
            return ok, msg

        return self._transition("activate", body)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            self._stop_loop()
            self.active, self.state_label = False, "inactive"
            self._end_action()
            self._hold_present(running=True)
            result = self.hw_deactivate()
            if self.reads_while_inactive:
                self._start_loop()
            return result

        return self._transition("deactivate", body)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            self._stop_loop()
            self.hw_cleanup()
            self.configured, self.state_label = False, "unconfigured"
            return True, "closed"

        return self._transition("cleanup", body)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            text = "closed"
            self._stop_loop()
            if self.active:
                self.active = False
                self._end_action()
                self._hold_present(running=True)
                text = f"{self.hw_deactivate()[1]}; closed"
            if self.configured:
                self.hw_cleanup()
            self.configured, self.state_label = False, "finalized"
            return True, text

        return self._transition("shutdown", body)

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._stop_loop()
        self.active = False
        self._end_action()
        try:
            self.hw_cleanup()
        except Exception as e:  # noqa: BLE001 (best effort: back to unconfigured)
            self.get_logger().error(f"cleanup after an error failed: {e}")
        self.configured, self.state_label = False, "unconfigured"
        self.publish_torque_state()
        return TransitionCallbackReturn.SUCCESS

    def _end_action(self) -> None:
        """The node leaves the active state: a FollowJointTrajectory goal in progress is aborted."""
        if getattr(self, "fjt", None) is not None:
            self.fjt.deactivate()

    def _start_loop(self) -> None:
        self._stop_loop()
        self.timer = self.create_timer(self.period, self._tick)

    def _stop_loop(self) -> None:
        if self.timer is not None:
            self.destroy_timer(self.timer)
            self.timer = None
