"""Schwarz & Behnke's experiments on the ROBOTIS OP3 over DDS under the authors' CPG scaled to the OP3 (issue 21):
``python bench/op3_mission.py --gait cpg``, the walk node on ``gait: op3_cpg`` (its rule, pre-registered in
bd333a6: 0.0354 m/s flat and energy, 0.0177 m/s obstacles, the box at the CPG's step 4, section 6 not run).

Run: python bench/op3_cpg_mission.py [op3_mission.py's arguments]   (what ``./run bench`` runs for this page)
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.argv = [str(Path(__file__).with_name("op3_mission.py")), "--gait", "cpg", *sys.argv[1:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
