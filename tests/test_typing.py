"""cconv's type hints as a user's checker sees them: tests/typing/user_script.py
(assert_type on the results) must pass mypy --strict and pyright's strict
mode (basedpyright, which bundles its Node runtime and needs no download).
Both checkers are in the ``test`` extra."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import cconv

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "typing", "user_script.py")


def _package_root():
    """The folder holding the cconv package when it is not importable by
    path from site-packages (an editable install: meson-python's import hook,
    which static checkers do not run), else None."""
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(cconv.__file__)))
    if os.path.basename(pkg_parent) in ("site-packages", "dist-packages"):
        return None
    return pkg_parent


def _tool(name):
    exe = os.path.join(os.path.dirname(sys.executable), name)
    return exe if os.path.exists(exe) else shutil.which(name)


def test_user_script_runs():
    r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, cwd=HERE)
    assert r.returncode == 0, r.stderr


def test_mypy_strict(tmp_path):
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    cfg = tmp_path / "mypy.ini"
    # the package itself is checked for what it exports, not linted here
    cfg.write_text("[mypy]\nstrict = True\nwarn_unused_configs = True\n"
                   "[mypy-cconv.*]\nfollow_imports = silent\n")
    env = dict(os.environ)
    root = _package_root()
    if root is not None:
        env["MYPYPATH"] = root
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(cfg), "--cache-dir",
                        str(tmp_path / "cache"), "--no-incremental", SCRIPT],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success" in r.stdout


def test_pyright_strict(tmp_path):
    exe = _tool("basedpyright")
    if exe is None:
        pytest.skip("basedpyright (in the test extra) is not installed")
    cfg = {"typeCheckingMode": "strict", "pythonVersion": f"{sys.version_info[0]}.{sys.version_info[1]}",
           "reportMissingModuleSource": False}
    root = _package_root()
    if root is not None:
        cfg["extraPaths"] = [root]
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(cfg))
    shutil.copy(SCRIPT, tmp_path / "user_script.py")
    r = subprocess.run([exe, "--pythonpath", sys.executable, "user_script.py"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 errors" in r.stdout


def test_a_wrong_type_is_caught(tmp_path):
    """The check can fail: a wrong assert_type in a copy of the script is an error."""
    pytest.importorskip("mypy", reason="mypy is in the test extra")
    src = open(SCRIPT).read().replace("assert_type(y, NDArray[np.float32])",
                                      "assert_type(y, NDArray[np.float64])")
    bad = tmp_path / "bad.py"
    bad.write_text(src)
    cfg = tmp_path / "mypy.ini"
    cfg.write_text("[mypy]\nstrict = True\n[mypy-cconv.*]\nfollow_imports = silent\n")
    env = dict(os.environ)
    root = _package_root()
    if root is not None:
        env["MYPYPATH"] = root
    r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(cfg), "--cache-dir",
                        str(tmp_path / "cache"), str(bad)], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert r.returncode == 1 and "assert-type" in r.stdout, r.stdout


def test_py_typed_is_installed():
    assert os.path.exists(os.path.join(os.path.dirname(cconv.__file__), "py.typed"))
