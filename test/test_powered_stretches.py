"""The α fit of a log uses its powered stretches (torque on), each filtered on its own, and says what it left out:
a log that starts unpowered is not lost."""

from __future__ import annotations

import numpy as np
import pytest
from pendulum_log import pendulum_log

from servo_ff.identification.alpha_data import data_from_log, data_from_samples, fit_alpha_data, pendulum_torque
from servo_ff.io.bam_logs import write_csv
from servo_ff.io.servo_log import LogError, ServoLog
from servo_ff.workflows.alpha import fit_alpha_source

DT, N = 0.005, 800


def _log(enable: np.ndarray) -> ServoLog:
    """A pendulum log moving both ways under a varying load (0.5 kg at 0.15 m, kp 8, 15 V), torque ``enable``."""
    return pendulum_log(N, DT, enable)


def _alpha_on(log: ServoLog, spans) -> np.ndarray:
    data = data_from_samples(log.goal_position, log.position, 15.0, 8.0, DT, "oracle", spans)
    return fit_alpha_data(data, pendulum_torque(0.5, 0.15)).alpha


def test_a_log_that_starts_unpowered_is_fitted_on_its_powered_samples(tmp_path):
    """Before: torque off for the first 0.5 s lost the whole log: '(0 powered samples): 0 sample(s)', exit 2."""
    enable = np.ones(N)
    enable[:100] = 0
    path = tmp_path / "late_enable.csv"
    write_csv(_log(enable), path)
    res = fit_alpha_source(path)
    assert res.data.source.endswith("(700 powered samples, 100 unpowered not used)"), res.data.source
    np.testing.assert_allclose(res.fit.alpha, _alpha_on(_log(enable), ((100, N),)), rtol=1e-9, atol=1e-9)


def test_torque_off_in_the_middle_gives_two_stretches_never_filtered_across():
    enable = np.ones(N)
    enable[300:360] = 0
    data = data_from_log(_log(enable))
    assert data.segments == ((0, 300), (300, 740)), data.segments
    assert data.source.endswith("(740 powered samples in 2 stretches (torque off between), 60 unpowered not used)")


def test_powered_stretches_too_short_are_said_and_none_is_one_line():
    enable = np.zeros(N)
    enable[5:10] = 1  # 5 samples: below the Savitzky–Golay window
    enable[200:N] = 1
    assert "5 in powered stretches shorter than 11 samples not used" in data_from_log(_log(enable)).source
    with pytest.raises(LogError, match=r"no powered stretch of 11 samples \(5 powered samples of 800\)"):
        data_from_log(_log(np.where(np.arange(N) < 5, 1.0, 0.0)))
