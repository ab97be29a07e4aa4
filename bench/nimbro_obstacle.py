"""Schwarz & Behnke's obstacle experiment (seed 002 §5.2, Fig. 6) on the paper's own robot, the NimbRo-OP (issue 21),
ROS-free (``dynamics.walk_sim.simulate_walk``): is the OP3's failure to reproduce it the OP3, or our stack?

Run: python bench/nimbro_obstacle.py [--workers 1|2] [--fig6b docs/img/nimbro_fig6b.png]

Pre-registered (this docstring was committed before any obstacle run on the NimbRo-OP; nothing below is tuned):

* Robot: urdf/nimbro_op.urdf (its authors' nimbro_op.xml, 6.46 kg), config/servos_nimbro_op.yaml (MX-106 M4 legs,
  MX-64 M4 arms and neck, bam's PWM position law at 15 V), the gait ``dynamics.nimbro_walk.nimbro_walk_params()``
  (step 0.42 s) as committed in bd5dca9, chosen on flat ground only; ``simulate_walk``'s defaults otherwise (0.48 s
  hold in the stance, 8 ms goals (the NimbRo-OP's 125 Hz), 1 ms physics, 4096 counts/rev, 1 period of latency).
* Controllers: (a) high-gain P, k_P 53.125 (the humanoid mission's high gain, ``mujoco_humanoid.KP_HIGH``: the
  MX-106(2.0) factory gain); (b) plain P at 0.35 of it (18.6); (c) (b) + feed-forward, α̂ per joint from the servo
  file at 15 V (``simulate_walk(alpha=None)``), gravity from the true trunk orientation (the paper's IMU).
* Obstacles: heights 15 mm and 5 mm (the paper's); shapes ``board`` (0.4 m wide, 1 m long, across the path, placed
  at the walk start with both feet down, its near edge 5 mm ahead of the soles) and ``foot_box`` (a box under the
  right foot at mid-swing of step 5); flat ground (0 mm) run once per speed and controller.
* Speeds: 0.025, 0.05 and 0.095 m/s (the paper's "very slow velocity" is not given; 0.095 is the OP3 bench's 0.05 m/s
  scaled by leg length, 0.05 × 0.479 / 0.2507 m; the slower two as on the OP3); 16 steps per run.
* Stood / fell: the existing rule, a fall is a trunk tilt > 0.6 rad (``walk_sim.FALL_TILT``), its direction the
  larger of pitch and roll at that moment (op3_obstacle_sweep's ``direction``).
* The paper's result in a cell: (a) fell backwards after its first foot touched the obstacle and (c) stood (the OP3
  bench's ``paper``). ``nimbro_paper_result=k/n``: over the 15 mm cells of both shapes at the speeds at which (a)
  stood on flat ground (n), those with the paper's result (k). The paper's result holds on the NimbRo-OP if k = n > 0,
  partly if 0 < k < n, not if k = 0.
* Fig. 6b: trunk pitch over time of (a) and (c) on the 15 mm board at the slowest speed at which (a) falls there (at
  0.025 m/s if it stands at all three), the first touch marked (docs/img/nimbro_fig6b.png).
* Energy (paper: left knee 189 J → 140 J over 40 steps, −26 %): (a), (b), (c) on flat ground, 40 steps at 0.05 m/s;
  E = ∫U·I dt per joint (the servo layer's, signed), compared over the whole steps all of them walked
  (``bringup.op3_energy``: common_steps / energy_over); reductions 1 − E(c)/E(a) over both knees and over all joints.
* Supplement (not in the paper-result count): the authors' own code writes the MX P register as effort × 32
  (nimbro-op-ros b1f777a ``robotcontrol/src/hw/robotinterface.cpp``: ``pValue = realEffort * 32``), so their
  "k_p = 1.0" may be P = 32; (a) and (c) with k_P 32 and 0.35 × 32 on flat ground and at 15 mm, both shapes, all
  speeds.

Last line: RESULT nimbro_mass_kg=… nimbro_flat_falls=… (controllers that fell on flat ground at any speed, ``none``)
nimbro_box15_ac=… nimbro_board15_ac=… nimbro_box5_ac=… nimbro_board5_ac=… (per speed, slowest first, (a) then (c), S
stood, F fell) nimbro_paper_result=k/n nimbro_knee_energy40_reduction=… nimbro_energy40_reduction=…
"""
