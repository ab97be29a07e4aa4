"""`servo-ff virtual-bus` command line: what it refuses before serving (a duration that is no time, fault ids not on
the bus: one line, exit 2)."""

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


@pytest.mark.parametrize(
    "flags,said",
    [
        (["--silent", "9@0", "--silent", "2@1", "--silent", "7@0+1"], "--silent given for ids [7, 9]"),
        (["--overload", "5@1"], "--overload given for ids [5]"),
        (["--brownout", "4@0.5", "--brownout", "1@1"], "--brownout given for ids [4]"),
    ],
)
def test_fault_ids_that_are_not_on_the_bus_are_refused_naming_them(flags, said, capsys, never_served):
    """Before: `--ids 1-3 --silent 9@0` served with no servo silent, unsaid (the schedule skips unknown ids)."""
    assert main(["virtual-bus", "--ids", "1-3", *flags]) == 2
    err = capsys.readouterr().err
    assert err == f"servo-ff virtual-bus: error: {said} that are not in --ids 1-3\n", err
