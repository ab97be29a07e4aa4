"""ros2 launch servo_ff sim_op3.launch.py: MuJoCo OP3 + feed-forward + placo walk under cmd_vel (gait:=cpg: the
authors' CPG scaled to the OP3 instead).

The node list and parameters come from servo_ff.bringup, the same table `servo-ff up sim_op3` reads."""

from servo_ff.bringup import launch_description


def generate_launch_description():
    return launch_description("sim_op3")
