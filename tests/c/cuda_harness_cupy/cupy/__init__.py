"""A NumPy-backed stand-in for the few CuPy names cconv and its GPU tests use.

Only tests/test_cuda_shim.py puts this folder on sys.path, to run
tests/test_cuda.py without a GPU: ``cupy.ndarray`` is a NumPy subclass
whose type cconv recognises as a CuPy array, so every call takes the CUDA
path (array module = this module, the CUDA_* backends, the kernel loader);
``RawModule`` hands the kernels to the CPU harness of
tests/c/cuda_harness.cpp (built by the test; its path comes in
``CCONV_CUDA_HARNESS_SO``), which runs the very .cu sources that NVRTC
would compile, launch for launch (same grid and block); ``matmul`` is
NumPy's.  What this cannot check is CuPy itself (NVRTC, cuBLAS, device
memory): that is what the GPU run of tests/test_cuda.py is for.
"""
from __future__ import annotations

import importlib.util
import os
import types

import numpy as _np

__version__ = "0.0-cconv-test-shim"
__cconv_test_shim__ = True


class ndarray(_np.ndarray):
    """A 'device' array: a NumPy array whose type is cupy.ndarray."""

    def get(self):
        return _np.array(self, copy=True).view(_np.ndarray)


def _dev(a):
    return a.view(ndarray) if isinstance(a, _np.ndarray) else a


def _host(a):
    return a.view(_np.ndarray) if isinstance(a, ndarray) else a


def empty(shape, dtype=float, order="C"):
    return _np.empty(shape, dtype=dtype, order=order).view(ndarray)


def zeros(shape, dtype=float, order="C"):
    return _np.zeros(shape, dtype=dtype, order=order).view(ndarray)


def ones(shape, dtype=float, order="C"):
    return _np.ones(shape, dtype=dtype, order=order).view(ndarray)


def asarray(a, dtype=None):
    if isinstance(a, ndarray) and (dtype is None or _np.dtype(dtype) == a.dtype):
        return a
    return _np.array(_host(a), dtype=dtype, copy=True).view(ndarray)  # a host -> device copy


def ascontiguousarray(a, dtype=None):
    return _dev(_np.ascontiguousarray(a, dtype=dtype))


def asfortranarray(a, dtype=None):
    return _dev(_np.asfortranarray(a, dtype=dtype))


def asnumpy(a):
    return _np.array(_host(a), copy=True)


def matmul(a, b, out=None):
    if out is not None:
        _np.matmul(_host(a), _host(b), out=_host(out))
        return out
    return _dev(_np.matmul(_host(a), _host(b)))


def isfinite(a):
    return _dev(_np.isfinite(_host(a)))


def may_share_memory(a, b, max_work=None):
    return _np.may_share_memory(_host(a), _host(b))


def _harness():
    h = _harness.__dict__.get("h")
    if h is None:
        path = os.environ["CCONV_CUDA_HARNESS_SO"]
        here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        spec = importlib.util.spec_from_file_location("cuda_harness", os.path.join(here, "cuda_harness.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        h = _harness.h = mod.Harness(path)
    return h


class _Function:
    def __init__(self, name):
        self.name = name
        _harness().address(name)  # a missing kernel fails here, as in CuPy

    def __call__(self, grid, block, args, **kwargs):
        conv = []
        for a in args:
            if isinstance(a, _np.ndarray):
                conv.append(_host(a))
            elif isinstance(a, _np.integer) and a.dtype == _np.int64:
                conv.append(int(a))
            else:  # the real launcher passes only arrays and numpy.int64
                raise TypeError(f"{self.name}: kernel argument {a!r} of type {type(a).__name__}")
        assert len(grid) == 1 and len(block) == 1
        _harness().launch_grid(self.name, int(grid[0]), int(block[0]), conv)


class RawModule:
    def __init__(self, code=None, options=(), name_expressions=None, **kwargs):
        from cconv.cuda import kernels as _cuda_kernels

        assert code == _cuda_kernels.module_source(), "RawModule got other code than cconv/cuda"
        self.code = code

    def get_function(self, name):
        return _Function(name)


class _Runtime:
    @staticmethod
    def getDeviceCount():
        return 1

    @staticmethod
    def getDevice():
        return 0


cuda = types.SimpleNamespace(runtime=_Runtime())
