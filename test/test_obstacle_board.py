"""The OP3 obstacle's second shape (issue 21 item 5): a board across the path that the walk steps onto
(``dynamics.mujoco_model.place_board``), chosen by ``simulate_walk(obstacle_shape=)`` and the sim node's
``obstacle_shape``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("placo")
mujoco = pytest.importorskip("mujoco")

URDF = "urdf/op3.urdf"
SERVOS = "config/servos_op3.yaml"


def _contacts(m, d, a: set[int], b: set[int]) -> list:
    return [c for c in d.contact[: d.ncon] if {c.geom1, c.geom2} & a and {c.geom1, c.geom2} & b]


def test_board_lies_ahead_of_the_feet_and_is_touched_by_each_foot_that_reaches_it():
    """Placed with the robot standing, the board touches no foot, its near edge 5 mm ahead of the soles' front and
    under both feet's tracks; moved 5 cm forward (onto it), each foot sinks into it (without the bounding-volume fix
    the broad phase skips the moved box and nothing touches)."""
    from servo_ff.dynamics.mujoco_model import BOARD_GAP, place_board, place_on_ground, sole_front
    from servo_ff.dynamics.mujoco_servos import MujocoServos

    sv = MujocoServos.from_description(URDF, SERVOS, base="floating", obstacle_slot=True)
    m, d = sv.model, sv.data
    place_on_ground(sv.sim, sv.qadr, np.zeros(len(sv.qadr)))
    board = int(m.geom("obstacle").id)
    front = sole_front(m, d, sv.sim.feet)
    place_board(m, d, board, sv.sim.feet, 0.015)
    feet = [{g for g in range(m.ngeom) if m.geom_bodyid[g] == f} for f in sv.sim.feet]
    assert m.geom_pos[board][0] - m.geom_size[board][0] == pytest.approx(front + BOARD_GAP, abs=1e-9)
    assert 2 * m.geom_size[board][2] == pytest.approx(0.015) and m.geom_pos[board][2] == pytest.approx(0.0075)
    for f in sv.sim.feet:  # each foot's track runs under the board, 5 cm or more inside its sides
        assert abs(d.xpos[f][1] - m.geom_pos[board][1]) < m.geom_size[board][1] - 0.05
    assert not _contacts(m, d, {board}, set().union(*feet))
    d.qpos[0] += 0.05
    mujoco.mj_forward(m, d)
    for geoms in feet:
        touching = _contacts(m, d, {board}, geoms)
        assert touching and min(c.dist for c in touching) < -0.005  # the sole sinks into the 15 mm board
    place_board(m, d, board, sv.sim.feet, 0.0)  # height 0: out of the way
    assert not _contacts(m, d, {board}, set().union(*feet))


def test_the_first_swing_foot_steps_onto_the_board():
    """In a walk the board placed at the walk start is first touched during the first step (the start's double
    support 0.8 s, its swing to 1.2 s), not at its placement (it would be misplaced onto a foot) nor later."""
    from servo_ff.dynamics.walk_sim import simulate_walk

    run = simulate_walk("ff", 4, vx=0.05, obstacle=0.005, obstacle_shape="board")
    assert 0.8 < run.t_touch <= 1.25


def test_obstacle_shape_unknown_is_refused_with_one_clear_line():
    from servo_ff.dynamics.walk_sim import simulate_walk

    with pytest.raises(ValueError, match=r"^obstacle_shape must be one of foot_box, board, got 'disc'$"):
        simulate_walk("ff", 2, obstacle=0.015, obstacle_shape="disc")


def test_sim_node_refuses_an_unknown_obstacle_shape():
    """The ParamSpec row's choices: the node is not built, the reason names the parameter and the choices."""
    pytest.importorskip("rclpy")
    from rclpy.exceptions import InvalidParameterValueException
    from rclpy.parameter import Parameter

    from servo_ff.nodes.sim_node import MujocoSimNode
    from servo_ff.ros.harness import RosHarness

    h = RosHarness(salt=41)
    try:
        with pytest.raises(
            InvalidParameterValueException, match=r"obstacle_shape='disc' is not one of foot_box, board"
        ) as e:
            h.add(
                MujocoSimNode(
                    "servo_sim",
                    **h.node_kwargs(),
                    parameter_overrides=[
                        Parameter("urdf_path", value=URDF),
                        Parameter("servo_config", value=SERVOS),
                        Parameter("floating_base", value=True),
                        Parameter("obstacle_shape", value="disc"),
                    ],
                )
            )
        assert "\n" not in str(e.value)
    finally:
        h.shutdown()


@pytest.mark.parametrize("shape", ["board", "foot_box"])
def test_sim_node_obstacle_height_places_the_shape_asked_for(shape):
    """``obstacle_height`` set while running puts the board (0.4 m × 1 m, ahead of the feet) or the foot box."""
    pytest.importorskip("rclpy")
    from rclpy.parameter import Parameter

    from servo_ff.dynamics.mujoco_model import BOARD_GAP, sole_front
    from servo_ff.nodes.sim_node import MujocoSimNode
    from servo_ff.ros.harness import RosHarness

    h = RosHarness(salt=42)
    try:
        sim = h.add(
            MujocoSimNode(
                "servo_sim",
                **h.node_kwargs(),
                parameter_overrides=[
                    Parameter("urdf_path", value=URDF),
                    Parameter("servo_config", value=SERVOS),
                    Parameter("floating_base", value=True),
                    Parameter("autostart", value=False),
                    Parameter("obstacle_shape", value=shape),
                ],
            )
        )
        assert all(r.successful for r in sim.set_parameters([Parameter("obstacle_height", value=0.015)]))
        m = sim.servos.model
        g = int(m.geom("obstacle").id)
        size = [0.5, 0.2, 0.0075] if shape == "board" else [*m.geom_size[g][:2], 0.0075]
        assert m.geom_size[g] == pytest.approx(size)
        assert (m.geom_size[g][0] > 0.3) == (shape == "board")  # the foot box is a sole long
        if shape == "board":  # ahead of the feet of the robot standing in its start pose
            front = sole_front(m, sim.servos.data, sim.servos.sim.feet)
            assert m.geom_pos[g][0] - 0.5 == pytest.approx(front + BOARD_GAP, abs=1e-9)
    finally:
        h.shutdown()
