"""The ROS 2 executables of servo_ff (``<name>_node.py`` with a ``main()``) and the parts only they use. Thin
translation layers over the ROS-free core, on the shared plumbing of :mod:`servo_ff.ros`.

A process started as one of them ends quietly on a Ctrl-C while it imports (:mod:`servo_ff.interrupt`)."""

from servo_ff.interrupt import node_executable, quiet_start

if (_name := node_executable()) is not None:
    quiet_start(_name)
