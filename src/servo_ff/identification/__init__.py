"""Identification of servo actuator models (ROS-free): ILC and the α least-squares fit (Schwarz & Behnke (Compliant
Robot Behavior)),
simulation-MAE identification of the friction models M1–M6 (Duclusaud et al. (Extended Friction Models)), the log
readers they share, and
continuous-time transfer-function identification (Maximo et al., Santana et al., Wada et al.)."""
