"""Identification of servo actuator models (ROS-free): ILC and the α least-squares fit (seed 002),
simulation-MAE identification of the friction models M1–M6 (seed 004), the log readers they share, and
continuous-time transfer-function identification (seeds 000, 001, 003)."""
