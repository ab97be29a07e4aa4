"""The pipelines every front-end runs (CLI, nodes, benchmarks, demo), ROS-free: ILC on the bench, α̂ fits from
any source, identification. The CLI parses arguments and the nodes translate messages; both call these."""
