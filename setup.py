"""ament_python / pip build for servo_ff (src layout)."""

from glob import glob
from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "servo_ff"
HERE = Path(__file__).parent

# Every module in src/servo_ff/nodes/*_node.py with a main() becomes a ROS executable of the same name.
NODE_SCRIPTS = [
    f"servo_{p.stem.removesuffix('_node')}_node = servo_ff.nodes.{p.stem}:main"
    for p in sorted((HERE / "src" / PACKAGE / "nodes").glob("*_node.py"))
]

setup(
    name=PACKAGE,
    version="0.1.0",
    package_dir={"": "src"},
    packages=find_packages("src"),
    package_data={PACKAGE: ["models/data/bam/*/*.json", "bus/*/tables/*.yaml"]},  # control tables: bus/<family>/tables
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.urdf")),
    ],
    python_requires=">=3.10",
    install_requires=["numpy", "scipy", "matplotlib", "PyYAML", "tqdm"],
    extras_require={"menagerie": ["mujoco-menagerie>=2026.10.4"]},  # menagerie:<name> robots (docs/simulation.md)
    zip_safe=True,
    maintainer="servo_ff developers",
    description="Servo actuator models, identification, Dynamixel I/O and feed-forward for ROS 2.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={"console_scripts": ["servo-ff = servo_ff.cli:main", *NODE_SCRIPTS]},
)
