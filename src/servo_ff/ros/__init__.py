"""ROS 2 plumbing shared by the nodes (rclpy): topic names and parameter tables (``ParamSpec``), message
conversions, diagnostics, clocks, side nodes, the lifecycle of a servo interface and the test/bench harness."""
