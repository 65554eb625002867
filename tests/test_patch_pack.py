"""Non-overlapping patches packed straight into the own GEMM's B micro-panels
(src/gemm/patch_pack.c): where the kernel equals the stride in every
dimension, with no padding and at least 4 taps along the last one, the GEMM
convolution's float32 products on the own GEMM (16-lane kernels) read the
input through the packer instead of an im2col matrix.

Random patch layers sized for the own GEMM to take them and pack B (more
than 96 output channels a group: fewer, it reads an im2col matrix in
place; a reduction of 16 or more, a million multiply-adds),
1-D, 2-D and 3-D (3-D with one depth tap: deeper patches go to the
implicit GEMM), with groups, bias or none, ragged input ends, image blocks
whose micro-panels cross from one image into the next, single images cut
into column tiles, reductions past the 512-deep K block whose block edge
falls inside a line's taps (5, 6 or 12 taps), and last micro-panels of 1-4
columns (the dot-product tail); every instruction set this CPU runs (the
ones whose GEMM declines fall back to im2col: the same check), 1 and 2
threads, against tests/reference.py.  CCONV_PATCH_PACK=0 against =1 (the
same bits) is in test_cpu_choices.py."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import cconv
from cconv import _depthwise

from isa_switch import forced_isa
from reference import assert_close, reduction_length, ref_conv

ISAS = _depthwise.available_isas()
FUNCS = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}


def _random_case(rng, nsp):
    """(batch, c_in, c_out, groups, size, kernel) of a patch layer whose
    product the own GEMM takes."""
    k = [int(rng.integers(1, 4)) for _ in range(nsp)]
    k[-1] = int(rng.choice([4, 5, 6, 8, 12, 16]))
    if nsp == 3:
        k[0] = 1
    groups = int(rng.choice([1, 1, 1, 2, 3]))
    cig = int(rng.integers(1, 9))
    cog = int(rng.integers(97, 201))
    K = cig * int(np.prod(k))
    while K < 16:
        cig += 1
        K = cig * int(np.prod(k))
    # output positions: enough columns for a million multiply-adds
    want = max(200, int(4e6 / (cog * K)) + 1)
    out = [int(rng.integers(1, 5)) for _ in range(nsp)]
    out[-1] = int(rng.integers(3, 40))
    per_image = int(np.prod(out))
    batch = max(1, min(9, -(-want // per_image)))
    while batch * per_image < want:
        out[-2 if nsp > 1 else -1] += 1
        per_image = int(np.prod(out))
    size = tuple(o * kk + int(rng.integers(0, kk)) for o, kk in zip(out, k))
    return batch, cig * groups, cog * groups, groups, size, tuple(k)


# (batch, c_in, c_out, groups, size, kernel): ViT-like 16x16 patches (K =
# 768, two K blocks); 5-tap lines with K = 600 (the second K block starts
# at tap 2 of a line); 12 taps, K = 576 (at tap 8), 3 groups; one large
# image in column tiles; 196-column blocks of two images of 98 (the 4
# columns past the last vector as dot products); 1-D, 8 taps
FIXED = [
    (3, 3, 130, 1, (224, 224), (16, 16)),
    (4, 24, 100, 1, (120, 124), (5, 5)),
    (4, 48, 300, 3, (37, 130), (1, 12)),
    (1, 4, 100, 1, (512, 772), (4, 4)),
    (4, 3, 130, 1, (112, 224), (16, 16)),
    (6, 64, 130, 1, (8 * 51 + 7,), (8,)),
]


def _check(batch, cin, cout, groups, size, k, seed):
    rng = np.random.default_rng(seed)
    nsp = len(size)
    x = rng.standard_normal((batch, cin) + size).astype(np.float32)
    w = rng.standard_normal((cout, cin // groups) + k).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32) if seed % 2 else None
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                   None if b is None else b.astype(np.float64), stride=k, groups=groups)
    red = reduction_length(cin, groups, k)
    what = f"{batch}x{cin}x{size} -> {cout} k{k} g{groups}"
    for name in ISAS:
        with forced_isa(name):
            for nt in (1, 2):
                cconv.set_num_threads(nt)
                y = FUNCS[nsp](x, w, b, stride=k, groups=groups, backend="gemm")
                assert_close(y, ref, np.float32, red, what=f"{what} {name} T={nt}")


@pytest.mark.parametrize("case", range(len(FIXED)))
def test_fixed_patch_layers(case, restore_threads):
    _check(*FIXED[case], seed=zlib.crc32(f"patch pack fixed {case}".encode()))


@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("seed", range(5))
def test_random_patch_layers(seed, nsp, restore_threads):
    tag = zlib.crc32(f"patch pack {seed} {nsp}".encode())
    case = _random_case(np.random.default_rng(tag), nsp)
    _check(*case, seed=tag)


def test_non_finite_values_reach_their_outputs(restore_threads):
    """An infinity and a NaN in the input land in the outputs of their own
    patches only (the products are plain sums: no transform spreads them)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 64, 64)).astype(np.float32)
    w = rng.standard_normal((96, 3, 16, 16)).astype(np.float32)
    x[0, 1, 5, 7] = np.inf
    x[1, 2, 40, 63] = np.nan
    for nt in (1, 2):
        cconv.set_num_threads(nt)
        y = cconv.conv2d(x, w, stride=16, backend="gemm")
        bad = ~np.isfinite(y)
        assert bad[0, :, 0, 0].all() and bad[1, :, 2, 3].all()
        assert bad.sum() == 2 * 96
