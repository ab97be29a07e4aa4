"""Graph orchestration: which nodes a bring-up starts and how (:mod:`.table`, read by ``launch/*.launch.py`` and
``servo-ff up``), and the in-process graphs over DDS (the demo, the humanoid and OP3 missions).

Importing this package needs neither rclpy nor launch (the missions import rclpy when imported themselves)."""

from .table import (  # noqa: F401
    BRINGUPS,
    BringupFailed,
    NodeLaunch,
    config_dir,
    launch_description,
    one_shot_ended,
    plan,
    python_command,
    python_env,
)
