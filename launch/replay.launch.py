"""ros2 launch servo_ff replay.launch.py: alpha fit from a rosbag2 recording (bag:=PATH).

The node list and parameters come from servo_ff.bringup, the same table `servo-ff up replay` reads."""

from servo_ff.bringup import launch_description


def generate_launch_description():
    return launch_description("replay")
