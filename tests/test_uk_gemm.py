"""The GEMM on the implicit GEMM's micro-kernels (src/gemm/uk_gemm.c), which
takes the float32 products of the GEMM convolutions (im2col + GEMM, 1x1)
and of their adjoints (transposed convolutions and grad_input: A
transposed) from OpenBLAS on 16-lane kernels (AVX-512) (``CCONV_UK_GEMM``
decides where set; its K blocks: ``CCONV_UK_LONG_KC``).

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
from reference import ref_conv, ref_conv_grad_input, ref_conv_transpose

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
    # a small image (N = 196, 5 micro-panels) and 130 rows (17 panels, the
    # last of 2 rows): A's rows read in place (ukra, rows past M zeros)
    ((1, 300, 14, 14), (130, 300, 1, 1), 1, 0, "gemm_1x1"),
    # fewer columns with A in place: a last micro-panel of 1-4 columns as
    # dot products (ukrt), or only such columns; N = 49, 50, 98 (two
    # images), 4, 3 (K = 1501: a last K block of 477), 3 images of 1
    ((1, 512, 7, 7), (300, 512, 1, 1), 1, 0, "gemm_1x1"),
    ((1, 256, 14, 14), (520, 256, 1, 1), 2, 0, "gemm"),
    ((1, 700, 50), (200, 700, 1), 1, 0, "gemm_1x1"),
    ((2, 300, 7, 7), (200, 300, 1, 1), 1, 0, "gemm_1x1"),
    ((1, 1000, 2, 2), (300, 1000, 1, 1), 1, 0, "gemm_1x1"),
    ((1, 1501, 1, 3), (250, 1501, 1, 1), 1, 0, "gemm_1x1"),
    ((3, 2000, 1, 1), (600, 2000, 1, 1), 1, 0, "gemm_1x1"),
    # ... and 1-4 columns past the last whole vector of a micro-panel:
    # N = 18 (two 3x3 images), 36 (four), 20, 33 (16 or 32 + the rest)
    ((2, 512, 3, 3), (200, 512, 1, 1), 1, 0, "gemm_1x1"),
    ((4, 100, 3, 3), (130, 100, 1, 1), 1, 0, "gemm_1x1"),
    ((1, 300, 4, 5), (150, 300, 1, 1), 1, 0, "gemm_1x1"),
    ((1, 200, 33), (120, 200, 1), 1, 0, "gemm_1x1"),
    # B in place (few panels) ending in a panel of at most MR / 2 rows: the
    # half-row kernel (20 = 2 x 8 + 4, 27 = 3 x 8 + 3; 50 and 33 above)
    ((1, 64, 40, 40), (20, 64, 1, 1), 1, 0, "gemm_1x1"),
    ((2, 48, 30, 30), (27, 48, 1, 1), 1, 0, "gemm_1x1"),
]


def _arrays(tag, xs, ws, nb):
    """Random float32 x, w and a bias of nb channels (None for nb = 0),
    seeded by tag, and the generator."""
    rng = np.random.default_rng(zlib.crc32(tag.encode()))
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(nb).astype(np.float32) if nb else None
    return rng, x, w, b


def _check_every_thread_count(name, run, ref, what):
    """run() under instruction set name at 1 and 2 threads, within 2e-6 of
    the largest element of the float64 reference."""
    with forced_isa(name):
        for nt in (1, 2):
            cconv.set_num_threads(nt)
            err = np.abs(run() - ref).max() / np.abs(ref).max()
            assert err <= 2e-6, (name, what, nt, err)


def _f64(a):
    return None if a is None else a.astype(np.float64)


# The adjoint's products, op(A) = A^T: (x shape, w shape, stride, padding,
# backend).  Transposed convolutions: rows = C_out x taps of 297 (two A
# blocks of 96 rows and a partial 8-row panel), 123, 576; columns of one
# image (P = 1024) and of several batched (4 x 64, 3 x 70).
T_CASES = [
    ((4, 64, 8, 8), (64, 33, 3, 3), 2, 1, "gemm_transpose"),
    ((3, 130, 70), (130, 41, 3), 2, 0, "gemm_transpose"),
    ((1, 96, 32, 32), (96, 144, 2, 2), 2, 0, "gemm_transpose"),
    ((2, 600, 16, 16), (600, 20, 2, 2), 2, 0, "gemm_transpose"),  # K = 600: two K blocks
]


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("case", range(len(CASES) + len(T_CASES)))
def test_gemm_convolutions_on_the_micro_kernels(name, case, restore_threads):
    """The forward of the GEMM convolutions (CASES) and of transposed ones
    (T_CASES), bias on every other case."""
    transposed = case >= len(CASES)
    xs, ws, s, pad, backend = T_CASES[case - len(CASES)] if transposed else CASES[case]
    nb = 0 if case % 2 else ws[1] if transposed else ws[0]
    _, x, w, b = _arrays(f"uk gemm {name} {case}", xs, ws, nb)
    if transposed:
        ref = ref_conv_transpose(_f64(x), _f64(w), _f64(b), stride=s, padding=pad)
        f = cconv.conv_transpose1d if len(xs) == 3 else cconv.conv_transpose2d
    else:
        ref = ref_conv(_f64(x), _f64(w), _f64(b), stride=s, pad_before=pad)
        f = cconv.conv1d if len(xs) == 3 else cconv.conv2d
    _check_every_thread_count(name, lambda: f(x, w, b, stride=s, padding=pad, backend=backend),
                              ref, (xs, ws))


# grad_input of GEMM convolutions: (x shape, w shape, stride, padding, backend)
G_CASES = [
    ((1, 64, 1000), (64, 64, 2), 2, 0, "gemm"),          # 1-D k2 s2: rows 128
    ((4, 3, 64, 64), (96, 3, 8, 8), 8, 0, "gemm"),       # patches: rows 192, 4 x 64 columns
    ((1, 77, 30, 41), (33, 77, 3, 3), 1, 1, "gemm"),     # rows 693
    ((2, 200, 17, 23), (50, 200, 1, 1), 1, 0, "gemm_1x1"),  # rows 200, in place
    ((1, 24, 40, 40), (560, 24, 3, 3), 1, 1, "gemm"),    # K = 560: two K blocks
]


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("case", range(len(G_CASES)))
def test_grad_input_on_the_micro_kernels(name, case, restore_threads):
    xs, ws, s, pad, backend = G_CASES[case]
    nd = len(xs) - 2
    rng, x, w, _ = _arrays(f"uk gemm gi {name} {case}", xs, ws, 0)
    f = cconv.conv1d if nd == 1 else cconv.conv2d
    gy = rng.standard_normal(f(x, w, stride=s, padding=pad).shape).astype(np.float32)
    ref = ref_conv_grad_input(_f64(gy), _f64(w), xs, stride=s, pad_before=pad)

    def grad_input():
        return cconv.convolution_backward(gy, x, w, None, [s] * nd, [pad] * nd, [1] * nd, False,
                                          [0] * nd, 1, [True, False, False], backend=backend)[0]
    _check_every_thread_count(name, grad_input, ref, (xs, ws))


_SCRIPT = """
import numpy as np, cconv, hashlib
rng = np.random.default_rng(1)
x = rng.standard_normal((1, 300, 900)).astype(np.float32)
w = rng.standard_normal((64, 300, 3)).astype(np.float32)
y = cconv.conv1d(x, w, backend="gemm")
print(hashlib.sha256(y.tobytes()).hexdigest())
"""


def _digest(value: str, script: str = _SCRIPT) -> str:
    env = dict(os.environ, CCONV_UK_GEMM=value, CCONV_SIMD="avx512")
    # from the tests' folder: not the source tree, whose cconv/ an installed
    # (not editable) package must not be shadowed by
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120, check=True, cwd=HERE)
    return out.stdout.strip()


_SCRIPT_T = """
import numpy as np, cconv, hashlib
rng = np.random.default_rng(2)
x = rng.standard_normal((8, 640, 8, 8)).astype(np.float32)
w = rng.standard_normal((640, 128, 4, 4)).astype(np.float32)
y = cconv.conv_transpose2d(x, w, stride=2, padding=1, backend="gemm_transpose")
print(hashlib.sha256(y.tobytes()).hexdigest())
"""


@pytest.mark.skipif("avx512" not in ISAS, reason="needs the AVX-512 kernels")
def test_environment_switches_the_adjoint_gemm():
    """The transposed convolution's product (A transposed, DCGAN's k4 s2 on
    8x8 images) runs on this GEMM under CCONV_UK_GEMM=1 and on OpenBLAS
    under =0: the bits differ (K = 640 summed in other blocks; at DCGAN's
    own 256 both sum in one block, in the same order, to the same bits),
    each repeatable."""
    on, off = _digest("1", _SCRIPT_T), _digest("0", _SCRIPT_T)
    assert on == _digest("1", _SCRIPT_T) and off == _digest("0", _SCRIPT_T)
    assert on != off


@pytest.mark.skipif("avx512" not in ISAS, reason="needs the AVX-512 kernels")
def test_environment_switches_the_gemm():
    """CCONV_UK_GEMM=1 and =0 run the same product through this GEMM and
    through OpenBLAS: the same values to float32 rounding (above), not the
    same bits (K = 900 summed in other orders), and each repeatable."""
    on, off = _digest("1"), _digest("0")
    assert on == _digest("1") and off == _digest("0")
    assert on != off


# Products of at most 96 rows (12 panels), which read B in place: the 1x1
# forward (rows = C_out: 8, 40, 96, and 20: two whole panels and a partial
# one, whose calls prefetch nothing), an im2col forward (24 rows, K = 27 x 12
# = 324: blocks of 128, 128, 68) and grad_input (rows = C_in: 40); columns
# past the 1024-column B block ending in a partial micro-panel (37 x 41 =
# 1517), K = 300 (blocks of 128, 128, 44); each call's share of the next
# micro-panel's rows is kc / panels rounded up (40 rows: 26, the last 24).
_SPREAD_SCRIPT = """
import hashlib, sys, numpy as np, cconv
from cconv import _kernels
sys.path.insert(0, ".")
from reference import ref_conv, ref_conv_grad_input
rng = np.random.default_rng(7)
h = hashlib.sha256()
worst = 0.0
def check(y, ref):
    global worst
    h.update(y.tobytes())
    worst = max(worst, float(np.abs(y - ref).max() / np.abs(ref).max()))
for (n, c, k, hh, ww, kk, gi) in [(1, 300, 40, 37, 41, 1, 0), (2, 300, 8, 20, 30, 1, 0),
                                   (1, 256, 96, 24, 24, 1, 0), (1, 12, 24, 33, 35, 3, 0),
                                   (1, 300, 20, 37, 41, 1, 0),
                                   (1, 40, 300, 37, 41, 1, 1)]:
    x = rng.standard_normal((n, c, hh, ww)).astype(np.float32)
    w = rng.standard_normal((k, c, kk, kk)).astype(np.float32)
    be = "gemm_1x1" if kk == 1 else "gemm"
    for t in (1, 2):
        cconv.set_num_threads(t)
        if gi:
            gy = rng.standard_normal((n, k, hh, ww)).astype(np.float32)
            r = ref_conv_grad_input(gy.astype(np.float64), w.astype(np.float64), x.shape)
            g = cconv.convolution_backward(gy, x, w, None, [1, 1], [0, 0], [1, 1], False,
                                           [0, 0], 1, [True, False, False], backend=be)[0]
            check(g, r)
        else:
            r = ref_conv(x.astype(np.float64), w.astype(np.float64), None)
            check(cconv.conv2d(x, w, backend=be), r)
print(_kernels.uk_spread_pf(), _kernels.uk_gemm_runs(), h.hexdigest(), worst)
"""


def _spread_run(value: str):
    env = {k: v for k, v in os.environ.items() if k != "CCONV_UK_SPREAD_PF"}
    env.update(CCONV_SIMD="avx512", CCONV_UK_GEMM="1")
    if value is not None:
        env["CCONV_UK_SPREAD_PF"] = value
    out = subprocess.run([sys.executable, "-c", _SPREAD_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300, cwd=HERE)
    assert out.returncode == 0, out.stderr
    on, runs, digest, worst = out.stdout.split()
    return on == "True", runs == "True", digest, float(worst)


@pytest.mark.skipif("avx512" not in ISAS, reason="needs the AVX-512 kernels")
def test_spread_prefetch_keeps_the_bits():
    """The in-place products' prefetch inside the kernel calls
    (CCONV_UK_SPREAD_PF=1) or between them (=0) is a hint: the same bits
    either way, within the float32 bound of the float64 reference; the
    variable decides, other values leave the default (on)."""
    on1, runs, d1, e1 = _spread_run("1")
    on0, _, d0, e0 = _spread_run("0")
    assert runs and on1 and not on0
    assert d1 == d0
    assert e1 <= 2e-6 and e0 <= 2e-6, (e1, e0)
    for value in (None, "", "2"):
        on, _, d, _ = _spread_run(value)
        assert on, value
        assert d == d1


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("case", range(len(CASES) + len(T_CASES) + len(G_CASES)))
def test_float64_products(name, case, restore_threads):
    """float64: the products that pack B run on the 8-lane kernels where
    CCONV_UK_GEMM_F64 (default: on) lets them (AVX-512), the others and
    the other instruction sets on OpenBLAS; every case within 1e-12 of the
    largest element of the float64 reference at 1 and 2 threads."""
    nc, nt = len(CASES), len(T_CASES)
    grad = case >= nc + nt
    transposed = nc <= case < nc + nt
    xs, ws, s, pad, backend = (G_CASES[case - nc - nt] if grad else
                               T_CASES[case - nc] if transposed else CASES[case])
    nd = len(xs) - 2
    rng, x, w, b = _arrays(f"uk gemm f64 {name} {case}", xs, ws,
                           0 if grad or case % 2 else ws[1] if transposed else ws[0])
    x, w = x.astype(np.float64), w.astype(np.float64)
    b = None if b is None else b.astype(np.float64)
    if grad:
        f = cconv.conv1d if nd == 1 else cconv.conv2d
        gy = rng.standard_normal(f(x, w, stride=s, padding=pad).shape)
        ref = ref_conv_grad_input(gy, w, xs, stride=s, pad_before=pad)

        def run():
            return cconv.convolution_backward(gy, x, w, None, [s] * nd, [pad] * nd, [1] * nd, False,
                                              [0] * nd, 1, [True, False, False], backend=backend)[0]
    elif transposed:
        ref = ref_conv_transpose(x, w, b, stride=s, padding=pad)
        f = cconv.conv_transpose1d if nd == 1 else cconv.conv_transpose2d

        def run():
            return f(x, w, b, stride=s, padding=pad, backend=backend)
    else:
        ref = ref_conv(x, w, b, stride=s, pad_before=pad)
        f = cconv.conv1d if nd == 1 else cconv.conv2d

        def run():
            return f(x, w, b, stride=s, padding=pad, backend=backend)
    with forced_isa(name):
        for t in (1, 2):
            cconv.set_num_threads(t)
            err = np.abs(run() - ref).max() / np.abs(ref).max()
            assert err <= 1e-12, (name, case, t, err)


_RULE_SCRIPT = """
from cconv import _kernels
shapes = [(0, 0, 2048, 256, 256), (1, 0, 2048, 256, 256), (0, 0, 512, 2000, 192),
          (0, 0, 96, 3136, 256), (0, 0, 104, 3136, 256), (0, 0, 40, 1517, 300),
          (0, 1, 512, 512, 512), (0, 0, 512, 50, 512), (0, 0, 4, 4000, 512),
          (0, 0, 512, 1, 4096), (0, 0, 512, 3, 1024), (0, 0, 96, 50, 512)]
print(_kernels.uk_gemm_f64_runs(), _kernels.uk_gemm_runs(),
      *[int(_kernels.uk_gemm_takes(e, *s)) for e in (4, 8) for s in shapes])
"""


def _rule_run(**env):
    e = {k: v for k, v in os.environ.items() if k not in ("CCONV_UK_GEMM_F64", "CCONV_UK_GEMM")}
    e.update(CCONV_SIMD="avx512", **env)
    out = subprocess.run([sys.executable, "-c", _RULE_SCRIPT], env=e, capture_output=True,
                         text=True, timeout=120, cwd=HERE)
    assert out.returncode == 0, out.stderr
    f64_runs, f32_runs, *takes = out.stdout.split()
    return f64_runs == "True", f32_runs == "True", [int(t) for t in takes]


@pytest.mark.skipif("avx512" not in ISAS, reason="needs the AVX-512 kernels")
def test_float64_takes_packed_products_only():
    """float64 products run on the 8-lane kernels where CCONV_UK_GEMM_F64
    lets them and B is packed (more than 12 panels of 8 rows: 104 rows
    yes, 96 no), never with B transposed, few columns (50 < 4 x 24) or
    fewer rows than a panel; float32's rule (in place from 8 rows; from 2
    columns where A's rows are read in place: more than 12 panels, not
    one column) does not move with it; other values and none leave the
    default (on, every vendor)."""
    f32_want = [1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 0]
    f64_want = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    on, f32_on, t_on = _rule_run(CCONV_UK_GEMM_F64="1")
    off, _, t_off = _rule_run(CCONV_UK_GEMM_F64="0")
    assert on and not off and f32_on
    assert t_on == f32_want + f64_want, t_on
    assert t_off == f32_want + [0] * 12, t_off
    _, f32_off, t_none = _rule_run(CCONV_UK_GEMM_F64="1", CCONV_UK_GEMM="0")
    assert not f32_off and t_none == [0] * 12 + f64_want  # each type its own choice
    for value in ("", "2"):
        dflt, _, t = _rule_run(CCONV_UK_GEMM_F64=value)
        assert dflt
        assert t == f32_want + (f64_want if dflt else [0] * 12)


def test_takes_rejects_other_sizes():
    with pytest.raises(ValueError, match="elsize must be 4 or 8"):
        cconv._kernels.uk_gemm_takes(2, False, False, 64, 64, 64)


# float64 products: (x shape, w shape, stride, padding, backend,
# transposed).  A 1-D k3 layer of 512 rows and DCGAN's k4 s2 transposed
# layer (2048 rows, A transposed, four images a product) and a grad_input of
# 200 rows pack B; 40 rows read B in place, which stays on OpenBLAS.  (The
# forward plans cut many layers' output channels into chunks of at most 12
# panels, which read B in place: those stay on OpenBLAS too.)
_F64_SCRIPT = """
import hashlib, sys, numpy as np, cconv
from cconv import _kernels
rng = np.random.default_rng(11)
out = []
for (xs, ws, s, p, be, tr) in [((1, 64, 2000), (512, 64, 3), 1, 0, "gemm", 0),
                               ((8, 256, 8, 8), (256, 128, 4, 4), 2, 1, "gemm_transpose", 1),
                               ((1, 300, 37, 41), (40, 300, 1, 1), 1, 0, "gemm_1x1", 0)]:
    x = rng.standard_normal(xs)
    w = rng.standard_normal(ws)
    f = (cconv.conv_transpose1d, cconv.conv_transpose2d) if tr else (cconv.conv1d, cconv.conv2d)
    y = f[len(xs) - 3](x, w, stride=s, padding=p, backend=be)
    out.append(hashlib.sha256(y.tobytes()).hexdigest()[:16])
x = rng.standard_normal((2, 200, 17, 23))
w = rng.standard_normal((50, 200, 1, 1))
gy = rng.standard_normal((2, 50, 17, 23))
g = cconv.convolution_backward(gy, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                               [True, False, False], backend="gemm_1x1")[0]
out.append(hashlib.sha256(g.tobytes()).hexdigest()[:16])
print(_kernels.uk_gemm_f64_runs(), *out)
"""


def _f64_run(value):
    env = {k: v for k, v in os.environ.items() if k != "CCONV_UK_GEMM_F64"}
    env.update(CCONV_SIMD="avx512")
    if value is not None:
        env["CCONV_UK_GEMM_F64"] = value
    out = subprocess.run([sys.executable, "-c", _F64_SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300, cwd=HERE)
    assert out.returncode == 0, out.stderr
    runs, *digests = out.stdout.split()
    return runs == "True", digests


@pytest.mark.skipif("avx512" not in ISAS, reason="needs the AVX-512 kernels")
def test_float64_environment_switches_the_gemm():
    """CCONV_UK_GEMM_F64=1 runs float64 products that pack B on the
    micro-kernels, =0 on OpenBLAS; a product that would read B in place (40
    rows) stays on OpenBLAS either way (the same bits); other values, and
    none, leave the default (on)."""
    on, d1 = _f64_run("1")
    off, d0 = _f64_run("0")
    assert on and not off
    # the 1-D layer's last bits differ (K = 192 summed in another order);
    # the transposed layer's and the grad_input's may match OpenBLAS's
    # order, which test_float64_takes_packed_products_only covers by rule
    assert d1[0] != d0[0], (d1, d0)
    assert d1[2] == d0[2]
    for value in (None, "", "2"):
        dflt, d = _f64_run(value)
        assert dflt, value
        assert d == (d1 if dflt else d0)
