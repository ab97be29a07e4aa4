"""ros2 launch servo_ff sim_humanoid.launch.py: MuJoCo humanoid + feed-forward + walking-stack stand-in.

The node list and parameters come from servo_ff.bringup, the same table `servo-ff up sim_humanoid` reads."""

from servo_ff.bringup import launch_description


def generate_launch_description():
    return launch_description("sim_humanoid")
