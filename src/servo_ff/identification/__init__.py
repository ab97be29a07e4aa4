"""Identification of servo models from recorded data (ROS-free)."""
