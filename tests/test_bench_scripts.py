"""benches/winograd_error.py and benches/mca_kernels.py: the transforms the
error study evaluates are Winograd's (exact in float64), its float32 figures
order the tile sizes as measured, and the llvm-mca driver cuts the right
loop out of a kernel's assembly."""

import importlib.util
import os
import shutil

import numpy as np
import pytest

_BENCHES = os.path.join(os.path.dirname(__file__), os.pardir, "benches")


def _load(name):
    spec = importlib.util.spec_from_file_location(f"cconv_bench_{name}",
                                                  os.path.join(_BENCHES, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def werr():
    return _load("winograd_error")


@pytest.fixture(scope="module")
def mca():
    return _load("mca_kernels")


@pytest.mark.parametrize("m", [2, 4])
def test_transforms_are_exact_in_float64(werr, m):
    """Y = A^T [(G g G^T) * (B^T d B)] A is the direct correlation."""
    rng = np.random.default_rng(0)
    d = rng.standard_normal((3, 5, m + 2, m + 2))
    g = rng.standard_normal((4, 5, 3, 3))
    G, BT, AT = werr.F[m]
    U = np.einsum("ij,kcjl,ml->kcim", G, g, G)
    V = np.einsum("ij,tcjl,ml->tcim", BT, d, BT)
    Y = np.einsum("ij,tkjl,ml->tkim", AT, np.einsum("kcim,tcim->tkim", U, V), AT)
    np.testing.assert_allclose(Y, werr.direct(d, g, m), rtol=1e-10, atol=1e-10)


def test_float32_error_orders_the_tile_sizes(werr):
    rng = np.random.default_rng(1)
    d = rng.standard_normal((64, 64, 6, 6)).astype(np.float32)
    g = rng.standard_normal((8, 64, 3, 3)).astype(np.float32)
    ref = werr.direct(d, g, 4)
    y4 = werr.winograd(d, g, 4)
    y2 = np.concatenate([np.concatenate([werr.winograd(d[:, :, i:i + 4, j:j + 4], g, 2)
                                         for j in (0, 2)], axis=3) for i in (0, 2)], axis=2)
    s = np.abs(ref).max()
    e2, e4 = np.abs(y2 - ref).max() / s, np.abs(y4 - ref).max() / s
    assert e2 < 1.5e-6 and e4 > 3 * e2


ASM = """\
cc_ig_ukr_f32_avx2:
\tpushq %rbp
.L3:
\tvfmadd231ps %ymm1, %ymm2, %ymm3
\taddq $4, %rax
\tjne .L3
.L5:
\tvfmadd231ps %ymm1, %ymm2, %ymm3
\tvfmadd231ps %ymm1, %ymm2, %ymm4
\t.p2align 4
\tcmpq %rax, %rcx
\tjb .L5
\tjmp .L9
\tret
\t.size cc_ig_ukr_f32_avx2, .-cc_ig_ukr_f32_avx2
"""


def test_loop_extraction(mca):
    body = mca.function_body(ASM.splitlines(), "cc_ig_ukr_f32_avx2")
    loop = mca.hottest_loop(body)
    assert [ln.split()[0] for ln in loop] == ["vfmadd231ps", "vfmadd231ps", "cmpq", "jb"]


@pytest.mark.skipif(shutil.which("llvm-mca") is None or shutil.which("gcc") is None,
                    reason="needs gcc and llvm-mca")
def test_a_kernel_under_llvm_mca(mca, tmp_path):
    s = str(tmp_path / "k.s")
    mca.compile_asm("avx2", False, s)
    loop = mca.hottest_loop(mca.function_body(open(s).read().splitlines(), "cc_ig_ukr_f32_avx2"))
    assert sum("vfmadd" in ln for ln in loop) >= 12
    assert mca.mca(shutil.which("llvm-mca"), "haswell", loop) > 0
