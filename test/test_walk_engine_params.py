"""The walk node's parameters per gait (nodes/walk_params.py): PLACO_ONLY, the names the node says do not act under
the CPG, is exactly what placo's engine reads and none of what the CPG's reads; the mission refuses n_steps 0."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy")  # the ParamSpec table builds rcl_interfaces descriptors
pytest.importorskip("pinocchio")

from servo_ff.io.paths import share_file  # noqa: E402
from servo_ff.nodes.walk_params import BALANCE_KEYS, PLACO_ONLY, walk_engine, walk_specs  # noqa: E402


class _Read(dict):
    """Parameter values remembering which names were read."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.read: set[str] = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)


def _values(**over) -> _Read:
    return _Read({**{s.name: s.default for s in walk_specs()}, **over})


def test_placo_only_is_what_placo_reads_and_the_cpg_does_not():
    placo = _values()
    walk_engine(placo, str(share_file("urdf", "op3.urdf")))
    assert placo.read - {"gait", "engine_process"} == set(PLACO_ONLY)
    for gait, urdf in (("nimbro_cpg", "nimbro_op.urdf"), ("op3_cpg", "op3.urdf")):
        cpg = _values(gait=gait, engine_process=False)
        engine = walk_engine(cpg, str(share_file("urdf", urdf)))[0]
        assert not cpg.read & set(PLACO_ONLY)
        assert cpg.read - {"gait", "engine_process"} <= {f"balance_{k}" for k in BALANCE_KEYS}
        assert engine.params.step_period == pytest.approx(0.417 if gait == "nimbro_cpg" else 0.295, abs=1e-3)


def test_the_mission_refuses_n_steps_0_before_any_node():
    from servo_ff.bringup.op3_mission import run_op3

    with pytest.raises(ValueError, match="n_steps must be ≥ 1, got 0"):
        run_op3("ff", n_steps=0)
