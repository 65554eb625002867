"""Build tests/c/cuda_harness.cpp (cconv's CUDA kernels as plain C++) and
launch its kernels on NumPy arrays, for the tests that check the CUDA path
without a GPU.

``build(outdir)`` compiles the shared library with g++ against the installed
kernel sources (``cconv.cuda.kernels.source_dir()``); ``Harness(path)``
loads it; ``Harness.kernels(block, grid_cap)`` is a
``cconv.cuda.kernels.Kernels`` whose launches run the grid sequentially on
the CPU (a small ``grid_cap`` makes every thread loop, exercising the
grid-stride loops).
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "cuda_harness.cpp")


def compiler() -> str | None:
    for cxx in (os.environ.get("CXX"), "g++", "c++", "clang++"):
        if cxx and shutil.which(cxx):
            return shutil.which(cxx)
    return None


def build(outdir: str) -> str:
    """Compile the harness into ``outdir``; returns the .so path."""
    from cconv.cuda import kernels as _cuda_kernels

    cxx = compiler()
    if cxx is None:
        raise RuntimeError("no C++ compiler (g++, c++, clang++) found")
    out = os.path.join(outdir, "cuda_harness.so")
    cmd = [cxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
           "-I", _cuda_kernels.source_dir(), SOURCE, "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"building the CUDA harness failed:\n{' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return out


class Harness:
    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path)
        self.lib.cc_harness_launch.restype = ctypes.c_int
        self.lib.cc_harness_launch.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint, ctypes.c_uint]
        self.max_args = int(self.lib.cc_harness_max_args())
        self.calls: list[tuple[str, int]] = []

    def address(self, name: str) -> int:
        return ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value

    def launch_grid(self, name: str, grid: int, block: int, args) -> None:
        """Run kernel ``name`` as a launch of ``grid`` x ``block`` threads."""
        vals = []
        keep = []
        for a in args:
            if isinstance(a, np.ndarray):
                # a kernel sees only a base pointer: a view must be C-contiguous
                if not a.flags.c_contiguous:
                    raise ValueError(f"{name}: a non-contiguous array (strides {a.strides}) passed to a kernel")
                keep.append(a)
                vals.append(a.ctypes.data)
            elif isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
                vals.append(int(a) & 0xFFFFFFFFFFFFFFFF)
            else:
                raise TypeError(f"{name}: argument of type {type(a).__name__} cannot be passed to a kernel")
        if len(vals) > self.max_args:
            raise ValueError(f"{name}: {len(vals)} arguments, the harness takes at most {self.max_args}")
        argv = (ctypes.c_uint64 * max(len(vals), 1))(*vals)
        rc = self.lib.cc_harness_launch(self.address(name), len(vals), argv, int(grid), int(block))
        if rc != 0:
            raise RuntimeError(f"cc_harness_launch({name}) returned {rc}")

    def launch(self, name: str, total: int, args, block: int = 64, grid_cap: int | None = None) -> None:
        """Run kernel ``name`` over ``total`` grid-stride iterations."""
        grid = -(-total // block)
        if grid_cap is not None:
            grid = min(grid, grid_cap)
        self.launch_grid(name, max(grid, 1), block, args)
        self.calls.append((name, total))

    def kernels(self, block: int = 64, grid_cap: int | None = None):
        from cconv.cuda.kernels import Kernels

        def launch(name, total, args):
            self.launch(name, total, args, block, grid_cap)

        return Kernels(np, launch)
