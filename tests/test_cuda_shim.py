"""tests/test_cuda.py (the GPU suite) run without a GPU, on a NumPy-backed
stand-in for CuPy (tests/c/cuda_harness_cupy/cupy).

In a subprocess whose ``import cupy`` finds the stand-in, every cconv call
on its arrays takes the CUDA path end to end: ``get_xp`` returns the
stand-in module, dispatch picks the CUDA_* backends, the array-generic code
of _functional.py / _backward.py / grad.py runs with it as ``xp`` (Gauss
trick, float16, out=, views), and ``cconv.cuda.kernels`` loads "the RawModule"
and launches every kernel with the grid and block a GPU would get, which
the stand-in runs through the CPU harness of tests/c/cuda_harness.cpp (the
same .cu sources).  Only CuPy itself (NVRTC, cuBLAS, device memory) is not
exercised; the GPU run of tests/test_cuda.py covers that.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("cuda_harness", os.path.join(HERE, "c", "cuda_harness.py"))
cuda_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cuda_harness)


def test_gpu_suite_on_the_cupy_stand_in(tmp_path):
    if cuda_harness.compiler() is None:
        pytest.skip("no C++ compiler to build the CUDA harness")
    so = cuda_harness.build(str(tmp_path))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(HERE, "c", "cuda_harness_cupy")
    env["CCONV_CUDA_HARNESS_SO"] = so
    env.pop("PYTHONHOME", None)
    code = (
        "import sys, pytest; "
        f"sys.exit(pytest.main([{os.path.join(HERE, 'test_cuda.py')!r}, '-q', '-p', 'no:cacheprovider', "
        "'-x']))"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=3000)
    out = r.stdout + r.stderr
    tail = out[-6000:]
    assert r.returncode == 0, tail
    m = re.search(r"(\d+) passed", out)
    assert m and int(m.group(1)) >= 400, tail
    assert "failed" not in out.splitlines()[-1], tail
    # it really ran on the stand-in, not skipped as "no GPU"
    assert "CUDA path unavailable" not in out, tail
