"""ROS 2 nodes of servo_ff: the only package that imports rclpy. Thin translation layers over the ROS-free core."""
