"""servo_ff: servo actuator models, identification, Dynamixel I/O and model-based feed-forward.

Pipeline (sub-packages): models → identification → dynamics → dynamixel → nodes.
Everything except ``servo_ff.nodes`` is ROS-free.
"""

__version__ = "0.1.0"
