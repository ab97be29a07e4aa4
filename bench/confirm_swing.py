"""The pre-registered confirmation of ``torque_saturation`` again, now that ``identify`` holds the swing armature.

Why again (issue 23): bench/confirm_law.py's run (rule 42c570f) found ``torque_saturation`` not validated — 2-fold
7/8 but gain 4.74 < spread 5.90 mrad; fastest-out 5/8; kp 400 → kp 100 8/8, 16.29 > 7.21 — with the armature
searched. Since then (docs/real_logs.md, "Why the fastest trajectory is missed") the slow fit's armature was found
pulled low by the kp 400 ``lift_and_drop`` stall the model does not hold, and ``identify`` holds it by default at the
training logs' free-swing estimate (identification/swing_armature.py). The stall's leak into the armature may have
masked or faked the saturation's effect; and the cross-gain diagnosis points at a torque-dependent law.

The rule, written and committed before any of its runs (2026-11-26, round 3, ninth session); nothing here is chosen
on its outcome. It is 42c570f's rule (bench/confirm_law.py: the same candidate unchanged, τ_s 0.2–2 N·m from 0.35;
M4 by ``identify_nested`` M1 → M3 → M4 with 2000 evaluations per model, then the baseline and the candidate each
refitted with 800 CMA-ES evaluations; the same five cases per seed: 2-fold A → B and B → A, fastest out, kp 100 →
kp 400, kp 400 → kp 100; per seed and split Δ = candidate − baseline of the held-out MAE averaged over the split's
directions; seed spread = the baseline's held-out range over the seeds per direction, mean over directions; ≤ 2
processes) with three changes only:

* **(i) The armature** as ``identify`` holds it by default: at the free-swing estimate of *each case's own training
  logs* (torque-off half-swings ≥ 0.1 rad; ``swing_armature``), held in M4's M1 → M3 → M4 chain and in both refits
  (baseline and candidate alike, so neither reopens it). Where a case's training logs have no torque-off swing it
  is searched, as before and as ``identify`` does. On the shared logs (computed from the training logs before any
  fit): fold A (``sin_sin``, ``lift_and_drop``) → 0.00227 kg·m² (6 half-swings); fold B (``up_and_down``,
  ``sin_time_square``) has none → **searched** in B → A; the slow three → 0.00227; kp 100 → 0.00230 (2 half-swings);
  kp 400 → 0.00227 (4).
* **(ii) Seeds 16–23**, never used in any run. One seed (16), sized first alone; if its wall time × 4 (8 seeds in 2
  processes) exceeds ~40 min, the seeds are cut to 16–21 (pass: lower in ≥ 5 of 6) in a commit before the rest
  runs. The run re-runs seed 16 (a check that it repeats).
* **(iii) Minimum effect**: a split passes only if, in addition, the mean gain is ≥ 1 mrad (with ``identify``'s four
  searches and polish a seed spread can be tiny, 0.12 mrad in bench/datasheet_resistance.py).

**A split passes** when Δ < 0 in all seeds but at most one, the mean gain exceeds the seed spread and is ≥ 1 mrad.
**Decision** as before: ``torque_saturation`` validates when the 2-fold split, the fastest-out split and kp 400 →
kp 100 all pass; kp 100 → kp 400 is run and reported only (kp 100's law torque stays ≤ 0.31 N·m: τ_s not
identifiable there). If it validates it is still not made an ``identify`` option here (a later task).

Run: python bench/confirm_swing.py [--seeds 16,…,23] [--jobs 2]   (any bench/confirm_law.py option)
     python bench/confirm_swing.py --combine out_seed16.txt …   # the summary from saved outputs
Last line: bench/confirm_law.py's RESULT with ``min_gain=0.00100 armature=swing`` after ``seeds=``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from confirm_law import main  # noqa: E402

SEEDS = tuple(range(16, 24))
RULE = ["--swing-armature", "--min-gain", "0.001", "--seeds", ",".join(map(str, SEEDS))]

if __name__ == "__main__":
    sys.exit(main(RULE + sys.argv[1:]))
