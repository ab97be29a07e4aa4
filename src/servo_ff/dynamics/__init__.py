"""Model-based feed-forward for humanoids and arms (Schwarz & Behnke (Compliant Robot Behavior) §3.3, §5.2), ROS-free.

* :mod:`.robot` — URDF → pinocchio models (floating and fixed base), joint names and limits;
* :mod:`.inverse_dynamics` — τ with the support foot fixed (floating base + contact wrench), double-support
  blending, gravity from an IMU quaternion, fixed-base RNEA for arms;
* :mod:`.imu_reading` — what of an IMU reading can be used (the quaternion checked, REP-145's absent fields);
* :mod:`.alpha` — per-joint α̂ of Eq. 19 from YAML/JSON;
* :mod:`.feedforward` — :class:`~.feedforward.FeedForwardController`, the per-tick goal computation;
* :mod:`.gait`, :mod:`.mujoco_humanoid` — the quasi-static stepping gait and the closed-loop MuJoCo experiment.
"""
