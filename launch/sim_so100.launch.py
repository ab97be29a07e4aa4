"""ros2 launch servo_ff sim_so100.launch.py: MuJoCo SO-101 arm (six STS3215) visiting its waypoints.

The node list and parameters come from servo_ff.bringup, the same table `servo-ff up sim_so100` reads."""

from servo_ff.bringup import launch_description


def generate_launch_description():
    return launch_description("sim_so100")
