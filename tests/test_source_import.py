"""``import cconv`` from a folder holding the source package (the repository
root, next to a regular install) says to import the installed package,
instead of a circular-import traceback."""
import os
import shutil
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cconv")

# meson-python's editable install resolves `cconv` through an import hook
# that comes before the current directory; drop it so that the source
# folder is what Python finds, as with a regular install.
_CODE = (
    "import sys; "
    "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in type(f).__module__]; "
    "import cconv"
)


def test_import_from_source_folder_is_a_clear_error(tmp_path):
    if not os.path.exists(os.path.join(SRC, "_version.py.in")):
        pytest.skip("no source tree next to the tests")
    shutil.copytree(SRC, tmp_path / "cconv",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__", "_version.py"))
    r = subprocess.run([sys.executable, "-c", _CODE], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0
    err = r.stderr
    assert "ImportError" in err and "source folder" in err, err
    assert "import the installed package" in err.lower(), err
    assert "circular import" not in err, err
