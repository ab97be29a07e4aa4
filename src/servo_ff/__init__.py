"""servo_ff: servo actuator models, identification, Dynamixel I/O and model-based feed-forward.

Pipeline (sub-packages): models → identification → dynamics → dynamixel → nodes (ROS executables, on the
plumbing of ``ros``) → bringup (graphs of nodes). Everything except ``nodes``, ``ros`` and ``bringup`` is ROS-free.
"""

__version__ = "0.1.0"
