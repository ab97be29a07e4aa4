"""ros2 launch servo_ff robot.launch.py: Dynamixel hardware servos + feed-forward.

The node list and parameters come from servo_ff.bringup, the same table `servo-ff up robot` reads."""

from servo_ff.bringup import launch_description


def generate_launch_description():
    return launch_description("robot")
