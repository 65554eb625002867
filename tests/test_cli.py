"""The console command and ``python -m cconv``, run as a user would."""
import os
import shutil
import subprocess
import sys

import pytest


def _run(args, tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_python_m_cconv_info(tmp_path):
    r = _run([sys.executable, "-m", "cconv", "info"], tmp_path)
    assert r.returncode == 0, r.stderr
    import cconv

    assert cconv.__version__ in r.stdout
    assert "BLAS" in r.stdout


def test_bench_quick_checks_results(tmp_path):
    r = _run([sys.executable, "-m", "cconv", "bench", "--quick", "--layers", "mobilenetv2_dw,dcgan_tconv"],
             tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.lower()
    assert "mobilenetv2_dw" in out and "dcgan_tconv" in out
    assert "depthwise" in out and "gemm_transpose" in out


def test_console_script_exists_and_runs(tmp_path):
    exe = shutil.which("cconv", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the cconv console script is not installed next to this Python (editable dev install)")
    r = _run([exe, "info"], tmp_path)
    assert r.returncode == 0, r.stderr


def test_bench_rejects_unknown_layer(tmp_path):
    r = _run([sys.executable, "-m", "cconv", "bench", "--quick", "--layers", "no_such_layer"], tmp_path)
    assert r.returncode != 0
    assert "no_such_layer" in (r.stdout + r.stderr)
