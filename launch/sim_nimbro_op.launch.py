"""ros2 launch servo_ff sim_nimbro_op.launch.py: MuJoCo NimbRo-OP + feed-forward + placo walk (its gait) under cmd_vel
(gait:=cpg: the NimbRo-OP's own CPG gait instead).

The node list and parameters come from servo_ff.bringup, the same table `servo-ff up sim_nimbro_op` reads."""

from servo_ff.bringup import launch_description


def generate_launch_description():
    return launch_description("sim_nimbro_op")
