#!/usr/bin/env python3
"""Generate and install the Python bindings of the ROS interfaces under interfaces/ (control_msgs, tf2_msgs).

The ROS 2 package index has no wheels for them, so ./run calls this after `pip install -r requirements.txt`:
rosidl's own generators (from the rosidl wheels in requirements.txt) turn the definitions into C/C++ and Python
sources, gcc/g++ compile them against the ROS wheels' headers and libraries, and the result is installed into the
running interpreter's prefix (the venv) laid out as the wheels lay out theirs (lib/, site-packages/, share/).

    .venv/bin/python tools/build_interfaces.py [--if-needed] [--prefix DIR]

--if-needed does nothing when the packages import and were built from the present definitions (or come from
elsewhere, e.g. a ROS install). A failure prints one line (the log's path for the details) and exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INTERFACES = ROOT / "interfaces"
# package -> the interface packages its definitions use (an action also uses action_msgs, service_msgs, ...)
PACKAGES: dict[str, tuple[str, ...]] = {
    "tf2_msgs": ("geometry_msgs", "std_msgs", "builtin_interfaces"),
    "control_msgs": (
        "trajectory_msgs",
        "geometry_msgs",
        "std_msgs",
        "builtin_interfaces",
        "action_msgs",
        "unique_identifier_msgs",
        "service_msgs",
    ),
}
TYPESUPPORTS = ["rosidl_typesupport_fastrtps_c", "rosidl_typesupport_introspection_c"]
STAMP = ".servo_ff_interfaces"
CHECK = (
    "import sys; from rclpy.type_support import check_for_type_support as c; "
    "from control_msgs.action import FollowJointTrajectory as F; from control_msgs.msg import DynamicJointState as D; "
    "from tf2_msgs.msg import TFMessage as T; [c(t) for t in (F, D, T)]"
)


class BuildError(RuntimeError):
    """A step failed; the message is one line."""


def definitions_digest(package: str) -> str:
    """SHA-256 over the package's definition files (names and contents)."""
    h = hashlib.sha256()
    for path in sorted((INTERFACES / package).rglob("*")):
        if path.is_file():
            h.update(path.relative_to(INTERFACES).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def site_packages(prefix: Path) -> Path:
    """The purelib directory of `prefix` for this interpreter."""
    return Path(sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)}))


def importable(python: str) -> bool:
    """Whether control_msgs/tf2_msgs import with their C type support, in a fresh interpreter."""
    return subprocess.run([python, "-c", CHECK], capture_output=True, timeout=120).returncode == 0


def up_to_date(prefix: Path) -> bool:
    """Every package either carries no stamp of ours (installed elsewhere) or one of the present definitions."""
    for pkg in PACKAGES:
        stamp = site_packages(prefix) / pkg / STAMP
        if stamp.exists() and stamp.read_text().strip() != definitions_digest(pkg):
            return False
    return True


class Builder:
    """Generates, compiles and installs one interface package into `prefix`."""

    def __init__(self, prefix: Path, work: Path, log) -> None:
        self.prefix, self.work, self.log = prefix, work, log
        self.share = prefix / "share"
        # the ROS wheels install headers as include/<pkg>/<pkg>/... (and fastcdr as include/fastcdr/...)
        self.includes = [str(prefix / "include")]
        self.includes += sorted(str(p) for p in (prefix / "include").iterdir() if p.is_dir())
        self.includes += [sysconfig.get_paths()["include"]]
        import numpy

        self.includes.append(numpy.get_include())

    def run(self, cmd: list[str]) -> None:
        """Run a compiler command, its output to the log; BuildError naming the output file on failure."""
        self.log.write(" ".join(cmd) + "\n")
        self.log.flush()
        res = subprocess.run(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        if res.returncode != 0:
            raise BuildError(f"{cmd[0]} failed building {Path(cmd[cmd.index('-o') + 1]).name}")

    def generate(self, pkg: str, deps: tuple[str, ...]) -> tuple[Path, list[Path]]:
        """rosidl: definitions -> .idl -> type hashes -> C, type supports, Python. Returns (out dir, idl files)."""
        import rosidl_generator_c
        import rosidl_generator_py
        import rosidl_typesupport_c
        import rosidl_typesupport_fastrtps_c
        import rosidl_typesupport_introspection_c
        from rosidl_adapter.action import convert_action_to_idl
        from rosidl_adapter.msg import convert_msg_to_idl
        from rosidl_cli.command.helpers import generate_visibility_control_file
        from rosidl_generator_type_description import generate_type_hash

        src, out = INTERFACES / pkg, self.work / pkg
        idl_dir = out / "idl"
        idls, sources = [], []
        for path in sorted(p for p in src.glob("*/*") if p.suffix in (".msg", ".action")):
            convert = convert_action_to_idl if path.suffix == ".action" else convert_msg_to_idl
            idl = convert(src, pkg, path.relative_to(src), idl_dir / path.parent.name)
            idls.append(idl)
            sources.append(path)
        tuples = [f"{idl_dir}:{p.relative_to(idl_dir).as_posix()}" for p in idls]
        dep_idls = [f"{d}:{f}" for d in deps for f in sorted((self.share / d).glob("*/*.idl"))]
        base = {"package_name": pkg, "idl_tuples": tuples, "ros_interface_dependencies": dep_idls}
        base["target_dependencies"] = []

        def args_file(name: str, **extra) -> str:
            path = out / f"{name}.args.json"
            path.write_text(json.dumps({**base, **extra}))
            return str(path)

        hashes = generate_type_hash(
            args_file("hash", output_dir=str(out / "hash"), include_paths=[f"{d}:{self.share / d}" for d in deps])
        )
        by_stem = {Path(h).stem: h for h in hashes}
        descriptions = [f"{t.split(':', 1)[1]}:{by_stem[Path(t).stem]}" for t in tuples]

        def gen(name: str, fn, *extra_args, visibility: str | None = None, **extra) -> None:
            templates = self.share / name / "resource"
            dest = out / name / pkg
            if visibility:
                generate_visibility_control_file(
                    package_name=pkg,
                    template_path=templates / f"{visibility}.h.in",
                    output_path=dest / "msg" / f"{visibility}.h",
                )
            fn(args_file(name, output_dir=str(dest), template_dir=str(templates), **extra), *extra_args)

        ros_files = [str(p) for p in sources]
        gen("rosidl_generator_c", rosidl_generator_c.generate_c, visibility="rosidl_generator_c__visibility_control",
            type_description_tuples=descriptions, ros_interface_files=ros_files)  # fmt: skip
        gen("rosidl_typesupport_fastrtps_c", rosidl_typesupport_fastrtps_c.generate_typesupport_fastrtps_c,
            visibility="rosidl_typesupport_fastrtps_c__visibility_control")  # fmt: skip
        gen("rosidl_typesupport_introspection_c", rosidl_typesupport_introspection_c.generate_c,
            visibility="rosidl_typesupport_introspection_c__visibility_control")  # fmt: skip
        gen("rosidl_typesupport_c", rosidl_typesupport_c.generate_c, TYPESUPPORTS)
        gen("rosidl_generator_py", rosidl_generator_py.generate_py, ["rosidl_typesupport_c", *TYPESUPPORTS])
        return out, sources

    def compile(self, pkg: str, deps: tuple[str, ...], out: Path) -> Path:
        """Compile the generated sources into the package's libraries; returns the directory holding them."""
        lib = out / "lib"
        pydir = out / "rosidl_generator_py" / pkg
        lib.mkdir()
        inc = [f"-I{out / d}" for d in ("rosidl_generator_c", "rosidl_typesupport_fastrtps_c",
                                          "rosidl_typesupport_introspection_c")]  # fmt: skip
        inc += [f"-I{p}" for p in self.includes]
        link = [f"-L{lib}", f"-L{self.prefix / 'lib'}", "-Wl,-rpath,$ORIGIN", "-Wl,--no-as-needed"]

        def dep_libs(kind: str) -> list[str]:
            return [f"-l{d}__{kind}" for d in deps if (self.prefix / "lib" / f"lib{d}__{kind}.so").exists()]

        def shared(name: str, sources: list[Path], libs: list[str], cxx: bool = False, dest: Path = lib) -> None:
            objs = []
            for src in sources:
                obj = src.with_suffix(src.suffix + ".o")
                std = ["g++", "-std=c++17"] if src.suffix == ".cpp" else ["gcc", "-std=c11"]
                objs.append((std + ["-O1", "-fPIC", "-w", "-c", str(src), "-o", str(obj)] + inc, obj))
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
                list(pool.map(lambda c: self.run(c[0]), objs))
            linker = "g++" if cxx else "gcc"
            self.run([linker, "-shared", "-o", str(dest / name)] + [str(o) for _, o in objs] + link + libs)

        gc = f"-l{pkg}__rosidl_generator_c"
        runtime = ["-lrosidl_runtime_c", "-lrcutils"]
        shared(f"lib{pkg}__rosidl_generator_c.so",
               sorted((out / "rosidl_generator_c").rglob("*.c")), dep_libs("rosidl_generator_c") + runtime)  # fmt: skip
        shared(f"lib{pkg}__rosidl_typesupport_fastrtps_c.so",
               sorted((out / "rosidl_typesupport_fastrtps_c").rglob("*.cpp")),
               [gc] + dep_libs("rosidl_typesupport_fastrtps_c") + dep_libs("rosidl_generator_c")
               + ["-lrosidl_typesupport_fastrtps_c", "-lrosidl_typesupport_fastrtps_cpp", "-lfastcdr", "-lrmw"]
               + runtime, cxx=True)  # fmt: skip
        shared(f"lib{pkg}__rosidl_typesupport_introspection_c.so",
               sorted((out / "rosidl_typesupport_introspection_c").rglob("*.c")),
               [gc] + dep_libs("rosidl_typesupport_introspection_c") + dep_libs("rosidl_generator_c")
               + ["-lrosidl_typesupport_introspection_c"] + runtime)  # fmt: skip
        shared(f"lib{pkg}__rosidl_typesupport_c.so", sorted((out / "rosidl_typesupport_c").rglob("*.cpp")),
               [gc] + dep_libs("rosidl_typesupport_c") + ["-lrosidl_typesupport_c", "-lrcpputils"] + runtime,
               cxx=True)  # fmt: skip
        shared(f"lib{pkg}__rosidl_generator_py.so", sorted(pydir.rglob("*_s.c")),
               [gc, f"-l{pkg}__rosidl_typesupport_c"] + dep_libs("rosidl_generator_py") + dep_libs("rosidl_generator_c")
               + dep_libs("rosidl_typesupport_c") + runtime)  # fmt: skip
        ext = pydir / f"_{pkg}_s.ep.rosidl_typesupport_c.c"
        shared(f"{pkg}_s__rosidl_typesupport_c.so", [ext],
               [f"-l{pkg}__rosidl_generator_py", f"-l{pkg}__rosidl_typesupport_c", gc, "-lrosidl_typesupport_c",
                "-Wl,-rpath,$ORIGIN/../../.."] + runtime, dest=pydir)  # fmt: skip
        return lib

    def install(self, pkg: str, out: Path, lib: Path, sources: list[Path]) -> None:
        """Copy libraries, share files and (last, so that a half install does not import) the Python package."""
        (self.prefix / "lib").mkdir(exist_ok=True)
        for so in lib.glob("*.so"):
            shutil.copy2(so, self.prefix / "lib" / so.name)
        share = self.share / pkg
        shutil.rmtree(share, ignore_errors=True)
        rel = []
        for src in sources:
            kind = src.parent.name
            (share / kind).mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, share / kind / src.name)
            shutil.copy2(out / "idl" / kind / f"{src.stem}.idl", share / kind / f"{src.stem}.idl")
            rel += [f"{kind}/{src.stem}.idl", f"{kind}/{src.name}"]
        for js in (out / "hash").rglob("*.json"):
            shutil.copy2(js, share / js.parent.name / js.name)
        index = self.share / "ament_index" / "resource_index"
        for kind, text in (("packages", ""), ("rosidl_interfaces", "\n".join(rel))):
            (index / kind).mkdir(parents=True, exist_ok=True)
            (index / kind / pkg).write_text(text)
        dest = site_packages(self.prefix) / pkg
        shutil.rmtree(dest, ignore_errors=True)
        src_py = out / "rosidl_generator_py" / pkg
        shutil.copytree(src_py, dest, ignore=shutil.ignore_patterns("*.c", "*.o"))
        (dest / "__init__.py").touch()
        (dest / STAMP).write_text(definitions_digest(pkg) + "\n")


def build(prefix: Path, log_path: Path) -> None:
    """Generate, compile and install every package of PACKAGES into `prefix`."""
    os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join(
        [str(prefix)] + [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    )
    for tool in ("gcc", "g++"):
        if shutil.which(tool) is None:
            raise BuildError(f"{tool} not found (apt-get install build-essential)")
    with open(log_path, "w") as log, tempfile.TemporaryDirectory(prefix="servo_ff_ifaces_") as tmp:
        builder = Builder(prefix, Path(tmp), log)
        for pkg, deps in PACKAGES.items():
            missing = [d for d in deps if not (prefix / "share" / d).is_dir()]
            if missing:
                raise BuildError(f"{pkg} needs {', '.join(missing)} (pip install -r requirements.txt)")
            try:
                with contextlib.redirect_stdout(log):  # the generators print every file they read and write
                    out, sources = builder.generate(pkg, deps)
            except ImportError as exc:
                raise BuildError(f"rosidl generator missing: {exc} (pip install -r requirements.txt)") from exc
            builder.install(pkg, out, builder.compile(pkg, deps, out), sources)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefix", type=Path, default=Path(sys.prefix), help="install prefix (default: this venv)")
    ap.add_argument("--if-needed", action="store_true", help="skip when already built from these definitions")
    args = ap.parse_args(argv)
    prefix = args.prefix.resolve()
    python = str(prefix / "bin" / "python")
    if args.if_needed and importable(python) and up_to_date(prefix):
        return 0
    log_path = prefix / "build_interfaces.log"
    names = ", ".join(PACKAGES)
    try:
        build(prefix, log_path)
    except Exception as exc:  # noqa: BLE001 - one line for the user, the details are in the log
        print(
            f"build_interfaces: could not generate {names}: {exc} (details: {log_path}; the tests that need them "
            f"skip; retry: {python} tools/build_interfaces.py)",
            file=sys.stderr,
        )
        return 1
    if not importable(python):
        print(f"build_interfaces: {names} built but do not import (details: {log_path})", file=sys.stderr)
        return 1
    print(f"build_interfaces: generated {names} into {prefix}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
