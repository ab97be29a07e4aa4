"""CSV columns that are no log key: one named like a key the file lacks is refused naming that key (its default
would be used instead), any other is said in one line (kept, not used)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from pendulum_log import pendulum_log

from servo_ff.cli import main
from servo_ff.io.bam_logs import read_csv, write_csv
from servo_ff.io.servo_log import LogError

DT, N = 0.005, 600


def _csv(path, rename: dict[str, str] | None = None, **extra) -> None:
    log = pendulum_log(N, DT, volts=12.0, extra={k: np.full(N, v) for k, v in extra.items()})
    write_csv(log, path)
    text = path.read_text()
    head, _, body = text.partition("timestamp,")
    for old, new in (rename or {}).items():
        body = body.replace(old, new, 1)  # the header row only: the first line of the body
    path.write_text(head + "timestamp," + body)


@pytest.mark.parametrize(
    "written, meant", [("input_voltage", "input_volts"), ("torque_enabled", "torque_enable"), ("speeds", "speed")]
)
def test_a_misspelled_key_the_fits_would_default_is_refused_naming_it(tmp_path, capsys, written, meant):
    """Before: 'input_voltage' holding 12 V was ignored and the metadata's 15 V used: α̂0 15.51 for 12.41, exit 0."""
    path = tmp_path / "log.csv"
    _csv(path, {meant: written})
    with pytest.raises(LogError, match=rf"log.csv: column '{written}' is no log key; did you mean '{meant}'\?"):
        read_csv(path)
    assert main(["fit", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and written in err and meant in err, err


def test_other_unknown_columns_are_said_in_one_line_and_kept(tmp_path, caplog):
    path = tmp_path / "log.csv"
    _csv(path, current=0.3, tmp=31.0)
    with caplog.at_level(logging.WARNING):
        log = read_csv(path)
    lines = [r.getMessage() for r in caplog.records if "no log keys" in r.getMessage()]
    assert len(lines) == 1 and "'current', 'tmp' (close to 'temp')" in lines[0] and "not used" in lines[0], lines
    assert set(log.extra) == {"current", "tmp"}
    assert (log.input_volts == 12.0).all()
