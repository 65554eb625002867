"""The CUDA kernels of cconv/cuda/*.cu, loaded lazily as one CuPy RawModule.

The sources live in ``cconv/cuda`` (installed with the package): a shared
header ``cc_common.cuh`` and one ``.cu`` file per family of kernels.  They
are concatenated (header first, so the ``#include`` of each ``.cu`` is
skipped by its guard) and compiled with NVRTC the first time a kernel is
launched; CuPy caches the binary on disk (``~/.cupy/kernel_cache``) and this
module caches the functions per device.  Nothing here imports CuPy at import
time.

``Kernels`` wraps every kernel in a Python method with the argument order of
the ``.cu`` files.  It launches through a callable ``launch(name, total,
args)``: the CuPy launcher on a GPU, or, in the tests, the CPU harness of
``tests/c/cuda_harness.cpp``, which runs the same sources sequentially on
NumPy arrays.  So the index arithmetic and the backends' tiling are checked
without a GPU.
"""
from __future__ import annotations

import contextlib
import math
import os
import threading
from typing import Any, Callable, Sequence

import numpy as np

__all__ = [
    "SOURCE_FILES",
    "KERNEL_BASENAMES",
    "source_dir",
    "source_paths",
    "module_source",
    "geom_args",
    "Kernels",
    "kernels_for",
    "context",
    "on_device",
    "is_cupy_module",
    "workspace_bytes",
    "set_workspace_bytes",
    "bias_grad",
]

# Header first: the .cu files include it only when CC_COMMON_CUH is undefined.
SOURCE_FILES = ("cc_common.cuh", "im2col.cu", "depthwise.cu", "reduce.cu")

# Every kernel exists as <base>_f32 and <base>_f64 (extern "C" names).
KERNEL_BASENAMES = (
    "cc_im2col",
    "cc_col2im",
    "cc_cols_from_nchw",
    "cc_nchw_from_cols",
    "cc_dw_fwd",
    "cc_dw_adj",
    "cc_dw_wgrad_part",
    "cc_bias_part",
    "cc_reduce_parts",
)

BLOCK = 256          # threads per block of every launch
MAX_GRID = 1 << 16   # blocks; the kernels are grid-stride loops

# Bound on the GEMM backends' scratch memory (column buffers and GEMM
# results) per call, as on the CPU; tiles of the batch and of the output
# columns are sized to fit under it.
_WORKSPACE = [64 * 1024 * 1024]


def workspace_bytes() -> int:
    """Bytes of scratch memory a CUDA GEMM call may use (tiles fit under it)."""
    return _WORKSPACE[0]


def set_workspace_bytes(nbytes: int) -> None:
    """Set the CUDA GEMM workspace bound (at least 1 KiB)."""
    nbytes = int(nbytes)
    if nbytes < 1024:
        raise ValueError(f"set_workspace_bytes: nbytes must be >= 1024, but got {nbytes}")
    _WORKSPACE[0] = nbytes


# --------------------------------------------------------------------------
# sources
# --------------------------------------------------------------------------
def source_dir() -> str:
    """The folder holding the installed .cu/.cuh sources."""
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.isfile(os.path.join(here, SOURCE_FILES[0])):
        return here
    # a loader without a real __file__ (zip, custom importer)
    from importlib import resources

    with contextlib.suppress(Exception):
        p = resources.files("cconv.cuda")
        if (p / SOURCE_FILES[0]).is_file():
            return str(p)
    raise FileNotFoundError(f"cconv: the CUDA kernel sources are missing (looked in {here})")


def source_paths() -> list[str]:
    d = source_dir()
    return [os.path.join(d, f) for f in SOURCE_FILES]


_source_cache: list[str] = []


def module_source() -> str:
    """The text NVRTC compiles: the header and every .cu file, in order."""
    if not _source_cache:
        parts = []
        for path in source_paths():
            with open(path, encoding="utf-8") as f:
                parts.append(f"// ---- {os.path.basename(path)}\n" + f.read())
        _source_cache.append("\n".join(parts))
    return _source_cache[0]


# --------------------------------------------------------------------------
# launching
# --------------------------------------------------------------------------
def is_cupy_module(xp: Any) -> bool:
    return getattr(xp, "__name__", "") == "cupy"


def geom_args(geom: tuple) -> tuple[int, ...]:
    """The 18 geometry scalars of CC_GEOM_PARAMS from ``ConvParams.geom()``."""
    _, _, _, _, i3, o3, k3, s3, p3, d3 = geom
    return tuple(int(v) for t in (i3, o3, k3, s3, p3, d3) for v in t)


def _suffix(a) -> str:
    dt = np.dtype(a.dtype)
    if dt == np.float32:
        return "f32"
    if dt == np.float64:
        return "f64"
    raise TypeError(f"cconv CUDA kernels run float32 or float64, not {dt}")


class Kernels:
    """Python front of the kernels; ``launch(name, total, args)`` runs kernel
    ``name`` over ``total`` grid-stride iterations with ``args`` (arrays of
    ``xp`` and ints, in the .cu order)."""

    def __init__(self, xp, launch: Callable[[str, int, Sequence[Any]], None]):
        self.xp = xp
        self._launch = launch

    def _run(self, base: str, like, total: int, args: Sequence[Any]) -> None:
        if total > 0:
            self._launch(f"{base}_{_suffix(like)}", int(total), args)

    # ---- im2col.cu --------------------------------------------------------
    def im2col(self, x, col, nb, C, cig, p0, np_, layout, geom) -> None:
        """col (layout 0: (C, kk, nb, np); 1: (groups, nb*np, cig*kk)) of the
        nb images starting at x, output columns p0 .. p0+np-1."""
        kk = math.prod(geom[6])
        self._run("cc_im2col", col, C * kk * nb * np_,
                  (x, col, nb, C, cig, p0, np_, layout) + geom_args(geom))

    def col2im(self, col, x, bias, nb, C, p0, np_, q0, nq, accumulate, geom) -> None:
        """x[n, c, q0:q0+nq] (=, or += when accumulate) the gather of the
        layout-0 col over columns p0 .. p0+np-1 (+ bias[c])."""
        self._run("cc_col2im", x, nb * C * nq,
                  (col, x, x if bias is None else bias, int(bias is not None), int(bool(accumulate)),
                   nb, C, p0, np_, q0, nq) + geom_args(geom))

    def cols_from_nchw(self, src, dst, nb, C, P, p0, np_) -> None:
        """dst (C, nb, np) = columns p0 .. p0+np-1 of src (nb, C, P)."""
        self._run("cc_cols_from_nchw", dst, C * nb * np_, (src, dst, nb, C, P, p0, np_))

    def nchw_from_cols(self, src, dst, bias, nb, C, P, p0, np_) -> None:
        """Columns p0 .. p0+np-1 of dst (nb, C, P) = src (C, nb, np) (+ bias[c])."""
        self._run("cc_nchw_from_cols", dst, nb * C * np_,
                  (src, dst, dst if bias is None else bias, int(bias is not None), nb, C, P, p0, np_))

    # ---- depthwise.cu -----------------------------------------------------
    def dw_fwd(self, x, w, bias, y, N, C, Mu, geom) -> None:
        o = math.prod(geom[5])
        self._run("cc_dw_fwd", y, N * C * Mu * o,
                  (x, w, y if bias is None else bias, int(bias is not None), y, N, C, Mu) + geom_args(geom))

    def dw_adj(self, gy, w, bias, gx, N, C, Mu, geom) -> None:
        i = math.prod(geom[4])
        self._run("cc_dw_adj", gx, N * C * i,
                  (gy, w, gx if bias is None else bias, int(bias is not None), gx, N, C, Mu) + geom_args(geom))

    def dw_wgrad(self, x, gy, gw, N, C, Mu, geom) -> None:
        """gw (C*Mu, 1, *k) = d<gy, dw_conv(x, w)>/dw, in a fixed order."""
        o3, k3 = geom[5], geom[6]
        kk = math.prod(k3)
        nw = C * Mu * kk
        if nw == 0:
            return
        nrows = N * o3[0] * o3[1]
        nchunks, rpc = wgrad_chunks(nrows, nw)
        part = self.xp.empty(nw * nchunks, dtype=np.float64)
        self._run("cc_dw_wgrad_part", gw, nw * nchunks,
                  (x, gy, part, N, C, Mu, nchunks, rpc) + geom_args(geom))
        self._run("cc_reduce_parts", gw, nw, (part, gw, nw, nchunks))

    # ---- reduce.cu --------------------------------------------------------
    def bias_grad(self, gy, gb, N, C, P) -> None:
        """gb[c] = sum over n, p of gy (N, C, P), in a fixed order (double)."""
        if C == 0:
            return
        nchunks, length = bias_chunks(N * P, C)
        part = self.xp.empty(C * nchunks, dtype=np.float64)
        self._run("cc_bias_part", gb, C * nchunks, (gy, part, N, C, P, nchunks, length))
        self._run("cc_reduce_parts", gb, C, (part, gb, C, nchunks))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def wgrad_chunks(nrows: int, nw: int, target: int = 1 << 17) -> tuple[int, int]:
    """(nchunks, rows per chunk) for the depthwise weight gradient: enough
    (weight, chunk) threads to fill a GPU; depends only on the shape."""
    if nrows <= 0:
        return 1, 1
    nchunks = max(1, min(nrows, _ceil_div(target, max(nw, 1))))
    rpc = _ceil_div(nrows, nchunks)
    return _ceil_div(nrows, rpc), rpc


def bias_chunks(length: int, channels: int, target: int = 1 << 16) -> tuple[int, int]:
    """(nchunks, elements per chunk) for the bias gradient."""
    if length <= 0:
        return 1, 1
    nchunks = max(1, min(length, _ceil_div(target, max(channels, 1))))
    per = _ceil_div(length, nchunks)
    return _ceil_div(length, per), per


# --------------------------------------------------------------------------
# CuPy
# --------------------------------------------------------------------------
_lock = threading.Lock()
_module: list[Any] = []
_functions: dict[tuple[int, str], Any] = {}
_kernels: dict[int, Kernels] = {}


def _raw_module(cp):
    if not _module:
        with _lock:
            if not _module:
                _module.append(cp.RawModule(code=module_source()))
    return _module[0]


def _function(cp, name: str):
    dev = cp.cuda.runtime.getDevice()
    key = (dev, name)
    fn = _functions.get(key)
    if fn is None:
        try:
            fn = _raw_module(cp).get_function(name)
        except Exception as e:  # NVRTC missing or failing, no such kernel
            raise RuntimeError(
                f"cconv: could not compile or load the CUDA kernel {name!r} from "
                f"{source_dir()} ({type(e).__name__}: {e})"
            ) from e
        with _lock:
            _functions[key] = fn
    return fn


def _cupy_launcher(cp):
    i64 = np.int64

    def launch(name: str, total: int, args: Sequence[Any]) -> None:
        fn = _function(cp, name)
        grid = max(1, min(_ceil_div(total, BLOCK), MAX_GRID))
        fn((grid,), (BLOCK,), tuple(i64(a) if isinstance(a, (int, np.integer)) else a for a in args))

    return launch


def kernels_for(cp) -> Kernels:
    """The ``Kernels`` of the CuPy module ``cp`` (cached)."""
    k = _kernels.get(id(cp))
    if k is None:
        k = Kernels(cp, _cupy_launcher(cp))
        _kernels[id(cp)] = k
    return k


def context(a) -> tuple[Any, Kernels]:
    """(cupy, Kernels) for a cupy.ndarray ``a``; TypeError for anything else."""
    from .._array import is_cupy

    if not is_cupy(a):
        raise TypeError(
            f"cconv: the CUDA backends run cupy.ndarray arrays, but got {type(a).__module__}.{type(a).__name__}"
        )
    from . import _cupy

    cp = _cupy.require_cupy()
    return cp, kernels_for(cp)


def on_device(a):
    """A context manager making ``a``'s device current (CuPy), else a no-op."""
    dev = getattr(a, "device", None)
    if dev is not None and hasattr(dev, "__enter__") and hasattr(dev, "id"):
        return dev
    return contextlib.nullcontext()


def bias_grad(gy, out=None):
    """grad_bias of a convolution on the GPU: ``out[c] = gy.sum over every
    axis but 1``, for a float32/float64 cupy.ndarray ``gy`` of shape (N, C,
    *spatial), summed in double in a fixed order (deterministic)."""
    cp, K = context(gy)
    N, C = int(gy.shape[0]), int(gy.shape[1])
    P = math.prod(int(s) for s in gy.shape[2:])
    if out is None:
        out = cp.empty((C,), dtype=gy.dtype)
    with on_device(gy):
        g = cp.ascontiguousarray(gy)
        if N * P == 0:
            out[...] = 0
        else:
            K.bias_grad(g, out, N, C, P)
    return out
