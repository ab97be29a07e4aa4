"""ros2 launch servo_ff identify.launch.py: servos (source:=sim|hardware) + ILC + alpha fit.

The node list and parameters come from servo_ff.bringup, the same table `servo-ff up identify` reads."""

from servo_ff.bringup import launch_description


def generate_launch_description():
    return launch_description("identify")
