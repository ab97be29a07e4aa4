"""The parameter tables of ``docs/nodes.md``, generated from what each node really declares (its ``ParamSpec``
rows: name, default, unit, range, meaning), like ros2_controllers' generated parameter tables.

    python -m servo_ff.nodes.param_docs docs/nodes.md      # rewrite the generated section
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

BEGIN, END = "<!-- generated: servo_ff.nodes.param_docs -->", "<!-- end generated -->"


def _nodes() -> list[tuple[str, type, dict[str, Any]]]:
    from servo_ff.io.paths import share_file

    from .feedforward_node import FeedForwardNode
    from .fit_node import FitNode
    from .hardware_node import HardwareNode
    from .ilc_node import ILCNode
    from .sim_node import SimNode
    from .state_publisher_node import StatePublisherNode
    from .walk_node import WalkNode
    from .walker_node import WalkerNode

    urdf = str(share_file("urdf", "pendulums2.urdf"))
    return [
        ("servo_sim_node", SimNode, {}),
        ("servo_hardware_node", HardwareNode, {"autostart": False}),
        ("servo_feedforward_node", FeedForwardNode, {"urdf_path": urdf, "mode": "fixed"}),
        ("servo_ilc_node", ILCNode, {}),
        ("servo_fit_node", FitNode, {"urdf_path": urdf, "joint": "pendulum_1", "run_on_start": False}),
        ("servo_walker_node", WalkerNode, {}),
        ("servo_state_publisher_node", StatePublisherNode, {"urdf_path": urdf}),
        ("servo_walk_node", WalkNode, {}),
    ]


def _value(v: Any) -> str:
    if isinstance(v, float) and math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if isinstance(v, str):
        return f"`{v}`" if v else '`""`'
    return f"`{v}`"


def _range(spec) -> str:
    if spec.choices:
        return " \\| ".join(f"`{c}`" for c in spec.choices)
    if spec.lo is None and spec.hi is None:
        return ""
    lo = "−∞" if spec.lo is None else f"{spec.lo:g}"
    hi = "∞" if spec.hi is None else f"{spec.hi:g}"
    return f"[{lo}, {hi}]"


def tables() -> str:
    """One markdown table per node, from the specs its ParameterTables declare."""
    import rclpy
    from rclpy.context import Context
    from rclpy.parameter import Parameter

    out = []
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        for exe, cls, overrides in _nodes():
            node = cls(
                exe.removesuffix("_node"),
                context=ctx,
                parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()],
            )
            specs = [s for t in node.parameter_tables for s in t.specs.values()]
            node.destroy_node()
            out += [
                f"### `{exe}`",
                "",
                "| parameter | default | unit | range | read-only | meaning |",
                "|---|---|---|---|---|---|",
            ]
            for s in specs:
                desc = s.description.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
                desc += " (per joint)" if s.per_joint else ""
                out.append(
                    f"| `{s.name}` | {_value(s.default)} | {s.unit} | {_range(s)} | "
                    f"{'yes' if s.read_only else ''} | {desc} |"
                )
            out.append("")
    finally:
        ctx.try_shutdown()
    return "\n".join(out).rstrip() + "\n"


def rewrite(path: str | Path) -> None:
    path = Path(path)
    text = path.read_text()
    head, sep, rest = text.partition(BEGIN)
    if not sep:
        raise ValueError(f"{path}: no '{BEGIN}' marker")
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{tables()}{END}{tail}")


if __name__ == "__main__":
    rewrite(sys.argv[1] if len(sys.argv) > 1 else "docs/nodes.md")
