"""File formats and paths shared by every front-end (CLI, nodes, benchmarks, demo); no ROS import."""
