"""Agreement with bam's simulator: max |Δθ| between our rollout and test/bam_reference.py (a transcription of
Rhoban/bam @ 1b5a1ce), per parameter file bam publishes and per dt, on the test's pendulum run.

The run is test_models_bam_equality.py's (test/bam_cases.py `pendulum_run`): 6 s lift, hold, H-bridge
released, fall, at two alternating gains and the nominal supply − 0.1 V. Duclusaud et al., *Extended Friction
Models for the Physics Simulation of Servo Actuators*, Algorithm 1. The requirement is ≤ 1e-9 rad.

    python bench/bam_agreement.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "test"))  # bam_reference (the oracle) and bam_cases (the run)

from bam_cases import CASES, DTS, case_gain, pendulum_run  # noqa: E402


def main() -> int:
    files = list(dict.fromkeys((servo, model) for servo, model, _ in CASES))
    print("max |Δθ| [rad] between our rollout and bam's simulator; θ span: range of bam's θ (smaller of the two dt)")
    head = "".join(f"{'kp':>6}{f'dt {dt * 1e3:g} ms':>12}" for dt in DTS)
    print(f"{'file':<12}{head}{'θ span [rad]':>14}")
    worst = 0.0
    for servo, model in files:
        row, span = f"{servo + '/' + model:<12}", np.inf
        for dt in DTS:
            ours, ref = pendulum_run(servo, model, dt)
            diff = float(np.max(np.abs(ours - ref)))
            worst = max(worst, diff)
            span = min(span, float(np.ptp(ref)))
            row += f"{case_gain(servo, model, dt):>6g}{diff:>12.2e}"
        print(row + f"{span:>14.3f}")
    print(f"largest difference {worst:.2e} rad over {len(files)} files × {len(DTS)} dt (requirement ≤ 1e-9 rad)")
    print(f"RESULT max_abs_dtheta_rad={worst:.2e} files={len(files)}")
    return 0 if worst <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
