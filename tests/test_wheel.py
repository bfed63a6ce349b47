"""The wheel a user installs: one top-level name, ropespec, installed beside packages that own the folders' names.

The repository keeps the user's folders (spec/, reference/, properties/, implementations/); the wheel installs them
as ropespec.spec, ropespec.reference, ... (pyproject.toml's package-dir). PyPI has packages named spec, reference
and properties: a wheel that claimed those names would overwrite them, and one of them on sys.path would shadow
ropespec's. Here the wheel is built from the repository, installed into one folder with a package of each of those
names (built here, so that the test needs no index), and both are imported from there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OTHERS = ("spec", "reference", "properties")


def _run(*cmd, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def _other_project(root: Path, name: str) -> Path:
    """A distribution named ``name`` whose package ``name`` says whose it is."""
    project = root / f"other-{name}"
    (project / name).mkdir(parents=True)
    (project / name / "__init__.py").write_text(f"OWNER = 'another project named {name}'\n")
    (project / "pyproject.toml").write_text(
        f'[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "1.0"\n[tool.setuptools]\npackages = ["{name}"]\n')
    return project


def _source_copy(dest: Path) -> Path:
    """The working tree's files (tracked, and untracked but not ignored) copied to ``dest``: setuptools builds in the
    source's own build/ folder, which two xdist workers building at once (the fixture is per worker) would share."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the folder both are installed into, ropespec's wheel)."""
    root = tmp_path_factory.mktemp("wheel")
    wheels, target = root / "wheels", root / "site"
    pip = (sys.executable, "-m", "pip")
    _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(_source_copy(root / "source")))
    for name in OTHERS:
        _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(_other_project(root, name)))
    _run(*pip, "install", "--no-deps", "-q", "--target", str(target), *map(str, sorted(wheels.glob("*.whl"))))
    [wheel] = wheels.glob("ropespec-*.whl")
    return target, wheel


def test_the_wheel_claims_one_top_level_name(installed):
    _, wheel = installed
    with zipfile.ZipFile(wheel) as z:
        tops = {n.split("/")[0] for n in z.namelist() if not n.split("/")[0].endswith(".dist-info")}
        [top_level] = [n for n in z.namelist() if n.endswith(".dist-info/top_level.txt")]
        assert z.read(top_level).decode().split() == ["ropespec"]
        assert "ropespec/reference/data/llama3.1-8b.json" in z.namelist()  # the golden data travel with it
    assert tops == {"ropespec"}


def test_ropespec_installs_beside_packages_named_like_its_folders(installed):
    """Imported from the install folder alone (no site-packages hooks: python -S, the dependencies' folder after it):
    each other project's package is its own, and ropespec's modules are under ropespec."""
    target, _ = installed
    deps = sysconfig.get_paths()["purelib"]
    script = (
        "import spec, reference, properties, ropespec.spec.expectation as e, ropespec.reference.fast, ropespec.cli\n"
        "import ropespec.properties.framework as f\n"
        "print(spec.OWNER, reference.OWNER, properties.OWNER, sep='|')\n"
        "print(e.__file__, f.__file__, sep='|')\n"
        "print(len(f.all_properties()))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": f"{target}{os.pathsep}{deps}"}
    out = _run(sys.executable, "-S", "-c", script, env=env, cwd=target.parent).stdout.splitlines()
    assert out[0].split("|") == [f"another project named {n}" for n in OTHERS]
    assert all(Path(p).is_relative_to(target / "ropespec") for p in out[1].split("|")), out[1]
    assert int(out[2]) > 50  # every property module found under its installed name


def test_the_installed_command_checks_a_shipped_target_by_its_old_name(installed, tmp_path):
    """A TARGET that names shipped code by its folder (implementations.numpy_rope:make) is read as its installed name,
    and the run says so."""
    target, _ = installed
    deps = sysconfig.get_paths()["purelib"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": f"{target}{os.pathsep}{deps}"}
    done = subprocess.run([sys.executable, "-S", "-m", "ropespec", "check", "implementations.numpy_rope:make",
                           "--invariant", "rope.conformance", "--profile", "ci", "--seed", "1"],
                          capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "implementations.numpy_rope:make is ropespec.implementations.numpy_rope:make" in said
    assert "ropespec.implementations.numpy_rope:make" in done.stdout


def test_a_target_imports_the_other_project_s_package_in_its_worker(installed, tmp_path):
    """The worker that loads a TARGET puts only the folder holding ropespec on its path, never ropespec's own folder:
    a user's code that imports another project's ``spec`` gets that project's package there too."""
    target, _ = installed
    deps = sysconfig.get_paths()["purelib"]
    (tmp_path / "mine.py").write_text(
        "import spec\n"
        "assert spec.OWNER == 'another project named spec', spec.__file__\n"
        "import numpy as np\n\n\n"
        "def apply(x, positions):\n"
        "    d = x.shape[1]\n"
        "    ang = np.asarray(positions, dtype=np.float64)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)\n"
        "    x1, x2 = x[:, : d // 2].astype(np.float64), x[:, d // 2 :].astype(np.float64)\n"
        "    c, s = np.cos(ang), np.sin(ang)\n"
        "    return np.concatenate([x1 * c - x2 * s, x1 * s + x2 * c], axis=1).astype(x.dtype)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": f"{target}{os.pathsep}{deps}"}
    done = subprocess.run([sys.executable, "-S", "-m", "ropespec", "check", "mine.py:apply", "--invariant",
                           "rope.conformance", "--profile", "ci", "--seed", "1"],
                          capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
