"""The tables of ``docs/models.md``, generated from :mod:`.schema`, :data:`~servo_ff.models.firmware.FIRMWARE_TABLE`
and the friction-model registry :mod:`.friction_models` (regenerate with ``python -m servo_ff.models.schema_doc``)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from .firmware import FIRMWARE_TABLE
from .friction_models import FRICTION_KEYS, MODELS, Slot
from .schema import ACTUATOR_FIELDS, FIRMWARE_FIELDS, FieldSpec


def markdown_tables() -> str:
    """The parameter and firmware-law tables of ``docs/models.md`` (regenerate with
    ``python -m servo_ff.models.schema_doc docs/models.md``; a test keeps the page in step)."""

    def rng(f: FieldSpec) -> str:
        left = "(" if f.lo_open else "["
        return f"{left}{f.lo:g}, {f.hi:g}]" + (" or none" if f.none_is_inf else "")

    rows = ["| parameter | unit | admissible range | meaning |", "|---|---|---|---|"]
    rows += [f"| `{k}` | {f.unit} | {rng(f)} | {f.description} |" for k, f in ACTUATOR_FIELDS.items()]
    rows += [f"| `firmware.{k}` | {f.unit} | {rng(f)} | {f.description} |" for k, f in FIRMWARE_FIELDS.items()]
    rows += [
        "",
        "| law | control | vin [V] | kp | error_gain | max_pwm | current limit [A] | goal speed limit "
        "[rad/s] | source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, (law, source) in FIRMWARE_TABLE.items():
        lim = "none" if law.current_limit == math.inf else f"{law.current_limit:g}"
        gv = "none" if law.goal_velocity_limit == math.inf else f"{law.goal_velocity_limit:.4g}"
        rows.append(
            f"| `{name}` | {law.control} | {law.vin:g} | {law.kp:g} | {law.error_gain:.6g} | "
            f"{law.max_pwm:g} | {lim} | {gv} | {source} |"
        )
    return "\n".join(rows)


def model_tables() -> str:
    """The friction-model registry as two tables: one row per model, one row per friction coefficient."""
    rows = ["| model | title | coefficients (search order) | warm start from |", "|---|---|---|---|"]
    for m in MODELS.values():
        keys = ", ".join(f"`{k}`" for k in m.keys)
        rows.append(f"| `{m.name}` | {m.title} | {keys} | {', '.join(m.warm_from) or '—'} |")
    rows += ["", "| coefficient | packed slots | search bounds | neutral | bounds source |", "|---|---|---|---|---|"]
    for k, f in FRICTION_KEYS.items():
        hi = f"{f.hi:g} (the actuator's max_load_friction)" if f.load_bound else f"{f.hi:g}"
        names = ", ".join(Slot(s).name for s in f.slots)
        log = " (log space)" if f.log else ""
        rows.append(f"| `{k}` | {names} | [{f.lo:g}, {hi}]{log} | {f.neutral:g} | {f.source} |")
    return "\n".join(rows)


BEGIN, END = "<!-- generated: servo_ff.models.schema -->", "<!-- end generated -->"
MODELS_BEGIN = "<!-- generated: servo_ff.models.friction_models -->"


def _rewrite(path: str) -> None:
    text = Path(path).read_text()
    for begin, body in ((BEGIN, markdown_tables()), (MODELS_BEGIN, model_tables())):
        head, _, rest = text.partition(begin)
        _, _, tail = rest.partition(END)
        text = f"{head}{begin}\n{body}\n{END}{tail}"
    Path(path).write_text(text)


__all__ = ["BEGIN", "END", "MODELS_BEGIN", "markdown_tables", "model_tables"]


if __name__ == "__main__":
    _rewrite(sys.argv[1] if len(sys.argv) > 1 else "docs/models.md")
