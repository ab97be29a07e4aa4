"""Soak run of the ROBOTIS OP3 walking under the placo walk node: ``python bench/soak.py --bringup sim_op3`` (the
``sim_op3`` bring-up, each node its own process, lockstep as fast as it steps, 10 minutes of wall time, under a
``cmd_vel`` circle of 0.05 m/s and 0.1 rad/s): memory, clock drift, logged warnings and errors, falls and the path
walked.

Run: python bench/soak_op3.py [soak.py's arguments]   (what ``./run bench`` runs for this page)
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.argv = [str(Path(__file__).with_name("soak.py")), "--bringup", "sim_op3", *sys.argv[1:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
