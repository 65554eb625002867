"""The GEMM on the implicit GEMM's micro-kernels (src/gemm/uk_gemm.c), which
takes the float32 products of the GEMM convolutions (im2col + GEMM, 1x1)
from OpenBLAS on 16-lane kernels (AVX-512) on CPUs other than Intel's
(``CCONV_UK_GEMM`` decides where set).

Shapes chosen to cross every block edge of the driver: output channels (M)
not a multiple of the 8-row panels and above the 384-row A block, a
reduction (K) not a multiple of the 128-deep blocks, output positions (N)
past the 1008-column B block and ending in partial micro-panels (not a
multiple of 48, nor of 16), bias or none; every instruction set this CPU
runs (the others leave the product to OpenBLAS), 1 and 2 threads, against
the float64 reference of tests/reference.py."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import zlib

import numpy as np
import pytest

import cconv
from cconv import _depthwise

from isa_switch import forced_isa
from reference import ref_conv

ISAS = _depthwise.available_isas()
HERE = pathlib.Path(__file__).resolve().parent

# (x shape, w shape, stride, padding, backend)
CASES = [
    ((1, 37, 700), (403, 37, 5), 1, 2, "gemm"),         # M = 403: two A blocks, 2 partial rows
    ((1, 200, 70, 61), (403, 200, 1, 1), 1, 0, "gemm_1x1"),  # N = 1066-1068: two B blocks
    ((2, 130, 4200), (40, 130, 2), 1, 0, "gemm"),       # K = 260
    ((1, 64, 1000), (64, 64, 2), 2, 0, "gemm"),         # 1-D k2 s2 (N = 500)
    ((2, 3, 64, 64), (96, 3, 8, 8), 8, 0, "gemm"),      # patches: N = 64 (declined)
    ((1, 3, 224, 224), (72, 3, 16, 16), 16, 0, "gemm"),  # ViT-like: K = 768, N = 196
    ((2, 200, 17, 23), (50, 200, 1, 1), 1, 0, "gemm_1x1"),  # N = 391
    ((1, 77, 30, 41), (33, 77, 3, 3), 1, 1, "gemm"),
]


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_gemm_convolutions_on_the_micro_kernels(name, case, restore_threads):
    xs, ws, s, pad, backend = CASES[case]
    rng = np.random.default_rng(zlib.crc32(f"uk gemm {name} {case}".encode()))
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32) if case % 2 == 0 else None
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                   None if b is None else b.astype(np.float64), stride=s, pad_before=pad)
    f = cconv.conv1d if len(xs) == 3 else cconv.conv2d
    with forced_isa(name):
        for nt in (1, 2):
            cconv.set_num_threads(nt)
            y = f(x, w, b, stride=s, padding=pad, backend=backend)
            err = np.abs(y - ref).max() / np.abs(ref).max()
            assert err <= 2e-6, (name, xs, ws, nt, err)


_SCRIPT = """
import numpy as np, cconv, hashlib
rng = np.random.default_rng(1)
x = rng.standard_normal((1, 300, 900)).astype(np.float32)
w = rng.standard_normal((64, 300, 3)).astype(np.float32)
y = cconv.conv1d(x, w, backend="gemm")
print(hashlib.sha256(y.tobytes()).hexdigest())
"""


def _digest(value: str) -> str:
    env = dict(os.environ, CCONV_UK_GEMM=value, CCONV_SIMD="avx512")
    # from the tests' folder: not the source tree, whose cconv/ an installed
    # (not editable) package must not be shadowed by
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                         text=True, timeout=120, check=True, cwd=HERE)
    return out.stdout.strip()


@pytest.mark.skipif("avx512" not in ISAS, reason="needs the AVX-512 kernels")
def test_environment_switches_the_gemm():
    """CCONV_UK_GEMM=1 and =0 run the same product through this GEMM and
    through OpenBLAS: the same values to float32 rounding (above), not the
    same bits (K = 900 summed in other orders), and each repeatable."""
    on, off = _digest("1"), _digest("0")
    assert on == _digest("1") and off == _digest("0")
    assert on != off
