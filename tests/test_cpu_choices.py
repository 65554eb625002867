"""Kernel choices that follow the CPU's vendor (src/core/cpu.h): the
implicit GEMM's row prefetch, and the float32 GEMMs on the implicit GEMM's
micro-kernels.  Timing-only choices: the prefetch must give the same bits
either way, the GEMM the same values to float32 rounding; the environment
variable must decide when set, and the default must follow the vendor
rule."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from cconv import _kernels

HERE = pathlib.Path(__file__).resolve().parent

# grouped layers with few channels per group (the direct mode and the grouped
# weight gradient, where the prefetch runs) at 1 and 2 threads; the results'
# bytes are hashed
PROBE = """
import hashlib, numpy as np, cconv
from cconv import _kernels
rng = np.random.default_rng(5)
h = hashlib.sha256()
for (n, c, hw, g, s) in [(3, 64, 16, 4, 1), (2, 32, 33, 8, 2), (1, 48, 17, 16, 1)]:
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((c, c // g, 3, 3)).astype(np.float32)
    for t in (1, 2):
        cconv.set_num_threads(t)
        y = cconv.conv2d(x, w, stride=s, padding=1, groups=g, backend="implicit_gemm")
        h.update(y.tobytes())
        gw = cconv.convolution_backward(y, x, w, None, s, 1, 1, False, 0, g,
                                        (False, True, False), backend="implicit_gemm")[1]
        h.update(gw.tobytes())
print(_kernels.prefetch_rows(), _kernels.cpu_vendor(), h.hexdigest())
"""


def run_script(script, var, *args, **env):
    """The words a probe script prints, run in a process of its own with
    ``var`` (the choice's environment variable) taken out of the
    environment and ``env`` put in."""
    e = {k: v for k, v in os.environ.items() if k != var}
    e.update(env)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args],
                       capture_output=True, text=True, env=e, cwd=HERE, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def run_probe(**env):
    on, vendor, digest = run_script(PROBE, "CCONV_PREFETCH_ROWS", **env)
    return on == "True", vendor, digest


def test_vendor_is_one_of_three():
    assert _kernels.cpu_vendor() in ("amd", "intel", "other")


def test_environment_decides_and_results_do_not_change():
    on1, vendor, d1 = run_probe(CCONV_PREFETCH_ROWS="1")
    on0, _, d0 = run_probe(CCONV_PREFETCH_ROWS="0")
    assert on1 is True and on0 is False
    assert d1 == d0  # the same bits either way


@pytest.mark.parametrize("value", ["", "2", "yes", "on"])
def test_other_values_leave_the_vendor_rule(value):
    on, vendor, _ = run_probe(CCONV_PREFETCH_ROWS=value)
    assert on == (vendor != "intel")


def test_default_follows_the_vendor():
    on, vendor, _ = run_probe()
    assert on == (vendor != "intel")


def test_results_match_the_reference_with_the_prefetch():
    from reference import ref_conv
    import cconv
    rng = np.random.default_rng(11)
    for (n, c, hw, g) in [(2, 64, 14, 4), (1, 32, 28, 32), (3, 16, 7, 2)]:
        x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
        w = rng.standard_normal((c, c // g, 3, 3)).astype(np.float32)
        y = cconv.conv2d(x, w, padding=1, groups=g, backend="implicit_gemm")
        ref = ref_conv(x.astype(np.float64), w.astype(np.float64), None, 1, 1, dilation=1, groups=g)
        np.testing.assert_allclose(y, ref, rtol=2e-5, atol=2e-5 * np.abs(ref).max())


# GEMM convolutions whose float32 products the micro-kernels take where
# CCONV_UK_GEMM is on and the kernels have 16 lanes (im2col, 1x1, 1 and 2
# threads); the results are printed as float64 text
UK_PROBE = """
import numpy as np, cconv
from cconv import _kernels
rng = np.random.default_rng(7)
out = []
for xs, ws, s, backend in [((2, 96, 700), (200, 96, 3), 2, "gemm"),
                           ((1, 64, 30, 40), (72, 64, 1, 1), 1, "gemm_1x1")]:
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    f = cconv.conv1d if len(xs) == 3 else cconv.conv2d
    for t in (1, 2):
        cconv.set_num_threads(t)
        out.append(f(x, w, stride=s, backend=backend).astype(np.float64).ravel())
np.save(__import__("sys").argv[1], np.concatenate(out))
print(_kernels.uk_gemm(), _kernels.cpu_vendor())
"""


def run_uk_probe(tmp_path, **env):
    e = {k: v for k, v in os.environ.items() if k != "CCONV_UK_GEMM"}
    e.update(env)
    out = tmp_path / f"uk{len(list(tmp_path.iterdir()))}.npy"
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(UK_PROBE), str(out)],
                       capture_output=True, text=True, env=e, cwd=HERE, timeout=300)
    assert r.returncode == 0, r.stderr
    on, vendor = r.stdout.split()
    return on == "True", vendor, np.load(out)


def test_uk_gemm_environment_decides_values_agree(tmp_path):
    on1, vendor, y1 = run_uk_probe(tmp_path, CCONV_UK_GEMM="1")
    on0, _, y0 = run_uk_probe(tmp_path, CCONV_UK_GEMM="0")
    assert on1 is True and on0 is False
    assert np.abs(y1 - y0).max() <= 2e-6 * np.abs(y0).max()


@pytest.mark.parametrize("value", ["", "2", "on"])
def test_uk_gemm_other_values_leave_the_default(tmp_path, value):
    on, vendor, _ = run_uk_probe(tmp_path, CCONV_UK_GEMM=value)
    assert on is True  # on every CPU (measured on AMD Zen 4 and Intel)


def test_show_config_names_both_choices(capsys):
    import cconv
    from cconv._dispatch import simd_level
    cconv.show_config()
    line = [ln for ln in capsys.readouterr().out.splitlines() if "SIMD" in ln][0]
    assert ("row prefetch on" in line) == _kernels.prefetch_rows()
    # the own GEMM runs with the 16-lane float32 kernels only
    assert ("own GEMM on" in line) == (_kernels.uk_gemm() and simd_level() == "avx512")
    # and float64's where its own choice and the 8-lane kernels let it
    assert ("(float64 too)" in line) == _kernels.uk_gemm_f64_runs()
    # the SIMDe test build says its AVX-512 kernels are emulated
    assert ("emulated by SIMDe" in line) == (simd_level() in _kernels.emulated_isas())


def test_show_config_own_gemm_off_on_narrow_kernels():
    """With the AVX2 kernels forced the vendor choice stays, but no product
    runs on the own GEMM: show_config says off."""
    e = dict(os.environ, CCONV_SIMD="avx2", CCONV_UK_GEMM="1")
    r = subprocess.run([sys.executable, "-c", "import cconv; cconv.show_config()"],
                       capture_output=True, text=True, env=e, cwd=HERE, timeout=120)
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stdout.splitlines() if "SIMD" in ln][0]
    if line.split(":")[1].split()[0] == "avx2":
        assert "own GEMM off" in line


# Depthwise 3x3 planes of stride 1 and 2 (the forward on the plane backend,
# grad_input on the depthwise one, whose stride-1 adjoint runs the same plane
# kernels) of random widths, multipliers, batches and paddings, float32 and
# float64, 1 and 2 threads: the worst relative error against the float64
# reference of tests/reference.py per dtype, and a hash of the results'
# bytes, with the results themselves saved for the caller to compare across
# settings.  Under AVX-512 with CCONV_DW_256=1 they run the 256-bit plane
# kernels (built for AVX-512VL: two partial sums per 3x3 output vector;
# stride 2: rows of 20 outputs and more; the widths drawn fall on both
# sides), with 0 the AVX-512 ones (one sum).
DW_PROBE = """
import hashlib, sys, numpy as np, cconv
from cconv import _kernels
from reference import ref_conv, ref_conv_grad_input, ref_conv_grad_weight, rel_err, tolerance
rng = np.random.default_rng(int(sys.argv[1]))
h = hashlib.sha256()
worst = {"float32": 0.0, "float64": 0.0}
ran = wide_s2 = 0
outs = []
while ran < 18:
    n = int(rng.integers(1, 4)); c = int(rng.integers(2, 20)); m = int(rng.integers(1, 3))
    hh = int(rng.integers(1, 40)); s = int(rng.integers(1, 3))
    ww = int(rng.choice([1, 5, 7, 8, 15, 16, 17, 20, 31, 33, 37, 38, 39, 40, 41, 56, 57, 70, 113]))
    pad = int(rng.integers(0, 3)); bias = bool(rng.integers(0, 2))
    try:  # the plane kernels take most but not all small planes: draw again
        probe = np.zeros((1, c, hh, ww), np.float32)
        oy = cconv.conv2d(probe, np.zeros((c * m, 1, 3, 3), np.float32), stride=s,
                          padding=pad, groups=c, backend="depthwise_plane")
    except ValueError:
        continue
    ran += 1
    wide_s2 += s == 2 and oy.shape[-1] >= 20
    for dt in ("float32", "float64"):
        x = rng.standard_normal((n, c, hh, ww)).astype(dt)
        w = rng.standard_normal((c * m, 1, 3, 3)).astype(dt)
        b = rng.standard_normal(c * m).astype(dt) if bias else None
        gy = None
        for t in (1, 2):
            cconv.set_num_threads(t)
            y = cconv.conv2d(x, w, b, stride=s, padding=pad, groups=c, backend="depthwise_plane")
            if gy is None:
                gy = rng.standard_normal(y.shape).astype(dt)
            gx = cconv.convolution_backward(gy, x, w, None, s, pad, 1, False, 0, c,
                                            (True, False, False), backend="depthwise")[0]
            h.update(y.tobytes()); h.update(gx.tobytes())
            if t == 1:
                y1, gx1 = y, gx
            else:  # the same bits at every thread count
                assert np.array_equal(y, y1) and np.array_equal(gx, gx1), (n, c, hh, ww, s, dt)
            x64, w64 = x.astype(np.float64), w.astype(np.float64)
            ry = ref_conv(x64, w64, None if b is None else b.astype(np.float64), s, pad, groups=c)
            rg = ref_conv_grad_input(gy.astype(np.float64), w64, x.shape, s, pad, groups=c)
            worst[dt] = max(worst[dt], rel_err(y, ry), rel_err(gx, rg))
        outs += [y.astype(np.float64).ravel(), gx.astype(np.float64).ravel()]
# the weight gradient (the depthwise backend's wg kernel) of random 2-D
# geometries: kernels 3, 5 and 7, stride 1 and 2, dilation 1 and 2; its
# relative error against the reference over the suite's tolerance for its
# reduction length, which must stay below 1, the same bits at 1 and 2
# threads, and the values saved for the caller to compare across settings
wgw = []
wg_excess = 0.0
for case in range(10):
    n = int(rng.integers(1, 4)); c = int(rng.integers(2, 12)); k = int(rng.choice([3, 5, 7]))
    s = int(rng.integers(1, 3)); dil = int(rng.integers(1, 3)); pad = int(rng.integers(0, k))
    hh = int(rng.integers(dil * (k - 1) + 1, 40)); ww = int(rng.integers(dil * (k - 1) + 1, 70))
    for dt in ("float32", "float64"):
        x = rng.standard_normal((n, c, hh, ww)).astype(dt)
        w = rng.standard_normal((c, 1, k, k)).astype(dt)
        y = cconv.conv2d(x, w, stride=s, padding=pad, dilation=dil, groups=c)
        gy = rng.standard_normal(y.shape).astype(dt)
        got = []
        for t in (1, 2):
            cconv.set_num_threads(t)
            got.append(cconv.convolution_backward(gy, x, w, None, s, pad, dil, False, 0, c,
                                                  (False, True, False), backend="depthwise")[1])
        assert np.array_equal(got[0], got[1]), "grad_weight differs between 1 and 2 threads"
        ref = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), w.shape, s, pad,
                                   dilation=dil, groups=c)
        red = n * y.shape[-1] * y.shape[-2]
        wg_excess = max(wg_excess, rel_err(got[0], ref) / tolerance(dt, red))
        wgw.append(got[0].astype(np.float64).ravel())
np.save(sys.argv[2], np.concatenate(wgw))
np.save(sys.argv[3], np.concatenate(outs))
cconv.set_num_threads(1)
print(_kernels.dw_256(), _kernels.cpu_vendor(), _kernels.cpu_family(),
      " ".join(_kernels.available_isas()), wide_s2, worst["float32"], worst["float64"],
      wg_excess, h.hexdigest())
"""


def run_dw_probe(tmp_path, seed=3, **env):
    e = {k: v for k, v in os.environ.items() if k != "CCONV_DW_256"}
    e.update(env)
    k = len(list(tmp_path.iterdir()))
    out, fwd = tmp_path / f"wg{k}.npy", tmp_path / f"fwd{k}.npy"
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(DW_PROBE), str(seed), str(out),
                        str(fwd)], capture_output=True, text=True, env=e, cwd=HERE, timeout=300)
    assert r.returncode == 0, r.stderr
    *head, wide_s2, e32, e64, wg_excess, digest = r.stdout.split()
    on, vendor, family, isas = head[0] == "True", head[1], int(head[2]), head[3:]
    assert int(wide_s2) >= 1  # stride-2 rows of 20 outputs or more were drawn
    assert float(wg_excess) <= 1.0  # the weight gradient within the suite's tolerances
    return (on, vendor, family, isas, float(e32), float(e64), digest, np.load(out),
            np.load(fwd))


@pytest.mark.parametrize("seed", [3, 4])
def test_dw_256_environment_decides_and_results_agree(tmp_path, seed):
    on1, _, _, isas, e32_1, e64_1, d1, wg1, y1 = run_dw_probe(tmp_path, seed, CCONV_DW_256="1")
    on0, _, _, _, e32_0, e64_0, d0, wg0, y0 = run_dw_probe(tmp_path, seed, CCONV_DW_256="0")
    assert on1 is True and on0 is False
    # both kernel sets within the suite's tolerances of the float64 reference
    for e32, e64 in ((e32_1, e64_1), (e32_0, e64_0)):
        assert e32 <= 1e-5 and e64 <= 1e-12, (e32, e64)
    if "avx512" not in isas:  # one kernel set either way
        assert d1 == d0
    else:
        # the 256-bit 3x3 kernels add two partial sums, the 512-bit ones one:
        # the same values to rounding (float32 and float64 concatenated)
        assert y1.shape == y0.shape
        assert np.abs(y1 - y0).max() <= 1e-5 * np.abs(y0).max()
    # the weight gradient's lanes add in another order: the same values to
    # rounding (float32 and float64 concatenated: the float32 bound)
    assert np.abs(wg1 - wg0).max() <= 1e-5 * np.abs(wg0).max()


@pytest.mark.parametrize("value", ["", "2", "on"])
def test_dw_256_other_values_leave_the_family_rule(tmp_path, value):
    on, vendor, family, *_ = run_dw_probe(tmp_path, CCONV_DW_256=value)
    assert on == (vendor == "amd" and family == 25)


def test_cpu_family_is_an_int():
    fam = _kernels.cpu_family()
    assert isinstance(fam, int) and (fam >= 0 or _kernels.cpu_vendor() == "other")


# The dense Winograd's rule for 16 lanes on 256-bit units (CCONV_WINO_SMALL):
# the default method of float32 3x3 layers on both sides of its bounds
# (channels, tiles per image, tiles in the batch, dilation), and the default
# call's worst error against the float64 reference on random data of those
# layers, 1 and 2 threads, forward and grad_input.
WINO_PROBE = """
import numpy as np, cconv
from cconv import _kernels
from cconv._dispatch import simd_level
from reference import ref_conv, ref_conv_grad_input
rng = np.random.default_rng(int(__import__("sys").argv[1]))
layers = [((4, 32, 14, 14), 1, 1), ((1, 48, 28, 28), 1, 1), ((2, 32, 6, 14, 14), 1, 1),
          ((4, 256, 14, 14), 8, 1), ((2, 32, 14, 14), 1, 1), ((4, 16, 28, 28), 1, 1),
          ((4, 64, 7, 7), 1, 1), ((1, 64, 28, 28), 1, 2)]
chosen, worst = [], 0.0
for xs, g, d in layers:
    x = rng.standard_normal(xs).astype(np.float32)
    c = xs[1]
    w = rng.standard_normal((c, c // g) + (3,) * (len(xs) - 2)).astype(np.float32)
    f = cconv.conv2d if len(xs) == 4 else cconv.conv3d
    chosen.append(cconv.select_backend(x, w, None, 1, d, d, groups=g).value)
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64), None, 1, d, dilation=d, groups=g)
    gy = rng.standard_normal(ref.shape).astype(np.float32)
    rgi = ref_conv_grad_input(gy.astype(np.float64), w.astype(np.float64), xs, 1, d,
                              dilation=d, groups=g)
    for t in (1, 2):
        cconv.set_num_threads(t)
        y = f(x, w, None, 1, d, d, g)
        gi = cconv.convolution_backward(gy, x, w, None, 1, d, d, False, 0, g,
                                        (True, False, False))[0]
        worst = max(worst, np.abs(y - ref).max() / np.abs(ref).max(),
                    np.abs(gi - rgi).max() / np.abs(rgi).max())
print(_kernels.wino_small(), _kernels.cpu_vendor(), _kernels.cpu_family(), simd_level(), worst,
      " ".join(chosen))
"""


def run_wino_probe(seed=1, **env):
    on, vendor, family, isa, worst, *chosen = run_script(WINO_PROBE, "CCONV_WINO_SMALL",
                                                         str(seed), **env)
    return on == "True", vendor, int(family), isa, float(worst), chosen


@pytest.mark.parametrize("seed", [1, 2])
def test_wino_small_environment_decides_and_results_agree(seed):
    on1, _, _, isa, worst1, chosen1 = run_wino_probe(seed, CCONV_WINO_SMALL="1")
    on0, _, _, _, worst0, chosen0 = run_wino_probe(seed, CCONV_WINO_SMALL="0")
    assert on1 is True and on0 is False
    # either way within the suite's float32 bound for Winograd
    assert worst1 <= 3e-6 and worst0 <= 3e-6, (worst1, worst0)
    if isa == "avx512":
        # inside the bounds: Winograd with the rule, not without it
        assert chosen1[:4] == ["winograd_3x3"] * 4, chosen1
        assert "winograd_3x3" not in chosen0[:4], chosen0
    else:  # the rule is the 16-lane one: nothing changes
        assert chosen1 == chosen0
    # outside them (too few tiles in the batch or per image, 16 channels,
    # dilation 2 below the 512-bit rule's 196 tiles): the same choice
    assert chosen1[4:] == chosen0[4:]
    assert "winograd_3x3" not in chosen1[4:], chosen1


@pytest.mark.parametrize("value", ["", "2", "on"])
def test_wino_small_other_values_leave_the_default(value):
    on, vendor, family, *_ = run_wino_probe(CCONV_WINO_SMALL=value)
    assert on is True  # on every CPU (measured on AMD Zen 4 and Intel)


def test_show_config_names_the_winograd_rule(capsys):
    import cconv
    from cconv._dispatch import simd_level
    cconv.show_config()
    line = [ln for ln in capsys.readouterr().out.splitlines() if "SIMD" in ln][0]
    if simd_level() == "avx512":
        which = "small layers too" if _kernels.wino_small() else "large layers only"
        assert f"Winograd rule: {which}" in line
    else:
        assert "Winograd rule" not in line


# The AVX-512 micro-kernels' K blocks (CCONV_LONG_KC): 512 or 128 rows of
# the reduction per call of the implicit GEMM's and the own GEMM's
# micro-kernels.  The sums are cut differently, so the values may differ by
# float32 rounding, each within the suite's bound of the float64
# reference; the environment decides, other values leave the vendor rule.
KC_PROBE = """
import numpy as np, cconv
from cconv import _kernels
from cconv._dispatch import simd_level
from reference import ref_conv
rng = np.random.default_rng(3)
worst = 0.0
# a deep implicit-GEMM reduction (K = 1152, stride 2), a 1x1 layer on the
# own GEMM, a stem of K = 147
for xs, ws, s, p, be in [((2, 128, 20, 20), (64, 128, 3, 3), 2, 1, "implicit_gemm"),
                         ((1, 640, 14, 14), (96, 640, 1, 1), 1, 0, "gemm_1x1"),
                         ((1, 3, 40, 40), (24, 3, 7, 7), 2, 3, "implicit_gemm")]:
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64), None, s, p)
    for t in (1, 2):
        cconv.set_num_threads(t)
        y = cconv.conv2d(x, w, None, s, p, backend=be)
        worst = max(worst, np.abs(y - ref).max() / np.abs(ref).max())
print(_kernels.long_kc(), _kernels.uk_long_kc(), _kernels.cpu_vendor(), simd_level(), worst)
"""


def run_kc_probe(var="CCONV_LONG_KC", **env):
    e = dict(env)
    other = "CCONV_UK_LONG_KC" if var == "CCONV_LONG_KC" else "CCONV_LONG_KC"
    if other not in e and other in os.environ:
        e[other] = ""  # the other choice at its default
    on, uk_on, vendor, isa, worst = run_script(KC_PROBE, var, **e)
    return on == "True", uk_on == "True", vendor, isa, float(worst)


def test_long_kc_environment_decides_and_results_agree():
    on1, _, _, _, worst1 = run_kc_probe(CCONV_LONG_KC="1")
    on0, _, _, _, worst0 = run_kc_probe(CCONV_LONG_KC="0")
    assert on1 is True and on0 is False
    assert worst1 <= 3e-6 and worst0 <= 3e-6, (worst1, worst0)


def test_uk_long_kc_environment_decides_apart_and_results_agree():
    """The own GEMM's K blocks are a choice of their own: each variable
    moves its own and leaves the other at its default."""
    on, uk1, vendor, _, worst1 = run_kc_probe("CCONV_UK_LONG_KC", CCONV_UK_LONG_KC="1")
    on_b, uk0, _, _, worst0 = run_kc_probe("CCONV_UK_LONG_KC", CCONV_UK_LONG_KC="0")
    assert uk1 is True and uk0 is False
    assert on is True and on_b is True  # the implicit GEMM's default either way
    assert worst1 <= 3e-6 and worst0 <= 3e-6, (worst1, worst0)
    _, uk_d, _, _, _ = run_kc_probe(CCONV_LONG_KC="0")
    assert uk_d == (vendor != "intel")


@pytest.mark.parametrize("value", ["", "2"])
def test_long_kc_other_values_leave_the_default(value):
    on, uk_on, vendor, _, _ = run_kc_probe(CCONV_LONG_KC=value)
    assert on is True  # on every CPU (measured on AMD Zen 4 and Intel)


@pytest.mark.parametrize("value", ["", "on"])
def test_uk_long_kc_other_values_leave_the_vendor_rule(value):
    _, uk_on, vendor, _, _ = run_kc_probe("CCONV_UK_LONG_KC", CCONV_UK_LONG_KC=value)
    assert uk_on == (vendor != "intel")


def test_show_config_names_the_k_blocks(capsys):
    import cconv
    from cconv._dispatch import simd_level
    cconv.show_config()
    line = [ln for ln in capsys.readouterr().out.splitlines() if "SIMD" in ln][0]
    if simd_level() == "avx512":
        assert f"K blocks of {512 if _kernels.long_kc() else 128}" in line
    else:
        assert "K blocks" not in line
    if simd_level() == "avx512" and _kernels.uk_gemm_runs():
        where = "within" if _kernels.uk_spread_pf() else "between"
        assert f"its prefetch {where} the kernel calls" in line
    else:
        assert "its prefetch" not in line


SPREAD_PROBE = """
from cconv import _kernels
print(_kernels.uk_spread_pf(), _kernels.cpu_vendor())
"""


@pytest.mark.parametrize("value,want", [("1", True), ("0", False), ("", None), ("2", None),
                                        ("on", None)])
def test_uk_spread_pf_environment_decides_else_on(value, want):
    """CCONV_UK_SPREAD_PF=0 or 1 decides; other values, and none, leave the
    default: on, whatever the vendor (cpu.h).  Its bits are the same either
    way (tests/test_uk_gemm.py)."""
    on, vendor = run_script(SPREAD_PROBE, "CCONV_UK_SPREAD_PF", CCONV_UK_SPREAD_PF=value)
    assert vendor
    assert (on == "True") == (True if want is None else want)


STEM_PROBE = """
import sys, numpy as np, cconv
from cconv import _kernels
from reference import ref_conv, rel_err, tolerance
rng = np.random.default_rng(5)
worst = 0.0
# strided stems of 1-4 input channels, output rows of 32-112 columns
# (the rule's bound is 48), 1-D to 3-D, with and without bias, 1-2 threads
for xs, co, k, s, p in (((2, 3, 96, 96), 64, (7, 7), (2, 2), (3, 3)),
                        ((1, 4, 64, 130), 40, (3, 3), (2, 2), (1, 1)),
                        ((2, 3, 64, 64), 96, (4, 4), (4, 4), (0, 0)),
                        ((1, 3, 4, 40, 120), 48, (3, 5, 5), (1, 2, 2), (1, 2, 2)),
                        ((3, 2, 200), 64, (7,), (2,), (3,)),
                        ((1, 1, 70, 70), 100, (3, 3), (2, 2), (1, 1))):
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal((co, xs[1]) + k).astype(np.float32)
    b = rng.standard_normal(co).astype(np.float32) if co % 2 == 0 else None
    r = ref_conv(x.astype(np.float64), w.astype(np.float64),
                 None if b is None else b.astype(np.float64), s, p)
    for t in (1, 2):
        cconv.set_num_threads(t)
        y = cconv.convolution(x, w, b, s, p, 1, False, 0, 1, backend="implicit_gemm")
        worst = max(worst, rel_err(y, r) / tolerance(np.float32, xs[1] * int(np.prod(k))))
print(_kernels.ig_stem_direct(), _kernels.cpu_vendor(), worst)
"""


@pytest.mark.parametrize("value,want", [("1", True), ("0", False), ("", None), ("on", None)])
def test_ig_stem_direct_environment_decides_else_on(value, want):
    """CCONV_IG_STEM_DIRECT=0 or 1 decides whether the implicit GEMM's
    float32 AVX-512 kernels run strided stems in direct mode; other values,
    and none, leave the default: on, whatever the vendor (cpu.h).  Either
    way the stems give the float64 reference's values (every kernel set:
    the choice only acts on the 16-lane one)."""
    on, vendor, worst = run_script(STEM_PROBE, "CCONV_IG_STEM_DIRECT", CCONV_IG_STEM_DIRECT=value)
    assert vendor
    assert (on == "True") == (True if want is None else want)
    assert float(worst) <= 1.0, worst


WEIGHT_INPLACE_PROBE = """
import hashlib, sys, numpy as np, cconv
from cconv import _kernels
from isa_switch import forced_isa
from reference import ref_conv, rel_err, tolerance
rng = np.random.default_rng(11)
h = hashlib.sha256()
worst = 0.0
# packed-mode layers (more than 32 output channels a group) on small images,
# where each weight panel runs against 1-16 B micro-panels (the rule's
# bound), and some past it; 1-D to 3-D, groups, a partial last panel
# (output channels not a multiple of 8), bias or none, float32 and float64,
# 1-3 threads, every instruction set this CPU runs
for isa in ("scalar", "avx2", "avx512", "neon"):
    if isa not in _kernels.available_isas():
        continue
    with forced_isa(isa):
        for it in range(14):
            nsp = 1 + it % 3
            g = 1 + (it % 4 == 3)
            ci, co = int(rng.integers(3, 40)) * g, int(rng.integers(33, 90)) * g
            side = {1: (int(rng.integers(20, 700)),), 2: (int(rng.integers(3, 30)),) * 2,
                    3: (int(rng.integers(2, 7)),) * 3}[nsp]
            n = int(rng.integers(1, 4))
            if it >= 10:  # few enough positions for the 4-column scalar panels too
                side, n = {1: (int(rng.integers(5, 60)),), 2: (int(rng.integers(2, 8)),) * 2,
                           3: (int(rng.integers(2, 4)),) * 3}[nsp], 1
            k = (3,) * nsp
            dt = np.float32 if it % 5 else np.float64
            x = rng.standard_normal((n, ci) + side).astype(dt)
            w = rng.standard_normal((co, ci // g) + k).astype(dt)
            b = rng.standard_normal(co).astype(dt) if it % 2 else None
            r = ref_conv(x.astype(np.float64), w.astype(np.float64),
                         None if b is None else b.astype(np.float64), 1, 1, groups=g)
            for t in (1, 2, 3):
                cconv.set_num_threads(t)
                y = cconv.convolution(x, w, b, 1, 1, 1, False, 0, g, backend="implicit_gemm")
                worst = max(worst, rel_err(y, r) / tolerance(dt, ci // g * 3 ** nsp))
                h.update(y.tobytes())
        # the own GEMM (16-lane float32 kernels) on 1x1 layers of small
        # images and a strided 1x1 one through im2col: A's rows in place
        for xs, co, s, backend in (((1, 300, 14, 14), 130, 1, "gemm_1x1"),
                                   ((2, 200, 9, 11), 257, 1, "gemm_1x1"),
                                   ((1, 96, 28, 28), 200, 2, "gemm")):
            x = rng.standard_normal(xs).astype(np.float32)
            w = rng.standard_normal((co, xs[1], 1, 1)).astype(np.float32)
            b = rng.standard_normal(co).astype(np.float32)
            r = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), s, 0)
            for t in (1, 2):
                cconv.set_num_threads(t)
                y = cconv.conv2d(x, w, b, stride=s, backend=backend)
                worst = max(worst, rel_err(y, r) / tolerance(np.float32, xs[1]))
                h.update(y.tobytes())
print(_kernels.ig_weight_inplace(), h.hexdigest(), worst)
"""


def test_choice_queries_take_no_arguments():
    """The read-only queries of the CPU choices take no arguments: one is a
    TypeError that names the call, not a crash or a silent answer."""
    for query in (_kernels.ig_weight_inplace, _kernels.ig_stem_direct, _kernels.patch_pack,
                  _kernels.ig_kw_band):
        assert isinstance(query(), bool)
        with pytest.raises(TypeError, match=query.__name__):
            query(1)


def test_ig_weight_inplace_environment_decides_and_keeps_the_bits():
    """CCONV_IG_WEIGHT_INPLACE=0 or 1 decides whether the implicit GEMM's
    packed mode may read a float32 weight's rows where they lie (small
    images: each packed panel would run a few times); other values, and
    none, leave the default (on, every CPU); the own GEMM takes A's rows
    in place by the same switch (1x1 layers of small images).  Either way
    every result is the float64 reference's values, on every instruction
    set, and the default is the same bits as "1"; "0" may differ in the
    last bits where a tile's last micro-panel holds a few positions (in
    place, those columns are dot products along k: igemm.h, ukrt)."""
    on1, d1, w1 = run_script(WEIGHT_INPLACE_PROBE, "CCONV_IG_WEIGHT_INPLACE",
                             CCONV_IG_WEIGHT_INPLACE="1")
    on0, d0, w0 = run_script(WEIGHT_INPLACE_PROBE, "CCONV_IG_WEIGHT_INPLACE",
                             CCONV_IG_WEIGHT_INPLACE="0")
    ond, dd, _ = run_script(WEIGHT_INPLACE_PROBE, "CCONV_IG_WEIGHT_INPLACE")
    onx, dx, _ = run_script(WEIGHT_INPLACE_PROBE, "CCONV_IG_WEIGHT_INPLACE",
                            CCONV_IG_WEIGHT_INPLACE="yes")
    assert (on1, on0, ond, onx) == ("True", "False", "True", "True")
    assert d1 == dd == dx
    assert float(w1) <= 1.0 and float(w0) <= 1.0, (w1, w0)


# The opening of the probes below that count the problems a switch takes:
# the imports, the generator seeded from the command line, the hash of the
# results, and the counters they print.
COUNTING_PROBE_HEAD = """
import hashlib, sys, numpy as np, cconv
from cconv import _kernels, _depthwise
from cconv._params import make_params
from isa_switch import forced_isa
from reference import ref_conv, rel_err, tolerance
rng = np.random.default_rng(int(sys.argv[1]))
h = hashlib.sha256()
count = ran = 0
excess = 0.0
"""


# Dilated 3x3 depthwise planes (dilation 2 and 4, stride 1) through the plane
# backend: random heights, widths (many whose rows fill their last vector
# badly, where the super-rows run), paddings, multipliers, batches and
# biases, float32 and float64, 1 to 3 threads (row blocks), every
# instruction set this CPU runs.  Printed: the choice, how many problems
# the super-rows took (per the C predicate), the worst error against the
# float64 reference over the suite's tolerance, and a hash of the results.
FLAT_PROBE = COUNTING_PROBE_HEAD + """
for case in range(24):
    d = int(rng.choice([2, 4])); n = int(rng.integers(1, 4)); c = int(rng.integers(1, 12))
    m = int(rng.integers(1, 4))
    # mostly 'same' padding: output rows as wide as the input's, the widths
    # below one past a multiple of 8 or 16 (rows that fill their last
    # vector badly)
    pad = d if rng.random() < 0.75 else int(rng.integers(0, 2 * d + 2))
    hh = int(rng.integers(max(1, 2 * d + 1 - 2 * pad), 48))
    ww = int(rng.choice([1, 3, 9, 17, 18, 25, 33, 34, 35, 41, 49, 65, 66, 97]))
    ww = max(ww, 2 * d + 1 - 2 * pad)
    if case < 2:  # DeepLab-like rows of 33 (16-lane vectors: 3 a row, 5 a pair of rows)
        d, pad, ww, hh = 2, 2, 33, 13 + 20 * case
    bias = bool(rng.integers(0, 2))
    for dt in ("float32", "float64"):
        x = rng.standard_normal((n, c, hh, ww)).astype(dt)
        w = rng.standard_normal((c * m, 1, 3, 3)).astype(dt)
        b = rng.standard_normal(c * m).astype(dt) if bias else None
        geom = make_params(x.shape, w.shape, None, 1, pad, d, False, 0, c, "t", dt).geom()
        ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                       None if b is None else b.astype(np.float64), 1, pad, dilation=d, groups=c)
        for isa in _kernels.available_isas():
            with forced_isa(isa):
                count += _depthwise.fwd_flat(geom, x.itemsize)
                for t in (1, 2, 3):
                    cconv.set_num_threads(t)
                    y = cconv.conv2d(x, w, b, padding=pad, dilation=d, groups=c,
                                     backend="depthwise_plane")
                    h.update(isa.encode()); h.update(y.tobytes())
                    excess = max(excess, rel_err(y, ref) / tolerance(dt, 9))
                    ran += 1
cconv.set_num_threads(1)
print(_kernels.dw_flat(), count, ran, excess, h.hexdigest())
"""


def run_counting_probe(script, var, seed, **env):
    """A probe that prints its switch, how many problems the switch's C
    predicate says it takes, how many ran, the worst error over the
    tolerance and a hash of the results: those, typed."""
    on, count, ran, excess, digest = run_script(script, var, str(seed), **env)
    return on == "True", int(count), int(ran), float(excess), digest


def run_flat_probe(seed, **env):
    return run_counting_probe(FLAT_PROBE, "CCONV_DW_FLAT", seed, **env)


def check_switch_keeps_the_bits(run, var, seed, isa, least, problems):
    """The switch var on and off in two processes of the counting probe
    ``run``: the switch reads as set, the C predicate counts nothing when
    off and at least ``least`` problems when on (where the CPU runs
    ``isa``), ``problems`` ran, both within the suite's tolerances of the
    float64 reference, and the same multiply-adds in the same order on the
    same values: the same bits."""
    on1, n1, ran, ex1, d1 = run(seed, **{var: "1"})
    on0, n0, _, ex0, d0 = run(seed, **{var: "0"})
    assert on1 is True and on0 is False
    assert n0 == 0
    if isa in _kernels.available_isas():
        assert n1 >= least, n1
    assert ran >= problems
    assert ex1 <= 1.0 and ex0 <= 1.0, (ex1, ex0)
    assert d1 == d0


@pytest.mark.parametrize("seed", [5, 6])
def test_dw_flat_environment_decides_and_results_agree(seed):
    # (16-lane vectors: 33-wide rows at least; the super-rows ran)
    check_switch_keeps_the_bits(run_flat_probe, "CCONV_DW_FLAT", seed, "avx512", 2, 24 * 2 * 3)


@pytest.mark.parametrize("value", ["", "2", "off"])
def test_dw_flat_other_values_leave_the_default(value):
    on, *_ = run_flat_probe(7, CCONV_DW_FLAT=value)
    assert on is True


# The depthwise 3x3 stride-1 planes read where they lie (plane_direct,
# CCONV_DW_DIRECT) against the row buffers: random 2-D and 3-D problems
# whose rows are narrower and wider than a vector, paddings 0 to 2 and some
# wider than two vectors (those take the row buffers either way),
# multipliers, bias, forward and grad_input, every instruction set, 1-3
# threads, float32 and float64.  Printed: the choice, how many problems the
# C predicate says run in place, the worst error against the float64
# reference over the suite's tolerance, and a hash of the results.
DIRECT_PROBE = COUNTING_PROBE_HEAD + """
for case in range(20):
    three = case % 4 == 3
    n = int(rng.integers(1, 3)); c = int(rng.integers(1, 6)); m = int(rng.integers(1, 3))
    pad = int(rng.integers(0, 3)) if case % 5 else int(rng.choice([3, 9, 18, 40]))
    hh = int(rng.integers(max(1, 3 - 2 * pad), 21))
    ww = int(rng.choice([1, 2, 5, 7, 8, 9, 15, 16, 17, 23, 24, 31, 33, 40, 47, 56, 65]))
    ww = max(ww, 3 - 2 * pad)
    bias = bool(rng.integers(0, 2))
    for dt in ("float32", "float64"):
        dd = int(rng.integers(1, 5)) if three else 0
        xs = (n, c, dd, hh, ww) if three else (n, c, hh, ww)
        ws = (c * m, 1, 3, 3, 3) if three else (c * m, 1, 3, 3)
        x = rng.standard_normal(xs).astype(dt)
        w = rng.standard_normal(ws).astype(dt)
        b = rng.standard_normal(c * m).astype(dt) if bias else None
        p = (1, pad, pad) if three else pad
        geom = make_params(x.shape, w.shape, None, 1, p, 1, False, 0, c, "t", dt).geom()
        ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                       None if b is None else b.astype(np.float64), 1, p, groups=c)
        gy = rng.standard_normal(ref.shape).astype(dt)
        conv = cconv.conv3d if three else cconv.conv2d
        for isa in _kernels.available_isas():
            with forced_isa(isa):
                count += _depthwise.fwd_direct(geom, x.itemsize)
                for t in (1, 2, 3):
                    cconv.set_num_threads(t)
                    y = conv(x, w, b, padding=p, groups=c, backend="depthwise_plane")
                    gx = cconv.convolution_backward(gy, x, w, None, 1, p, 1, False, 0, c,
                                                    [True, False, False],
                                                    backend="depthwise")[0]
                    h.update(isa.encode()); h.update(y.tobytes()); h.update(gx.tobytes())
                    excess = max(excess, rel_err(y, ref) / tolerance(dt, 27 if three else 9))
                    ran += 1
cconv.set_num_threads(1)
print(_kernels.dw_direct(), count, ran, excess, h.hexdigest())
"""


def run_direct_probe(seed, **env):
    return run_counting_probe(DIRECT_PROBE, "CCONV_DW_DIRECT", seed, **env)


@pytest.mark.parametrize("seed", [3, 4])
def test_dw_direct_environment_decides_and_results_agree(seed):
    # (the 256-bit kernel sets read in place)
    check_switch_keeps_the_bits(run_direct_probe, "CCONV_DW_DIRECT", seed, "avx2", 20, 20 * 2 * 3)


@pytest.mark.parametrize("value", ["", "2", "off"])
def test_dw_direct_other_values_leave_the_default(value):
    on, *_ = run_direct_probe(8, CCONV_DW_DIRECT=value)
    assert on is True


# The implicit GEMM's direct mode writing its output in place (one K
# block): random 1-D, 2-D and 3-D problems of few output channels a group
# (the direct mode; 1-4 a group: the half-row kernel), strides, dilations,
# paddings (the zero columns rows share), tile shapes from single rows to
# many whole rows, with and without bias, float32 and float64, 1 to 3
# threads, every instruction set this CPU runs, through the implicit GEMM.
# Printed: the choice, how many problems ran in place (per the C plan),
# the worst error against the float64 reference over the suite's
# tolerance, and a hash of the results.
INPLACE_PROBE = """
import hashlib, sys, numpy as np, cconv
from cconv import _kernels
from cconv._params import make_params
from isa_switch import forced_isa
from reference import ref_conv, rel_err, tolerance
rng = np.random.default_rng(int(sys.argv[1]))
h = hashlib.sha256()
inplace = ran = 0
excess = 0.0
fns = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}
for case in range(18):
    nsp = int(rng.choice([1, 1, 2, 2, 2, 3]))
    groups = int(rng.choice([1, 1, 2, 3]))
    cig = int(rng.integers(1, 5))
    cog = int(rng.choice([1, 2, 3, 4, 5, 8, 9, 16, 24]))
    k = tuple(int(rng.choice([1, 2, 3, 5])) for _ in range(nsp))
    if nsp == 3:
        k = (1,) + k[1:]
    s = tuple(int(rng.choice([1, 1, 2])) for _ in range(nsp))
    d = tuple(int(rng.choice([1, 1, 2])) for _ in range(nsp))
    pad = tuple(int(rng.integers(0, 3)) for _ in range(nsp))
    size = [int(rng.integers(1, 12)) for _ in range(nsp)]
    size[-1] = int(rng.choice([5, 14, 17, 30, 33, 56, 57, 70, 120, 300]))
    size = tuple(max(v, (kk - 1) * dd + 1 - 2 * pp) for v, kk, dd, pp in zip(size, k, d, pad))
    n = int(rng.integers(1, 3))
    bias = bool(rng.integers(0, 2))
    for dt in ("float32", "float64"):
        x = rng.standard_normal((n, cig * groups) + size).astype(dt)
        w = rng.standard_normal((cog * groups, cig) + k).astype(dt)
        b = rng.standard_normal(cog * groups).astype(dt) if bias else None
        geom = make_params(x.shape, w.shape, None, s, pad, d, False, 0, groups, "t", dt).geom()
        ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                       None if b is None else b.astype(np.float64), s, pad, dilation=d,
                       groups=groups)
        for isa in _kernels.available_isas():
            with forced_isa(isa):
                inplace += _kernels.igemm_inplace(geom, x.itemsize)
                for t in (1, 2, 3):
                    cconv.set_num_threads(t)
                    y = fns[nsp](x, w, b, stride=s, padding=pad, dilation=d, groups=groups,
                                 backend="implicit_gemm")
                    h.update(isa.encode()); h.update(y.tobytes())
                    excess = max(excess, rel_err(y, ref) / tolerance(dt, cig * int(np.prod(k))))
                    ran += 1
cconv.set_num_threads(1)
print(_kernels.ig_inplace(), inplace, ran, excess, h.hexdigest())
"""


def run_inplace_probe(seed, **env):
    where, inplace, ran, excess, digest = run_script(INPLACE_PROBE, "CCONV_IG_INPLACE", str(seed),
                                                     **env)
    return where, int(inplace), int(ran), float(excess), digest


@pytest.mark.parametrize("seed", [11, 12])
def test_ig_inplace_environment_decides_and_results_agree(seed):
    w1, n1, ran, ex1, d1 = run_inplace_probe(seed, CCONV_IG_INPLACE="1", CCONV_GRAIN_SCALE="0")
    w0, n0, _, ex0, d0 = run_inplace_probe(seed, CCONV_IG_INPLACE="0", CCONV_GRAIN_SCALE="0")
    assert (w1, w0) == ("all", "off")
    assert n0 == 0
    assert n1 >= 10, n1  # the in-place stores ran, on every instruction set
    assert ran >= 18 * 2 * 3
    # both within the suite's tolerances of the float64 reference, and the
    # same multiply-adds in the same order: the same bits
    assert ex1 <= 1.0 and ex0 <= 1.0, (ex1, ex0)
    assert d1 == d0


@pytest.mark.parametrize("value", ["", "2", "on"])
def test_ig_inplace_other_values_leave_the_default(value):
    where, n, _, ex, _ = run_inplace_probe(13, CCONV_IG_INPLACE=value)
    assert where == "wide"
    assert ex <= 1.0
    # the default: on the kernel sets of 64-byte vectors only
    wide = [i for i in _kernels.available_isas() if i == "avx512"]
    assert (n > 0) == bool(wide), (n, wide)


def test_igemm_inplace_bad_arguments():
    with pytest.raises(ValueError, match="geom"):
        _kernels.igemm_inplace((1, 2), 4)
    with pytest.raises(TypeError, match="geom"):
        _kernels.igemm_inplace("x", 4)
    from cconv._params import make_params
    geom = make_params((1, 3, 8, 8), (4, 3, 3, 3), None, 1, 1, 1, False, 0, 1, "t",
                       "float32").geom()
    assert _kernels.igemm_inplace(geom, 3) is False  # no kernels for 3-byte elements
    assert _kernels.ig_inplace() in ("off", "all", "wide")


# The depthwise adjoint of stride 2 and K x K taps plane by plane (adj2p,
# CCONV_DW_A2P) against row by row: random 2-D and 3-D problems, K = 2 to 5,
# paddings 0 to K (some past the kernel), output paddings, odd and even
# widths and heights from 1 row up (some over 56 output rows: several
# calls of the plane form a plane), multipliers, bias; the transposed
# convolution's forward and the convolution's grad_input; every instruction
# set, 1-3 threads, float32 and float64.  The two add the same products in
# different orders, so the values are compared with the float64 reference
# (the suite's tolerance), not with each other.  Printed: the choice, how
# many problems the C predicate says run by planes, how many ran, the worst
# error over the tolerance, and a hash of the results.
A2P_PROBE = COUNTING_PROBE_HEAD + """
from reference import ref_conv_transpose, ref_conv_grad_input
for case in range(16):
    three = case % 4 == 3
    k = int(rng.integers(2, 6)); n = int(rng.integers(1, 3)); c = int(rng.integers(1, 5))
    m = int(rng.integers(1, 3))
    pad = int(rng.integers(0, k)) if case % 5 else k
    opad = int(rng.integers(0, 2))
    # (some tall: outputs of more rows than one call of the plane form runs)
    hh = int(rng.integers(1, 14)) if case % 3 else int(rng.integers(28, 64))
    ww = int(rng.choice([1, 2, 3, 7, 8, 9, 16, 17, 28, 33, 40]))
    bias = bool(rng.integers(0, 2))
    nd = 3 if three else 2
    dd = int(rng.integers(1, 4)) if three else 0
    sp = (dd, hh, ww) if three else (hh, ww)
    kk = (3, k, k) if three else (k, k)
    st = (1, 2, 2) if three else 2
    pp = (1, pad, pad) if three else pad
    op = (0, opad, opad) if three else opad
    for dt in ("float32", "float64"):
        # the transposed convolution: c * m input channels in c * m groups
        x = rng.standard_normal((n, c * m) + sp).astype(dt)
        w = rng.standard_normal((c * m, 1) + kk).astype(dt)
        b = rng.standard_normal(c * m).astype(dt) if bias else None
        try:
            ref = ref_conv_transpose(x.astype(np.float64), w.astype(np.float64),
                                     None if b is None else b.astype(np.float64), st, pp, op,
                                     groups=c * m)
        except ValueError:
            continue
        if min(ref.shape[2:]) < 1:
            continue
        gt = make_params(x.shape, w.shape, None, st, pp, 1, True, op, c * m, "t", dt).geom()
        # the convolution's grad_input: c input channels, multiplier m
        xs = (n, c) + tuple(ref.shape[2:])
        gy = rng.standard_normal((n, c * m) + sp).astype(dt)
        gc = make_params(xs, w.shape, None, st, pp, 1, False, 0, c, "t", dt).geom()
        try:
            gref = ref_conv_grad_input(gy.astype(np.float64), w.astype(np.float64), xs, st, pp,
                                       groups=c)
        except ValueError:
            continue
        tconv = cconv.conv_transpose3d if three else cconv.conv_transpose2d
        for isa in _kernels.available_isas():
            with forced_isa(isa):
                count += _depthwise.adj_planes(gt) + _depthwise.adj_planes(gc)
                for t in (1, 2, 3):
                    cconv.set_num_threads(t)
                    y = tconv(x, w, b, stride=st, padding=pp, output_padding=op, groups=c * m)
                    gx = cconv.convolution_backward(gy, np.zeros(xs, dt), w, None, st, pp, 1,
                                                    False, 0, c, [True, False, False],
                                                    backend="depthwise")[0]
                    h.update(isa.encode()); h.update(y.tobytes()); h.update(gx.tobytes())
                    red = int(np.prod(kk))
                    excess = max(excess, rel_err(y, ref) / tolerance(dt, red),
                                 rel_err(gx, gref) / tolerance(dt, m * red))
                    ran += 1
cconv.set_num_threads(1)
print(_kernels.dw_a2p(), count, ran, excess, h.hexdigest())
"""


def run_a2p_probe(seed, **env):
    return run_counting_probe(A2P_PROBE, "CCONV_DW_A2P", seed, **env)


@pytest.mark.parametrize("seed", [21, 22])
def test_dw_a2p_environment_decides_and_results_agree(seed):
    on1, n1, ran, ex1, _ = run_a2p_probe(seed, CCONV_DW_A2P="1")
    on0, n0, ran0, ex0, _ = run_a2p_probe(seed, CCONV_DW_A2P="0")
    assert on1 is True and on0 is False
    assert n0 == 0
    assert n1 >= 20, n1  # the plane form ran, on every instruction set
    assert ran == ran0 and ran >= 10 * 3, ran
    # both within the suite's tolerances of the float64 reference
    assert ex1 <= 1.0 and ex0 <= 1.0, (ex1, ex0)


@pytest.mark.parametrize("value", ["", "2", "off"])
def test_dw_a2p_other_values_leave_the_default(value):
    on, n, _, ex, _ = run_a2p_probe(23, CCONV_DW_A2P=value)
    assert on is True and n > 0
    assert ex <= 1.0


def test_adj_planes_bad_arguments():
    from cconv import _depthwise
    assert _depthwise.adj_planes((1, 2)) is False  # not a geometry: no
    assert _depthwise.adj_planes(()) is False
    with pytest.raises(TypeError, match="geom"):
        _depthwise.adj_planes("x")
    assert _kernels.dw_a2p() in (True, False)


PATCH_PACK_PROBE = """
import hashlib, numpy as np, cconv
from cconv import _kernels
from isa_switch import forced_isa
from reference import ref_conv, rel_err, tolerance
rng = np.random.default_rng(13)
h = hashlib.sha256()
worst = 0.0
# non-overlapping patches whose products the own GEMM packs (more than 96
# output channels): 16x16, 5x5 (a K block edge inside a line's taps), 1-D
# 8 taps, 2 groups of 12 taps, a 3-D layer of one depth tap; bias on some
for xs, co, k, g in (((3, 3, 224, 224), 130, (16, 16), 1),
                     ((4, 24, 120, 124), 100, (5, 5), 1),
                     ((6, 64, 415), 130, (8,), 1),
                     ((4, 16, 30, 130), 260, (1, 12), 2),
                     ((3, 4, 2, 40, 120), 150, (1, 2, 6), 1)):
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal((co, xs[1] // g) + k).astype(np.float32)
    b = rng.standard_normal(co).astype(np.float32) if co % 2 == 0 else None
    r = ref_conv(x.astype(np.float64), w.astype(np.float64),
                 None if b is None else b.astype(np.float64), k, 0, groups=g)
    for name in _kernels.available_isas():
        with forced_isa(name):
            for t in (1, 2):
                cconv.set_num_threads(t)
                y = cconv.convolution(x, w, b, k, 0, 1, False, 0, g, backend="gemm")
                red = xs[1] // g * int(np.prod(k))
                worst = max(worst, rel_err(y, r) / tolerance(np.float32, red))
                h.update(y.tobytes())
print(_kernels.patch_pack(), h.hexdigest(), worst)
"""


def test_patch_pack_environment_decides_and_keeps_the_bits():
    """CCONV_PATCH_PACK=0 or 1 decides whether the GEMM convolutions pack
    the own GEMM's B micro-panels of non-overlapping patches straight from
    the input; other values, and none, leave the default (on, every CPU).
    The products and their order are the same either way: the same bits,
    on every instruction set (where the own GEMM declines, both run
    im2col), and the float64 reference's values."""
    on1, d1, w1 = run_script(PATCH_PACK_PROBE, "CCONV_PATCH_PACK", CCONV_PATCH_PACK="1")
    on0, d0, w0 = run_script(PATCH_PACK_PROBE, "CCONV_PATCH_PACK", CCONV_PATCH_PACK="0")
    ond, dd, _ = run_script(PATCH_PACK_PROBE, "CCONV_PATCH_PACK")
    onx, dx, _ = run_script(PATCH_PACK_PROBE, "CCONV_PATCH_PACK", CCONV_PATCH_PACK="on")
    assert (on1, on0, ond, onx) == ("True", "False", "True", "True")
    assert d1 == d0 == dd == dx
    assert float(w1) <= 1.0 and float(w0) <= 1.0, (w1, w0)


KW_BAND_PROBE = """
import hashlib, numpy as np, cconv
from cconv import _kernels
from cconv._params import make_params
from isa_switch import forced_isa
from reference import ref_conv, rel_err, tolerance
from test_igemm import KWB_CASES, run_igemm
rng = np.random.default_rng(17)
h = hashlib.sha256()
worst = 0.0
ws = []
# the stems of test_igemm.KWB_CASES (the tap-column band where on), then
# ResNet-50's and MobileNet's stems, whose few dropped columns keep the
# phase band: their workspace, and so their plan, the same either way
others = [((1, 3, 224, 224), (64, 3, 7, 7), 2, 3, 1), ((1, 3, 64, 224), (32, 3, 3, 3), 2, 1, 1)]
for xs, wsh, s, pad, d in KWB_CASES + others:
    nsp = len(xs) - 2
    tup = lambda v: (v,) * nsp if isinstance(v, int) else v
    s, pad, d = tup(s), tup(pad), tup(d)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(wsh).astype(np.float32)
    b = rng.standard_normal(wsh[0]).astype(np.float32)
    g = make_params(xs, wsh, None, s, pad, d, False, 0, 1, "t").geom()
    ws.append(str(_kernels.igemm_workspace_bytes(g, 1, 4)))
    r = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                 stride=s, pad_before=pad, dilation=d)
    for name in _kernels.available_isas():
        with forced_isa(name):
            for t in (1, 2):
                y = run_igemm(x, w, b, s, pad, d, 1, t)
                worst = max(worst, rel_err(y, r) / tolerance(np.float32, xs[1] * int(np.prod(wsh[2:]))))
                h.update(y.tobytes())
print(_kernels.ig_kw_band(), h.hexdigest(), worst, ",".join(ws))
"""


def test_kw_band_environment_decides_and_keeps_the_bits():
    """CCONV_IG_KW_BAND=0 or 1 decides whether the implicit GEMM's direct
    mode may run a stem's tiles over a band of one block per column tap;
    other values, and none, leave the default (on, every CPU).  The
    products and their order are the same either way: the same bits, on
    every instruction set, and the float64 reference's values.  Where the
    CPU has the 64-byte float32 kernels, the stems that drop more than 6% of
    their columns take the band (their plan, and so their workspace,
    changes) and ResNet-50's and MobileNet's stems do not."""
    on1, d1, w1, ws1 = run_script(KW_BAND_PROBE, "CCONV_IG_KW_BAND", CCONV_IG_KW_BAND="1")
    on0, d0, w0, ws0 = run_script(KW_BAND_PROBE, "CCONV_IG_KW_BAND", CCONV_IG_KW_BAND="0")
    ond, dd, _, wsd = run_script(KW_BAND_PROBE, "CCONV_IG_KW_BAND")
    onx, dx, _, _ = run_script(KW_BAND_PROBE, "CCONV_IG_KW_BAND", CCONV_IG_KW_BAND="yes")
    assert (on1, on0, ond, onx) == ("True", "False", "True", "True")
    assert d1 == d0 == dd == dx
    assert float(w1) <= 1.0 and float(w0) <= 1.0, (w1, w0)
    assert ws1 == wsd
    if "avx512" in _kernels.available_isas():
        a, b = ws1.split(","), ws0.split(",")
        assert all(x != y for x, y in zip(a[:-2], b[:-2])), (a, b)
        assert a[-2:] == b[-2:], (a, b)
