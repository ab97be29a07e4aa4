"""The friction-model registry (models/friction_models.py, models/slots.py) is the single source of the models, their
coefficients, the packed layout and the search bounds: every reader agrees with it and no second copy exists."""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from servo_ff.cli import build_parser
from servo_ff.dynamics.mujoco_servo_kernels import KERNELS, pre_step_py
from servo_ff.identification import search_space as ss
from servo_ff.identification.warm_start import NESTED, warm_starts
from servo_ff.io.servo_log import LogBatch
from servo_ff.models import params, slots
from servo_ff.models.friction import friction_budget
from servo_ff.models.friction_models import FRICTION_KEYS, KEY_SLOTS, MODEL_NAMES, MODELS, N_PACKED, Slot
from servo_ff.models.motor import firmware_torque
from servo_ff.models.presets import preset
from servo_ff.models.scalar import step_1
from servo_ff.models.stepper import ExternalLoad, rollout, step

SRC = Path(__file__).resolve().parents[1] / "src" / "servo_ff"
PAIRS = [(m, k) for m in MODEL_NAMES for k in MODELS[m].keys]


def _point(model: str, changed: str | None = None) -> params.ActuatorParams:
    """An MX-106 with every coefficient of ``model`` non-zero (Stribeck at 0.5 rad/s, α 1.5); ``changed`` doubled."""
    base = {"dtheta_stribeck": 0.5, "alpha": 1.5}
    friction = {k: base.get(k, 0.02 if k.endswith("_quad") else 0.1) for k in MODELS[model].keys}
    if changed is not None:
        friction[changed] *= 2.0
    return params.ActuatorParams("mx106", model, 2.2, 2.4, 0.025, friction, params.FIRMWARE_LAWS["mx106"])


def test_the_packed_layout_is_the_slots_module():
    names = [n for n in vars(slots) if n.isupper()]
    assert [getattr(slots, n) for n in names] == list(range(N_PACKED)) == [int(s) for s in Slot]
    assert [s.name for s in Slot] == names and params.N_PACKED == N_PACKED
    assert all(getattr(params, f"P_{n}") == getattr(slots, n) for n in names)  # the former names, derived
    with pytest.raises(AttributeError):
        params.P_NOT_A_SLOT  # noqa: B018


@pytest.mark.parametrize("model,key", PAIRS)
def test_each_coefficient_moves_exactly_its_registry_slots(model, key):
    """packed() and the search's candidate vectors write a coefficient at the registry's slots, and only there."""
    a, b = _point(model).packed(), _point(model, key).packed()
    assert set(np.flatnonzero(a != b)) == set(FRICTION_KEYS[key].slots)
    batch = LogBatch(*(np.zeros((1, 1)) for _ in range(len(LogBatch._fields))))._replace(
        kp=np.array([a[slots.KP]]), vin=np.array([a[slots.VIN]])
    )
    cand = ss.pack_candidates(a, [key], np.array([[b[FRICTION_KEYS[key].slots[0]]]]), batch)[0, 0]
    np.testing.assert_array_equal(cand, b)


def test_model_rows_are_consistent():
    assert params.MODEL_NAMES == MODEL_NAMES and params.MODEL_FRICTION_KEYS == {m: r.keys for m, r in MODELS.items()}
    assert ss.KEY_INDICES is KEY_SLOTS and set(ss.FRICTION_BOUNDS) == set(FRICTION_KEYS)
    assert NESTED == {m: r.warm_from for m, r in MODELS.items() if r.warm_from}
    for row in MODELS.values():
        assert set(row.keys) <= set(FRICTION_KEYS) <= set(params.ACTUATOR_FIELDS), row.name
        assert row.keys[:2] == ("friction_base", "friction_viscous") and len(set(row.keys)) == len(row.keys)
        for smaller in row.warm_from:  # a nested model: its slots are a subset of this one's
            covered = {s for k in row.keys for s in FRICTION_KEYS[k].slots}
            assert {s for k in MODELS[smaller].keys for s in FRICTION_KEYS[k].slots} <= covered, (row.name, smaller)
    assert [m for m in MODEL_NAMES if MODELS[m].load_dependent] == ["m3", "m4", "m5", "m6"]


def test_warm_starts_fill_every_searched_coefficient_from_the_nested_fit():
    fitted = {m: _point(m) for m in MODEL_NAMES}
    for model in ("m5", "m6"):
        start = warm_starts(model, {"m4": fitted["m4"]})[0]
        assert start["load_friction_motor"] == start["load_friction_external"] == 0.1
        assert {k for k in MODELS[model].keys if not k.endswith("_quad")} <= set(start)


def _budgets(p: np.ndarray) -> dict[str, np.ndarray]:
    """|τ_f| of one step of two joints (τ_e opposite to τ_m, smaller then larger) from every backend, the stopping
    torque far beyond the budget so that τ_f is the budget; and the numpy budget it must equal."""
    th, dth, goal, dt, inertia = np.zeros(2), np.full(2, 0.3), np.full(2, 0.5), 1e-3, 10.0
    rows = np.stack([p, p])
    tau_m, _ = firmware_torque(rows, th, dth, goal)
    tau_e = -np.array([0.5, 2.0]) * tau_m
    load = ExternalLoad(inertia=inertia, tau_ext=tau_e)
    out = {"expected": friction_budget(rows, tau_m, tau_e, dth)}
    out["numpy"] = np.abs(step(rows, th, dth, goal, dt, load, backend="numpy").tau_f)
    out["step_batch"] = np.abs(step(rows, th, dth, goal, dt, load, backend="numba").tau_f)
    out["rollout_simd"] = np.abs(rollout(rows, th, dth, goal[None], dt, load, backend="numba").tau_f[0])
    out["scalar"] = np.abs([step_1(list(p), 0.0, 0.3, 0.5, dt, 0.0, e, inertia, 1.0)[3] for e in tau_e])
    idx = np.arange(2)
    for name, pre in (("mujoco_numpy", pre_step_py), ("mujoco_numba", KERNELS[0])):
        loss, target = np.zeros(2), goal.copy()
        pre(rows, th, dth, idx, idx, goal, target, np.ones(2), tau_e, 0.0, dt, np.zeros(2), loss, *np.zeros((4, 2)))
        out[name] = loss + p[slots.KV] * dth  # MuJoCo applies the viscous part as damping
    return out


@pytest.mark.parametrize("model,key", PAIRS)
def test_every_backend_reads_the_registry_slot_of_each_coefficient(model, key):
    """Each backend's friction budget equals the numpy one and changes with the coefficient: a backend indexing
    a slot of its own would read an unchanged value (or another coefficient's) and disagree."""
    before, after = _budgets(_point(model).packed()), _budgets(_point(model, key).packed())
    assert not np.allclose(before["expected"], after["expected"]), "the coefficient must change the budget here"
    for budgets in (before, after):
        for name, value in budgets.items():
            np.testing.assert_allclose(value, budgets["expected"], rtol=1e-12, atol=1e-12, err_msg=name)


def _choices(parser, command: str, dest: str):
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return next(a for a in sub._actions if a.dest == dest)


def test_cli_and_node_choices_are_the_registry_names():
    from servo_ff.ros.parameters import actuator_specs, servo_preset_specs

    parser = build_parser()
    assert tuple(_choices(parser, "virtual-bus", "model").choices) == MODEL_NAMES
    assert tuple(_choices(parser, "identify", "models").default) == MODEL_NAMES
    specs = {s.name: s for s in actuator_specs(preset("mx64", "m4"))}
    assert specs["actuator.model"].choices == MODEL_NAMES
    assert next(s for s in servo_preset_specs("x") if s.name == "model").choices == MODEL_NAMES


def _second_copies(source: str, where: str) -> list[str]:
    """In one source file: a literal list of ≥ 3 model names, a membership test against a literal list of model
    names (a property of models: a registry field), or an assignment of a ``P_*`` slot constant."""
    tree = ast.parse(source, where)
    tested = {id(c) for n in ast.walk(tree) if isinstance(n, ast.Compare) for c in n.comparators}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in MODEL_NAMES]
            if len(names) >= 3 or (len(names) >= 2 and id(node) in tested):
                found.append(f"{where}:{node.lineno}: models {names}")
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets for t in (t.elts if isinstance(t, ast.Tuple) else [t])]
            found += [
                f"{where}:{node.lineno}: slot constant {t.id}"
                for t in targets
                if isinstance(t, ast.Name) and re.fullmatch(r"P_[A-Z]+", t.id)
            ]
    return found


def test_no_second_copy_of_the_model_list_or_the_slot_map_in_src():
    found = [
        f
        for path in sorted(SRC.rglob("*.py"))
        if path != SRC / "models" / "friction_models.py"
        for f in _second_copies(path.read_text(), str(path.relative_to(SRC)))
    ]
    assert not found, "define models and slots in models/friction_models.py / slots.py only:\n" + "\n".join(found)
    probe = 'CHOICES = ("m1", "m2", "m3")\nif m in ["m3", "m5"]:\n    P_KC, P_KV = 3, 4\n'
    probe += 'for m in ("m1", "m6"):\n    p[P_KC] = 1\n'
    assert len(_second_copies(probe, "probe")) == 4  # the loop over two models and the subscript are not copies


def test_docs_model_tables_are_generated_from_the_registry():
    from servo_ff.models.schema_doc import END, MODELS_BEGIN, model_tables

    page = (SRC.parents[1] / "docs" / "models.md").read_text()
    assert page.split(MODELS_BEGIN)[1].split(END)[0].strip() == model_tables().strip()  # python -m ..schema_doc
