"""`servo-ff virtual-bus` command line: what it refuses before serving (a duration that is no time: one line,
exit 2)."""

from __future__ import annotations

import pytest

from servo_ff.bus.virtual_bus import VirtualBus
from servo_ff.cli import main


@pytest.fixture
def never_served(monkeypatch):
    """A command line that should be refused must not reach the serve loop (before: it served for ever)."""

    def served(self) -> None:
        pytest.fail("the bus was served")

    monkeypatch.setattr(VirtualBus, "serve_forever", served)


@pytest.mark.parametrize("duration", ["0", "-1", "nan", "inf"])
def test_a_duration_that_is_no_time_is_refused_in_one_line(duration, capsys, never_served):
    """Before: --duration 0 served for ever (0 is false: no timer), -1 stopped at once, exit 0."""
    assert main(["virtual-bus", "--duration", duration]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--duration {duration}: expected a number of seconds > 0" in err, err
