"""Graph orchestration: which nodes a bring-up starts (:mod:`.table`) and how (:mod:`.node_launch`), read by
``launch/*.launch.py`` and ``servo-ff up``, and the in-process graphs over DDS (the demo, the humanoid and OP3
missions).

Importing this package needs neither rclpy nor launch (the missions import rclpy when imported themselves)."""

from .node_launch import BringupFailed, NodeLaunch, config_dir, one_shot_ended, python_command, python_env  # noqa: F401
from .table import BRINGUPS, launch_description, plan  # noqa: F401
