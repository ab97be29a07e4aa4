"""Schwarz & Behnke's obstacle experiment (seed 002 §5.2, Fig. 6) on the NimbRo-OP with its authors' CPG gait over DDS,
against the ROS-free bench of the same rule (bench/nimbro_cpg_obstacle.py), issue 21 item 5.

Run: python bench/nimbro_dds_obstacle.py [--fig6b docs/img/nimbro_dds_fig6b.png]

Pre-registered (this docstring was committed before any DDS obstacle run; nothing below is tuned). The rule of
bench/nimbro_cpg_obstacle.py as committed in 7b2f983, run over DDS:

* Graph: the walking mission's (``bringup.op3_mission.run_op3``: MuJoCo sim node, feed-forward node, walk node in one
  harness, lockstep on the sim's ``/clock``, stamped goals) built for the NimbRo-OP from its bring-up YAML
  (``bringup.robot_graph.bringup_graph("sim_nimbro_op", NIMBRO_KNEES, gait="cpg")``: config/sim_nimbro_op.yaml's
  nodes as ``servo-ff up sim_nimbro_op gait:=cpg`` gives them, α̂ from the servo file; urdf/nimbro_op.urdf,
  config/servos_nimbro_op.yaml, 125 Hz, 1 ms physics, 4096 counts/rev, 1 period of latency). The walk node runs
  ``gait: nimbro_cpg`` (``CpgConfig()``'s defaults, the same as the ROS-free plan's) under ``cmd_vel`` linear.x = vx,
  published before the walk starts.
* Cells: the rule's, all of them (the grid is small enough for one process: 45 runs): flat ground, then ``board`` and
  ``foot_box`` at 5 and 15 mm; speeds 0.025, 0.05 and 0.080 m/s (gcv.x 1); controllers (a) high-gain P k_P 53.125,
  (b) 0.35 of it (18.6), (c) (b) + feed-forward. Not run: the k_P 32 supplement and the energy (over DDS in
  bench/nimbro_dds_energy.py).
* Steps: 16 commanded, then the command withdrawn: cmd_vel 0 published so that the engine latches 0 at the same phase
  centre as the ROS-free plan's withdrawal (the start of step 18: at the middle of step 17 less the walk node's
  look-ahead, horizon + 4 ticks + half a publish_period, the time its engine ticks ahead of the sim's clock). The run
  ends when the ROS-free plan ends (its halt + 0.5 s). One difference is known before running: the walk node never
  halts (with cmd_vel 0 it steps in place, gcv sloping to 0), where the plan halts once gcv < 0.1 at a phase centre;
  the start differs too (DDS: 0.5 s, then a 2 s approach from the sim's start pose to the halt pose; ROS-free: 0.48 s
  held in the halt pose).
* Obstacles, placed in the sim node as the OP3 mission does (``obstacle_shape`` set at start, ``obstacle_height`` set
  in the sim's period tap): the board (0.4 × 1 m across the path, its near edge 5 mm ahead of the soles) at the walk
  start with both feet down; the foot box under the right foot at the middle of its third swing (the CPG's step 4,
  ``robot_graph.step_times``, the same time as the ROS-free plan's).
* Stood / fell: a fall is a trunk tilt > 0.6 rad (the sim's ``imu/data``), its direction the larger of pitch and roll
  at that moment; the first touch: the first period after which a foot's geom is in contact with the obstacle.
* The paper's result in a cell: (a) fell backwards after its first foot touched the obstacle and (c) stood.
  ``dds_cpg_paper_result=k/n``: over the 15 mm cells of both shapes at the speeds at which (a) stood on flat ground
  over DDS (n), those with the paper's result (k).
* What is compared: each of the 45 cells against the ROS-free bench's same cell (``nimbro_obstacle.run_cell`` with the
  CPG, recomputed in the same run): it agrees if both stood, or both fell in the same direction;
  ``agree_with_rosfree=k/45``. Diagnostic, not the comparison: the same against the ROS-free walk sampled as the
  nodes sample it (``simulate_walk(desired="walk_node")``): ``agree_with_rosfree_walknode=k/45``. Where DDS and
  ROS-free disagree, the cause is looked for (sampling, latency, contact timing, the stop) and reported, not fixed
  here by changing the rule.
* Fig. 6b over DDS: trunk pitch of (a) and (c) on the 15 mm board at the slowest speed at which DDS (a) falls there
  (0.025 m/s if it stands at all three), the first touch marked (docs/img/nimbro_dds_fig6b.png), from the cells' runs.

Last line: RESULT dds_cpg_flat_falls=… dds_cpg_board15_ac=… dds_cpg_box15_ac=… dds_cpg_board5_ac=… dds_cpg_box5_ac=…
(per speed, slowest first, (a) then (c), S stood, F fell) dds_cpg_paper_result=k/n agree_with_rosfree=k/n
agree_with_rosfree_walknode=k/n rtf=… (the DDS runs' sim s / wall s) load=… (the 1-min load average after the runs)
"""
