"""The ROS 2 executables of servo_ff (``<name>_node.py`` with a ``main()``) and the parts only they use. Thin
translation layers over the ROS-free core, on the shared plumbing of :mod:`servo_ff.ros`."""
