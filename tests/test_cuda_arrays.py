"""Array types on the CUDA path, without CuPy or a GPU: a CuPy array mixed
with NumPy arrays is a TypeError naming both; a CuPy array when CuPy cannot
reach a GPU is a clear RuntimeError; ``import cconv`` never imports CuPy and
works when CuPy cannot be imported at all."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cconv
import cconv.grad
from cconv import _array
from cconv.cuda import _cupy as _cuda


def _fake_cupy_class():
    """A class recognised as ``cupy.ndarray`` (by its module and name)."""
    cls = type("ndarray", (), {"__module__": "cupy"})
    return cls


class _Spec:
    pass


def fake_cupy_array(shape, dtype=np.float32):
    a = _fake_cupy_class()()
    a.shape = tuple(shape)
    a.ndim = len(shape)
    a.dtype = np.dtype(dtype)
    a.size = int(np.prod(shape))
    return a


@pytest.fixture
def no_gpu(monkeypatch):
    """CuPy 'imports' but sees no CUDA device."""
    monkeypatch.setattr(_cuda, "_load", lambda: (None, "CuPy cannot reach a CUDA device (no driver, test)"))


def test_fake_is_recognised_as_cupy():
    a = fake_cupy_array((1, 2, 3))
    assert _array.is_cupy(a)
    sub = type("ndarray", (), {"__module__": "cupy._core.core"})()
    assert _array.is_cupy(sub)
    assert not _array.is_cupy(np.zeros(3))
    assert not _array.is_cupy(type("ndarray", (), {"__module__": "cupyx_not"})())


def test_get_xp_mixed_names_both_arguments():
    g = fake_cupy_array((1, 4, 6, 6))
    with pytest.raises(TypeError) as e:
        _array.get_xp(input=g, weight=np.zeros((2, 4, 3, 3)), bias=None)
    msg = str(e.value)
    assert "input" in msg and "weight" in msg and "cupy.ndarray" in msg and "numpy.ndarray" in msg
    with pytest.raises(TypeError) as e:
        _array.get_xp(input=np.zeros((1, 4, 6, 6)), weight=g)
    assert "weight is cupy.ndarray" in str(e.value) or "weight" in str(e.value)
    # a list counts as a CPU argument too
    with pytest.raises(TypeError, match="input"):
        _array.get_xp(input=[[1.0]], weight=g)


def test_public_functions_reject_mixed_arrays(no_gpu):
    g = fake_cupy_array((1, 4, 6, 6))
    w = np.zeros((2, 4, 3, 3), np.float32)
    with pytest.raises(TypeError, match="weight"):
        cconv.conv2d(g, w)
    with pytest.raises(TypeError, match="bias"):
        cconv.conv2d(fake_cupy_array((1, 4, 6, 6)), fake_cupy_array((2, 4, 3, 3)), np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="out"):
        cconv.conv2d(np.zeros((1, 4, 6, 6), np.float32), w, out=fake_cupy_array((1, 2, 4, 4)))
    with pytest.raises(TypeError, match="input"):
        cconv.conv_transpose2d(np.zeros((1, 2, 6, 6), np.float32), fake_cupy_array((2, 4, 3, 3)))
    with pytest.raises(TypeError, match="grad_output"):
        cconv.convolution_backward(fake_cupy_array((1, 2, 4, 4)), np.zeros((1, 4, 6, 6), np.float32), w,
                                   None, 1, 0, 1, False, 0, 1, (True, True, True))
    with pytest.raises(TypeError, match="weight"):
        cconv.grad.conv2d_input((1, 4, 6, 6), w, fake_cupy_array((1, 2, 4, 4)))
    with pytest.raises(TypeError, match="select_backend|input|weight"):
        cconv.select_backend(g, w)


def test_cupy_input_without_gpu_is_a_clear_runtime_error(no_gpu):
    x = fake_cupy_array((1, 4, 6, 6))
    w = fake_cupy_array((2, 4, 3, 3))
    with pytest.raises(RuntimeError, match="CUDA path is unavailable.*no driver"):
        _array.get_xp(input=x, weight=w)
    with pytest.raises(RuntimeError, match="cupy.ndarray was given"):
        cconv.conv2d(x, w)
    with pytest.raises(RuntimeError, match="cupy.ndarray was given"):
        cconv.convolution_backward(fake_cupy_array((1, 2, 4, 4)), x, w, None, 1, 0, 1, False, 0, 1,
                                   (True, True, True))
    with pytest.raises(RuntimeError, match="cupy.ndarray was given"):
        cconv.select_backend(x, w)
    assert not _cuda.has_cupy()
    assert "unavailable" in _cuda.describe()


def test_cuda_kernels_context_needs_cupy_arrays(no_gpu):
    from cconv.cuda import kernels as _cuda_kernels

    with pytest.raises(TypeError, match="cupy.ndarray"):
        _cuda_kernels.context(np.zeros(3))
    with pytest.raises(RuntimeError, match="unavailable"):
        _cuda_kernels.context(fake_cupy_array((3,)))
    with pytest.raises(RuntimeError, match="unavailable"):
        _cuda_kernels.bias_grad(fake_cupy_array((1, 2, 3)))


def test_workspace_bound_is_checked():
    from cconv.cuda import kernels as _cuda_kernels

    old = _cuda_kernels.workspace_bytes()
    with pytest.raises(ValueError, match="1024"):
        _cuda_kernels.set_workspace_bytes(10)
    assert _cuda_kernels.workspace_bytes() == old


def _run(code: str, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    # the CuPy stand-in of the CPU-only GPU suite must not be importable here;
    # the rest of PYTHONPATH stays (cconv itself may be found through it)
    keep = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and "cuda_harness_cupy" not in p]
    env["PYTHONPATH"] = os.pathsep.join(keep)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_import_does_not_import_cupy(tmp_path):
    r = _run("""
        import sys
        import numpy as np
        import cconv, cconv.grad
        from cconv.cuda import _cupy as _cuda, kernels as _cuda_kernels
        from cconv.cuda import depthwise, gemm, gemm_transpose
        assert 'cupy' not in sys.modules, 'import cconv imported cupy'
        x = np.ones((1, 2, 5, 5), np.float32); w = np.ones((3, 2, 3, 3), np.float32)
        y = cconv.conv2d(x, w)
        assert not cconv.select_backend(x, w).name.startswith('CUDA')
        cconv.convolution_backward(y, x, w, None, 1, 0, 1, False, 0, 1, (True, True, True))
        assert 'cupy' not in sys.modules, 'a NumPy call imported cupy'
        print('ok')
    """, tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_import_works_when_cupy_cannot_be_imported(tmp_path):
    r = _run("""
        import sys
        sys.modules['cupy'] = None  # import cupy raises ImportError
        import numpy as np
        import cconv
        from cconv.cuda import _cupy as _cuda
        assert _cuda.has_cupy() is False
        assert _cuda.cupy_or_none() is None
        assert 'unavailable' in _cuda.describe()
        y = cconv.conv1d(np.ones((1, 1, 4)), np.ones((1, 1, 2)))
        assert y.shape == (1, 1, 3)
        try:
            _cuda.require_cupy()
        except RuntimeError as e:
            assert 'CuPy is not installed or failed to import' in str(e), e
        else:
            raise AssertionError('require_cupy did not raise')
        print('ok')
    """, tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
