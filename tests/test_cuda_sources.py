"""The CUDA kernel sources (cconv/cuda), checked without a GPU.

1. nvcc compiles every .cu file, and the concatenation that CuPy hands to
   NVRTC, to PTX for several architectures, with every kernel that
   ``cconv.cuda.kernels`` launches present as an entry point (skipped only
   when nvcc is absent).
2. The sources include nothing but their own header (NVRTC has no system
   headers).
3. The C++ harness tests/c/cuda_harness.cpp runs the same kernels on the CPU
   (the grid looped sequentially); each kernel is compared with a float64
   NumPy computation written here from the definitions, on random shapes and
   parameters (1-D, 2-D and 3-D problems as 3-D, strides, padding,
   dilation, groups), at 1e-12 (float64) and 1e-5 (float32) relative error,
   and launched with different grids to check the results do not depend on
   the launch.
"""
from __future__ import annotations

import importlib.util
import itertools
import math
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from cconv.cuda import kernels as _cuda_kernels
from cconv._params import make_params
from reference import rel_err, ref_conv, ref_conv_grad_input, ref_conv_grad_weight

_spec = importlib.util.spec_from_file_location(
    "cuda_harness", os.path.join(os.path.dirname(os.path.abspath(__file__)), "c", "cuda_harness.py"))
cuda_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cuda_harness)

ARCHS = ["sm_80", "sm_90"]
TOL = {np.float32: 1e-5, np.float64: 1e-12}


def _nvcc() -> str | None:
    for cand in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if cand and os.path.exists(cand):
            return cand
    return None


NVCC = _nvcc()
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH, /usr/local/cuda/bin)")


def _cu_files():
    d = _cuda_kernels.source_dir()
    return sorted(f for f in os.listdir(d) if f.endswith(".cu"))


def _all_kernel_names():
    return [f"{b}_{s}" for b in _cuda_kernels.KERNEL_BASENAMES for s in ("f32", "f64")]


# --------------------------------------------------------------------------
# 1-2. the sources as CUDA
# --------------------------------------------------------------------------
def test_source_files_are_installed():
    d = _cuda_kernels.source_dir()
    for f in _cuda_kernels.SOURCE_FILES:
        assert os.path.isfile(os.path.join(d, f)), f
    # every .cu in the folder is part of the module CuPy compiles
    assert set(_cu_files()) == {f for f in _cuda_kernels.SOURCE_FILES if f.endswith(".cu")}


def test_sources_include_only_their_header():
    for path in _cuda_kernels.source_paths():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        incs = re.findall(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', text, flags=re.M)
        assert set(incs) <= {"cc_common.cuh"}, f"{os.path.basename(path)} includes {incs}"
        # and the kernels avoid what the CPU harness cannot run in order
        code = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))
        for word in ("__shared__", "__syncthreads", "atomic", "__shfl", "__ballot"):
            assert word not in code, f"{os.path.basename(path)} uses {word}"


def test_module_source_defines_every_kernel():
    src = _cuda_kernels.module_source()
    assert src.index("#define CC_COMMON_CUH") < src.index("cc_im2col_body")
    for base in _cuda_kernels.KERNEL_BASENAMES:
        name = base[len("cc_"):]
        assert re.search(rf'__global__ void cc_{name}_##SFX\(', src), base


def _ptx(tmp_path, src_path, arch, extra=()):
    out = tmp_path / (os.path.basename(src_path) + f".{arch}.ptx")
    cmd = [NVCC, "--ptx", f"-arch={arch}", "-Werror", "all-warnings", "-I", _cuda_kernels.source_dir(),
           *extra, str(src_path), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}"
    return out.read_text()


def _entries(ptx: str) -> set[str]:
    return set(re.findall(r"\.entry\s+([A-Za-z_][A-Za-z0-9_]*)", ptx))


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("cu", _cu_files())
def test_nvcc_compiles_each_file(tmp_path, cu, arch):
    ptx = _ptx(tmp_path, os.path.join(_cuda_kernels.source_dir(), cu), arch)
    entries = _entries(ptx)
    assert entries, f"{cu}: no kernels in the PTX"
    # extern "C": the names CuPy looks up, unmangled
    assert all(e.startswith("cc_") for e in entries), entries


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
def test_nvcc_compiles_the_nvrtc_module(tmp_path, arch):
    """The concatenated text CuPy compiles, in a folder without the header
    (as NVRTC sees it: the #include lines must be skipped by the guard)."""
    src = tmp_path / "cconv_module.cu"
    src.write_text(_cuda_kernels.module_source())
    out = tmp_path / "m.ptx"
    cmd = [NVCC, "--ptx", f"-arch={arch}", "-Werror", "all-warnings", str(src), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}"
    assert _entries(out.read_text()) == set(_all_kernel_names())


@needs_nvcc
def test_nvcc_object_code(tmp_path):
    """Full compilation to a cubin-bearing object (ptxas runs: register and
    parameter limits are checked too)."""
    src = tmp_path / "cconv_module.cu"
    src.write_text(_cuda_kernels.module_source())
    cmd = [NVCC, "-c", "-arch=sm_90", str(src), "-o", str(tmp_path / "m.o")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stdout}\n{r.stderr}"


# NVRTC itself, as CuPy calls it, when its library is at hand (the
# nvidia-cuda-nvrtc wheel, a CUDA toolkit, or CCONV_NVRTC_LIB): no GPU needed.
def _find_nvrtc() -> str | None:
    import ctypes.util
    import glob

    cands = [os.environ.get("CCONV_NVRTC_LIB")]
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        cands += sorted(glob.glob(os.path.join(root, "*", "lib", "libnvrtc.so*")), reverse=True)
    cands += sorted(glob.glob("/usr/local/cuda*/lib*/libnvrtc.so*"), reverse=True)
    cands.append(ctypes.util.find_library("nvrtc"))
    for c in cands:
        if c and "builtins" not in os.path.basename(c) and (os.path.exists(c) or "/" not in c):
            return c
    return None


def _nvrtc_compile(lib_path, src: str, options: list[str]) -> tuple[int, str, str]:
    """(result, log, ptx or '') of NVRTC on ``src`` with ``options``."""
    import ctypes

    lib = ctypes.CDLL(lib_path)
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"cconv_module.cu", 0, None, None)
    assert rc == 0, f"nvrtcCreateProgram: {rc}"
    try:
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        res = lib.nvrtcCompileProgram(prog, len(options), opts)
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode(errors="replace")
        ptx = ""
        if res == 0 and not any(o.startswith("-arch=sm_") for o in options):
            lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
            pbuf = ctypes.create_string_buffer(n.value)
            lib.nvrtcGetPTX(prog, pbuf)
            ptx = pbuf.value.decode(errors="replace")
        return res, log, ptx
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


NVRTC = _find_nvrtc()


@pytest.mark.skipif(NVRTC is None, reason="libnvrtc not found (pip install nvidia-cuda-nvrtc, or set CCONV_NVRTC_LIB)")
@pytest.mark.parametrize("options", [
    ["-arch=compute_80"],
    ["-arch=compute_90", "-std=c++11"],
    ["-arch=compute_90", "-std=c++17"],
    ["-arch=sm_90"],
], ids=lambda o: " ".join(o))
def test_nvrtc_compiles_the_module(options):
    res, log, ptx = _nvrtc_compile(NVRTC, _cuda_kernels.module_source(), options)
    assert res == 0, f"NVRTC {options}: result {res}\n{log}"
    assert "warning" not in log.lower(), log
    if ptx:
        assert _entries(ptx) == set(_all_kernel_names())


# --------------------------------------------------------------------------
# 3. the kernels on the CPU
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    if cuda_harness.compiler() is None:
        pytest.skip("no C++ compiler to build the CUDA harness")
    return cuda_harness.Harness(cuda_harness.build(str(tmp_path_factory.mktemp("cuda_harness"))))


def test_harness_exports_every_kernel(harness):
    for name in _all_kernel_names():
        assert harness.address(name), name


def _random_problem(rng, nsp=None, depthwise=False):
    """A random plain convolution: (ConvParams, nsp, kwargs for reference)."""
    nsp = nsp or int(rng.integers(1, 4))
    groups = int(rng.integers(2, 4)) if depthwise else int(rng.choice([1, 1, 2, 3]))
    cig = 1 if depthwise else int(rng.integers(1, 4))
    cog = int(rng.integers(1, 3)) if depthwise else int(rng.integers(1, 4))
    c_in, c_out = groups * cig, groups * cog
    k = tuple(int(rng.integers(1, 4)) for _ in range(nsp))
    s = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
    d = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
    pad = tuple(int(rng.integers(0, 3)) for _ in range(nsp))
    size = tuple(max(1, dd * (kk - 1) + 1 - 2 * pp) + int(rng.integers(0, 6 - nsp))
                 for kk, dd, pp in zip(k, d, pad))
    batch = int(rng.integers(1, 4))
    p = make_params((batch, c_in) + size, (c_out, cig) + k, None, s, pad, d, False, 0, groups, "test", np.float64)
    return p, dict(stride=s, pad_before=pad, dilation=d, groups=groups)


def _geom_arrays(p, dtype, rng):
    x = rng.standard_normal(p.input_shape).astype(dtype)
    w = rng.standard_normal(p.weight_shape).astype(dtype)
    return x, w


def _unflat3(p, o3):
    return p // (o3[1] * o3[2]), (p // o3[2]) % o3[1], p % o3[2]


def np_im2col(x, geom, p0, npc):
    """(C, kk, nb, npc) float64 column buffer from the definition."""
    _, _, _, _, i3, o3, k3, s3, pd3, d3 = geom
    nb, C = x.shape[:2]
    x3 = x.reshape(nb, C, *i3).astype(np.float64)
    cols = np.arange(p0, p0 + npc)
    o = _unflat3(cols, o3)
    out = np.zeros((C, math.prod(k3), nb, npc))
    for t, tt in enumerate(itertools.product(*[range(k) for k in k3])):
        idx = [o[d] * s3[d] - pd3[d] + tt[d] * d3[d] for d in range(3)]
        ok = np.all([(idx[d] >= 0) & (idx[d] < i3[d]) for d in range(3)], axis=0)
        safe = [np.where(ok, idx[d], 0) for d in range(3)]
        vals = x3[:, :, safe[0], safe[1], safe[2]]  # (nb, C, npc)
        out[:, t] = np.where(ok, vals, 0).transpose(1, 0, 2)
    return out


def np_col2im(col, geom, nb, C, p0, npc):
    """The adjoint of np_im2col: (nb, C, *in3) float64."""
    _, _, _, _, i3, o3, k3, s3, pd3, d3 = geom
    x = np.zeros((nb, C) + tuple(i3))
    cols = np.arange(p0, p0 + npc)
    o = _unflat3(cols, o3)
    for t, tt in enumerate(itertools.product(*[range(k) for k in k3])):
        idx = [o[d] * s3[d] - pd3[d] + tt[d] * d3[d] for d in range(3)]
        ok = np.all([(idx[d] >= 0) & (idx[d] < i3[d]) for d in range(3)], axis=0)
        for n in range(nb):
            for c in range(C):
                np.add.at(x[n, c], (idx[0][ok], idx[1][ok], idx[2][ok]), col[c, t, n][ok])
    return x


def _check(got, ref, dtype, what):
    err = rel_err(got, ref)
    assert err <= TOL[dtype], f"{what}: relative error {err:.3e} > {TOL[dtype]:.0e}"


DT = [np.float32, np.float64]
SEEDS = range(12)


@pytest.mark.parametrize("dtype", DT)
@pytest.mark.parametrize("seed", SEEDS)
def test_im2col_kernel(harness, dtype, seed):
    rng = np.random.default_rng(seed)
    p, _ = _random_problem(rng)
    geom = p.geom()
    x, _ = _geom_arrays(p, dtype, rng)
    N, G, C = geom[0], geom[1], geom[2]
    cig = C // G
    P = math.prod(geom[5])
    kk = math.prod(geom[6])
    p0 = int(rng.integers(0, P))
    npc = int(rng.integers(1, P - p0 + 1))
    n0 = int(rng.integers(0, N))
    nb = N - n0
    ref = np_im2col(x[n0:], geom, p0, npc)  # (C, kk, nb, npc)
    for cap in (None, 2):
        K = harness.kernels(block=5, grid_cap=cap)
        col = np.full(C * kk * nb * npc, np.nan, dtype=dtype)
        K.im2col(x[n0:], col, nb, C, cig, p0, npc, 0, geom)
        _check(col.reshape(ref.shape), ref, dtype, "im2col layout 0")
        # layout 1: (G, nb*npc, cig*kk), the per-group transpose
        col1 = np.full(C * kk * nb * npc, np.nan, dtype=dtype)
        K.im2col(x[n0:], col1, nb, C, cig, p0, npc, 1, geom)
        ref1 = ref.reshape(G, cig * kk, nb * npc).transpose(0, 2, 1)
        _check(col1.reshape(ref1.shape), ref1, dtype, "im2col layout 1")


@pytest.mark.parametrize("dtype", DT)
@pytest.mark.parametrize("seed", SEEDS)
def test_col2im_gather_kernel(harness, dtype, seed):
    rng = np.random.default_rng(100 + seed)
    p, _ = _random_problem(rng)
    geom = p.geom()
    N, C = geom[0], geom[2]
    P = math.prod(geom[5])
    kk = math.prod(geom[6])
    Iflat = math.prod(geom[4])
    p0 = int(rng.integers(0, P))
    npc = int(rng.integers(1, P - p0 + 1))
    col = rng.standard_normal((C, kk, N, npc)).astype(dtype)
    bias = rng.standard_normal(C).astype(dtype)
    ref = np_col2im(col.astype(np.float64), geom, N, C, p0, npc)
    K = harness.kernels(block=3, grid_cap=4)
    x = np.full((N, C) + tuple(geom[4]), np.nan, dtype=dtype)
    K.col2im(col, x, None, N, C, p0, npc, 0, Iflat, False, geom)
    _check(x, ref, dtype, "col2im")
    x2 = np.full_like(x, np.nan)
    K.col2im(col, x2, bias, N, C, p0, npc, 0, Iflat, False, geom)
    _check(x2, ref + bias.reshape(1, C, 1, 1, 1), dtype, "col2im + bias")
    # accumulate over a sub-range of image positions: others untouched
    start = rng.standard_normal(x.shape).astype(dtype)
    x3 = start.copy()
    q0 = int(rng.integers(0, Iflat))
    nq = int(rng.integers(1, Iflat - q0 + 1))
    K.col2im(col, x3, None, N, C, p0, npc, q0, nq, True, geom)
    want = start.astype(np.float64).reshape(N, C, Iflat)
    want[:, :, q0:q0 + nq] += ref.reshape(N, C, Iflat)[:, :, q0:q0 + nq]
    _check(x3, want.reshape(x.shape), dtype, "col2im accumulate")


@pytest.mark.parametrize("seed", range(6))
def test_col2im_is_the_adjoint_of_im2col(harness, seed):
    """<im2col(x), c> == <x, col2im(c)> in float64, kernels on both sides."""
    rng = np.random.default_rng(200 + seed)
    p, _ = _random_problem(rng)
    geom = p.geom()
    N, G, C = geom[0], geom[1], geom[2]
    P, kk, Iflat = math.prod(geom[5]), math.prod(geom[6]), math.prod(geom[4])
    K = harness.kernels()
    x = rng.standard_normal(p.input_shape)
    c = rng.standard_normal(C * kk * N * P)
    col = np.empty_like(c)
    K.im2col(x, col, N, C, C // G, 0, P, 0, geom)
    xb = np.empty_like(x)
    K.col2im(c, xb, None, N, C, 0, P, 0, Iflat, False, geom)
    lhs, rhs = float(col @ c), float(x.ravel() @ xb.ravel())
    assert abs(lhs - rhs) <= 1e-12 * max(1.0, abs(lhs)) * 10


@pytest.mark.parametrize("dtype", DT)
@pytest.mark.parametrize("seed", range(4))
def test_layout_kernels(harness, dtype, seed):
    rng = np.random.default_rng(300 + seed)
    N, C, P = (int(v) for v in rng.integers(1, 6, size=3))
    P *= 3
    src = rng.standard_normal((N, C, P)).astype(dtype)
    p0 = int(rng.integers(0, P))
    npc = int(rng.integers(1, P - p0 + 1))
    n0 = int(rng.integers(0, N))
    nb = N - n0
    K = harness.kernels(block=4, grid_cap=3)
    dst = np.full((C, nb, npc), np.nan, dtype=dtype)
    K.cols_from_nchw(src[n0:], dst, nb, C, P, p0, npc)
    assert np.array_equal(dst, src[n0:, :, p0:p0 + npc].transpose(1, 0, 2))
    back = np.full((N, C, P), 7.0, dtype=dtype)
    bias = rng.standard_normal(C).astype(dtype)
    K.nchw_from_cols(dst, back[n0:], bias, nb, C, P, p0, npc)
    want = np.full((N, C, P), 7.0, dtype=dtype)
    want[n0:, :, p0:p0 + npc] = src[n0:, :, p0:p0 + npc] + bias[None, :, None]
    assert np.array_equal(back, want)
    # in place (one whole image): add the bias to itself
    img = src[:1].copy()
    K.nchw_from_cols(img, img, bias, 1, C, P, 0, P)
    assert np.array_equal(img, src[:1] + bias[None, :, None])


@pytest.mark.parametrize("dtype", DT)
@pytest.mark.parametrize("seed", range(10))
def test_depthwise_kernels(harness, dtype, seed):
    rng = np.random.default_rng(400 + seed)
    p, kw = _random_problem(rng, depthwise=True)
    geom = p.geom()
    N, C, CO = geom[0], geom[2], geom[3]
    Mu = CO // C
    x, w = _geom_arrays(p, dtype, rng)
    b = rng.standard_normal(CO).astype(dtype)
    K = harness.kernels(block=6, grid_cap=5)
    y = np.full(p.output_shape, np.nan, dtype=dtype)
    K.dw_fwd(x, w, b, y, N, C, Mu, geom)
    _check(y, ref_conv(x, w, b, **kw), dtype, "dw_fwd")
    K.dw_fwd(x, w, None, y, N, C, Mu, geom)
    _check(y, ref_conv(x, w, None, **kw), dtype, "dw_fwd without bias")
    gy = rng.standard_normal(p.output_shape).astype(dtype)
    gx = np.full(p.input_shape, np.nan, dtype=dtype)
    K.dw_adj(gy, w, None, gx, N, C, Mu, geom)
    _check(gx, ref_conv_grad_input(gy, w, x.shape, **kw), dtype, "dw_adj")
    bc = rng.standard_normal(C).astype(dtype)
    K.dw_adj(gy, w, bc, gx, N, C, Mu, geom)
    _check(gx, ref_conv_grad_input(gy, w, x.shape, **kw) + bc.reshape((1, C) + (1,) * p.nsp), dtype,
           "dw_adj + bias")
    gw = np.full(p.weight_shape, np.nan, dtype=dtype)
    K.dw_wgrad(x, gy, gw, N, C, Mu, geom)
    _check(gw, ref_conv_grad_weight(x, gy, w.shape, **kw), dtype, "dw_wgrad")
    # the reduction does not depend on the launch
    gw2 = np.full_like(gw, np.nan)
    harness.kernels(block=1, grid_cap=1).dw_wgrad(x, gy, gw2, N, C, Mu, geom)
    assert np.array_equal(gw, gw2)


@pytest.mark.parametrize("nrows,nw", [(1, 1), (7, 3), (1000, 1), (50_000, 9), (10, 10**6), (0, 4)])
def test_reduction_chunks_cover_everything(nrows, nw):
    nchunks, rpc = _cuda_kernels.wgrad_chunks(nrows, nw)
    assert nchunks >= 1 and rpc >= 1
    assert (nchunks - 1) * rpc < max(nrows, 1) <= nchunks * rpc
    n2, per = _cuda_kernels.bias_chunks(nrows, nw)
    assert (n2 - 1) * per < max(nrows, 1) <= n2 * per


@pytest.mark.parametrize("dtype", DT)
@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 1, 1), (4, 2, 1000), (3, 70, 33)])
def test_bias_grad_kernel(harness, dtype, shape):
    rng = np.random.default_rng(sum(shape))
    gy = rng.standard_normal(shape).astype(dtype)
    N, C, P = shape
    gb = np.full(C, np.nan, dtype=dtype)
    harness.kernels(block=32, grid_cap=3).bias_grad(gy, gb, N, C, P)
    _check(gb, gy.astype(np.float64).sum(axis=(0, 2)), dtype, "bias_grad")
    gb2 = np.full(C, np.nan, dtype=dtype)
    harness.kernels(block=1, grid_cap=1).bias_grad(gy, gb2, N, C, P)
    assert np.array_equal(gb, gb2)


def test_geom_args_order():
    p = make_params((2, 4, 5, 6, 7), (6, 2, 1, 2, 3), None, (1, 2, 3), (0, 1, 2), (3, 2, 1), False, 0, 2, "t")
    g = p.geom()
    assert _cuda_kernels.geom_args(g) == (5, 6, 7) + p.out_size + (1, 2, 3) + (1, 2, 3) + (0, 1, 2) + (3, 2, 1)
    p1 = make_params((2, 4, 9), (6, 2, 3), None, 2, 1, 2, False, 0, 2, "t")
    assert _cuda_kernels.geom_args(p1.geom()) == (1, 1, 9, 1, 1) + p1.out_size + (1, 1, 3, 1, 1, 2, 0, 0, 1, 1, 1, 2)
