"""The servos with a hardware error, as the hardware nodes report them on /diagnostics: one status per servo named
``<node>: <joint>`` with a ``hardware_error`` value (Hardware Error Status bits; 0 = none, −1 = unread). A node that
commands the servos (the feed-forward node) stops sending goals to a joint while its servo reports an error, and
resumes once the error is cleared (a reboot on request)."""

from __future__ import annotations

from collections.abc import Iterable

from diagnostic_msgs.msg import DiagnosticArray


def hardware_errors(msg: DiagnosticArray) -> dict[str, tuple[int, str]]:
    """{joint: (hardware_error bits, message)} of the per-servo statuses in ``msg`` (others ignored)."""
    out = {}
    for s in msg.status:
        values = {kv.key: kv.value for kv in s.values}
        if "hardware_error" not in values or ": " not in s.name:
            continue
        try:
            bits = int(values["hardware_error"])
        except ValueError:
            continue
        out[s.name.split(": ", 1)[1]] = (bits, s.message)
    return out


class FaultedJoints:
    """The joints of ``joints`` whose servo reports a hardware error (``faulted``: joint → message)."""

    def __init__(self, joints: Iterable[str]):
        self.joints = set(joints)
        self.faulted: dict[str, str] = {}

    def update(self, msg: DiagnosticArray) -> list[str]:
        """Take one /diagnostics message; lines saying what changed (a joint faulted, or cleared)."""
        lines = []
        for joint, (bits, text) in hardware_errors(msg).items():
            if joint not in self.joints or bits < 0:
                continue
            if bits > 0 and joint not in self.faulted:
                self.faulted[joint] = text
                lines.append(f"joint {joint!r}: {text}; no goals sent to it until the error is cleared")
            elif bits == 0 and joint in self.faulted:
                del self.faulted[joint]
                lines.append(f"joint {joint!r}: hardware error cleared; goals resume")
        return lines
