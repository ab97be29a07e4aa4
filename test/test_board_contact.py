"""dynamics.board_contact on a synthetic MuJoCo scene: a board and a free foot box, placed on the board's top or
against its front face; the face named from MuJoCo's own contact normal, and a tilted box's height over a line."""

import math

import mujoco
import numpy as np
import pytest

from servo_ff.dynamics.board_contact import body_over, box_contacts, contact_face, geom_corners, section_zmin

H = 0.015  # [m] board height
EDGE = 0.10  # [m] the board's near edge (x)
SCENE = f"""<mujoco><worldbody>
  <geom name="board" type="box" size="0.2 0.2 {H / 2}" pos="{EDGE + 0.2} 0 {H / 2}"/>
  <body name="foot" pos="0 0 0.5"><freejoint/><geom name="sole" type="box" size="0.05 0.03 0.004" mass="0.1"/></body>
  <body name="other" pos="0.3 0 0.5"><freejoint/><geom type="sphere" size="0.01" mass="0.1"/></body>
</worldbody></mujoco>"""


def scene(foot_xyz, other_z: float = 0.5, pitch: float = 0.0):
    m = mujoco.MjModel.from_xml_string(SCENE)
    d = mujoco.MjData(m)
    d.qpos[0:3] = foot_xyz
    d.qpos[3:7] = [math.cos(pitch / 2), 0.0, math.sin(pitch / 2), 0.0]
    d.qpos[7:10] = [0.3, 0.0, other_z]
    mujoco.mj_forward(m, d)
    return m, d, int(m.geom("board").id), int(m.body("foot").id), int(m.body("other").id)


def test_foot_on_top_is_top():
    m, d, board, foot, _ = scene([EDGE + 0.06, 0.0, H + 0.004 - 0.0005])  # 0.5 mm into the top
    cs = box_contacts(m, d, board, [foot])
    assert cs and {c.face for c in cs} == {"top"}
    assert all(c.normal[2] > 0.99 and c.depth > 0 for c in cs)  # the normal turned to point out of the board


def test_toe_against_front_face_is_front():
    m, d, board, foot, _ = scene([EDGE - 0.05 + 0.0005, 0.0, 0.006])  # toe 0.5 mm into the front face, sole below top
    cs = box_contacts(m, d, board, [foot])
    assert cs and {c.face for c in cs} == {"front"}
    assert all(c.normal[0] < -0.99 and abs(c.pos[0] - EDGE) < 0.001 for c in cs)


def test_tilted_sole_on_the_edge_line():
    """A sole pitched toe-up, resting on the board's near top edge: the normal is the sole's (within 30° of +z, so
    "top"), the point on the edge line; a flat sole on the top away from the edge is not on it."""
    tilt = -0.08  # [rad] toe up (rotation about +y)
    under = 0.004 / math.cos(tilt)  # the sole's centre above its underside, vertically
    # the underside through (EDGE, H) with 0.3 mm overlap: its centre 0.02 m behind the edge along the sole
    x, z = EDGE - 0.02 * math.cos(tilt), H + 0.02 * math.sin(tilt) + under - 0.0003
    m, d, board, foot, _ = scene([x, 0.0, z], pitch=tilt)
    cs = box_contacts(m, d, board, [foot])
    assert cs and all(c.near_edge and c.face == "top" for c in cs)
    assert all(abs(c.normal[0] - math.sin(tilt)) < 0.02 for c in cs)  # tilted with the sole, not the board's +z
    m, d, board, foot, _ = scene([EDGE + 0.06, 0.0, H + 0.004 - 0.0005])
    assert not any(c.near_edge for c in box_contacts(m, d, board, [foot]))


def test_other_bodies_and_no_contact():
    m, d, board, foot, other = scene([EDGE - 0.06, 0.0, 0.006], other_z=H + 0.009)  # the sphere 1 mm into the top
    assert box_contacts(m, d, board, [foot]) == []  # the foot 1 cm short of the board: nothing
    assert [c.face for c in box_contacts(m, d, board, [other])] == ["top"]


def test_face_names():
    assert contact_face(np.array([0.0, 0.0, 2.0])) == "top"
    assert contact_face(np.array([-1.0, 0.0, 0.3])) == "front"
    assert contact_face(np.array([1.0, 0.0, 0.0])) == "back"
    assert contact_face(np.array([0.0, -1.0, 0.0])) == "side"
    assert contact_face(np.array([-1.0, 0.0, 1.0])) == "edge"  # 45°: neither face


@pytest.mark.parametrize("pitch", [0.0, 0.2, -0.2])
def test_height_over_a_line_of_a_tilted_box(pitch: float):
    """A 0.1 m × 8 mm box pitched by ``pitch`` (toe down for a positive pitch about +y): its underside's height over
    x = centre + 0.03 m is the centre's height − 4 mm / cos(pitch) − 0.03 · tan(pitch)."""
    z0 = 0.05
    m, d, _, foot, _ = scene([0.0, 0.0, z0], pitch=pitch)
    sole = int(m.geom("sole").id)
    want = z0 - 0.004 / math.cos(pitch) - 0.03 * math.tan(pitch)
    assert section_zmin(geom_corners(m, d, sole), 0.03) == pytest.approx(want, abs=1e-9)
    over, low, front, rear = body_over(m, d, foot, 0.03)
    assert over == pytest.approx(want, abs=1e-9)
    assert low == pytest.approx(geom_corners(m, d, sole)[:, 2].min(), abs=1e-12) and low <= over
    assert front == pytest.approx(0.05 * math.cos(pitch) + 0.004 * abs(math.sin(pitch)), abs=1e-9) == -rear
    assert math.isnan(body_over(m, d, foot, 0.2)[0])  # beyond the toe: nothing over that line


def test_a_body_without_colliding_geoms_is_named():
    """body_over on a body with no colliding geom is one ValueError naming the body (was: min() of nothing)."""
    m = mujoco.MjModel.from_xml_string(
        SCENE.replace('<geom type="sphere"', '<geom contype="0" conaffinity="0" type="sphere"')
    )
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    with pytest.raises(ValueError, match="'other' has no colliding geom"):
        body_over(m, d, int(m.body("other").id), 0.0)


def test_walk_probe_reads_without_changing_the_walk():
    """simulate_walk(probe=…), as bench/board_contact.py reads the board cells: called once per control period after
    its physics, times increasing from the hold; the walk (trunk pitch, travel, board touch) the same as without."""
    from servo_ff.dynamics.op3_cpg import op3_cpg_plan
    from servo_ff.dynamics.walk_sim import OP3_URDF, simulate_walk

    walk = op3_cpg_plan(OP3_URDF, 0.312, 2)
    seen: list[tuple[float, int]] = []

    def probe(t: float, sv) -> None:
        board = int(sv.model.geom("obstacle").id)
        seen.append((t, len(box_contacts(sv.model, sv.data, board, sv.sim.feet))))

    kw = {"obstacle": 0.015, "obstacle_shape": "board", "obstacle_step": 0, "ready": walk}
    plain = simulate_walk("high", 2, **kw)
    probed = simulate_walk("high", 2, probe=probe, **kw)
    np.testing.assert_array_equal(probed.pitch, plain.pitch)
    assert probed.travel == plain.travel and probed.t_touch == plain.t_touch
    t = np.array([s[0] for s in seen])
    assert len(t) == len(plain.t) + int(round(0.48 / 0.008)) and np.all(np.diff(t) > 0) and t[0] < 0
    assert t[-1] == pytest.approx(plain.t[-1])
    assert next(s for s, n in seen if n) == pytest.approx(plain.t_touch)  # the board touch simulate_walk reports
