"""The parameter tables of ``docs/nodes.md``, generated from what each node really declares (its ``ParamSpec``
rows: name, default, unit, range, meaning), like ros2_controllers' generated parameter tables. The rows come from
the module-level tables the nodes declare from (``<node>_specs()`` / ``parameter_specs()``): no node is started.

    python -m servo_ff.nodes.param_docs docs/nodes.md      # rewrite the generated section
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from servo_ff.ros.parameters import ParamSpec

BEGIN, END = "<!-- generated: servo_ff.nodes.param_docs -->", "<!-- end generated -->"


def _nodes() -> list[tuple[str, Callable[..., list[ParamSpec]], dict[str, Any]]]:
    """(executable, its module-level table, arguments): the rows each node declares, no node started."""
    from servo_ff.io.paths import share_file

    from .feedforward_params import parameter_specs as feedforward
    from .fit_node import fit_specs
    from .hardware_params import parameter_specs as hardware
    from .ilc_params import ilc_specs
    from .sim_stepper import parameter_specs as sim
    from .state_publisher_node import state_publisher_specs
    from .walk_params import walk_specs
    from .walker_node import walker_specs

    urdf = share_file("urdf", "pendulums2.urdf")
    return [
        ("servo_sim_node", sim, {}),
        ("servo_hardware_node", hardware, {}),
        ("servo_feedforward_node", feedforward, {"urdf_path": urdf}),
        ("servo_ilc_node", ilc_specs, {}),
        ("servo_fit_node", fit_specs, {}),
        ("servo_walker_node", walker_specs, {}),
        ("servo_state_publisher_node", state_publisher_specs, {}),
        ("servo_walk_node", walk_specs, {}),
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
    """One markdown table per node, from the module-level ``ParamSpec`` rows it declares (no rclpy context)."""
    out = []
    for exe, specs, kwargs in _nodes():
        out += [
            f"### `{exe}`",
            "",
            "| parameter | default | unit | range | read-only | meaning |",
            "|---|---|---|---|---|---|",
        ]
        for s in specs(**kwargs):
            desc = s.description.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
            desc += " (per joint)" if s.per_joint else ""
            out.append(
                f"| `{s.name}` | {_value(s.default)} | {s.unit} | {_range(s)} | "
                f"{'yes' if s.read_only else ''} | {desc} |"
            )
        out.append("")
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
