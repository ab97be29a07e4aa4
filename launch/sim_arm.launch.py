"""ros2 launch servo_ff sim_arm.launch.py: MuJoCo 2R arm tracing its triangle path.

The node list and parameters come from servo_ff.bringup, the same table `servo-ff up sim_arm` reads."""

from servo_ff.bringup import launch_description


def generate_launch_description():
    return launch_description("sim_arm")
