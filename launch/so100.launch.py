"""ros2 launch servo_ff so100.launch.py: an SO-101 arm (six Feetech STS3215, protocol sts) visiting its
waypoints.

The node list and parameters come from servo_ff.bringup, the same table `servo-ff up so100` reads."""

from servo_ff.bringup import launch_description


def generate_launch_description():
    return launch_description("so100")
