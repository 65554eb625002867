"""The layout transpose between channels first and channels last
(src/transpose/transpose.c, tile kernels per instruction set in src/transpose/):
every kernel this CPU and build run, bit for bit against NumPy's own
transpose, through the module function and through the copies of
cconv._layout; the argument checks; the C check program natively, on
SIMDe's AVX-512, under AddressSanitizer and for aarch64 under qemu."""
from __future__ import annotations


import numpy as np
import pytest

import c_programs
import cconv
from cconv import _layout, _nhwc

ISAS = _nhwc.available_isas()
EDGES = [1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129]


@pytest.fixture
def isa_guard():
    prev = _nhwc.isa()
    yield
    _nhwc.set_isa(prev)


def _bits(rng, shape, itemsize):
    """Random bytes seen as unsigned integers of ``itemsize`` bytes (NaN
    payloads and every other bit pattern of the float types included)."""
    n = int(np.prod(shape)) * itemsize
    raw = rng.integers(0, 256, size=n, dtype=np.uint8)
    if itemsize == 16:
        return raw.view(np.complex128).reshape(shape)
    return raw.view(f"u{itemsize}").reshape(shape)


def _transpose(a, threads):
    """dst[b][c][r] = src[b][r][c] for a (batch, rows, cols) array, by
    the C transpose."""
    b, r, c = a.shape
    out = np.empty((b, c, r), a.dtype)
    _nhwc.transpose(b, r, c, a.dtype.itemsize, a.reshape(-1).view(np.uint8),
                    out.reshape(-1).view(np.uint8), threads)
    return out


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("itemsize", [2, 4, 8, 16])
def test_random_matrices_every_isa(isa, itemsize, isa_guard):
    rng = np.random.default_rng(100 + 7 * itemsize + ISAS.index(isa))
    _nhwc.set_isa(isa)
    for _ in range(25):
        rows = int(rng.choice(EDGES)) if rng.random() < 0.6 else int(rng.integers(1, 300))
        cols = int(rng.choice(EDGES)) if rng.random() < 0.6 else int(rng.integers(1, 300))
        batch = int(rng.integers(1, 4))
        a = _bits(rng, (batch, rows, cols), itemsize)
        for threads in (1, 2, 3):
            got = _transpose(a, threads)
            want = np.ascontiguousarray(a.transpose(0, 2, 1))
            assert got.view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), \
                (isa, itemsize, batch, rows, cols, threads)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128])
def test_layout_copies_every_isa_bit_exact(isa, dtype, isa_guard, restore_threads):
    """to_channels_first / to_channels_last through each kernel, threaded
    (arrays above the 256 KiB threading threshold too); NaNs with payloads
    and negative zeros come back bit for bit."""
    rng = np.random.default_rng(7)
    _nhwc.set_isa(isa)
    it = np.dtype(dtype).itemsize
    for shape in [(2, 9, 11, 40), (1, 70, 70, 72), (3, 5, 6, 7, 33), (2, 65, 129), (1, 1, 1, 9)]:
        phys = _bits(rng, shape, it).view(dtype)            # channels-last buffer
        x = np.moveaxis(phys, -1, 1)
        for threads in (1, 2):
            cconv.set_num_threads(threads)
            c = _layout.to_channels_first(x)
            assert c.flags.c_contiguous and c.dtype == x.dtype
            assert c.view(np.uint8).tobytes() == np.ascontiguousarray(x).view(np.uint8).tobytes()
            d = _layout.to_channels_last(c)
            assert np.moveaxis(d, 1, -1).flags.c_contiguous
            assert np.moveaxis(d, 1, -1).view(np.uint8).tobytes() == phys.view(np.uint8).tobytes()


def test_channels_last_results_through_the_kernels(isa_guard):
    """A convolution on channels-last input that takes the copy path
    (transposed: no channels-last kernel) gives the same values and a
    channels-last result under every kernel."""
    rng = np.random.default_rng(3)
    x = np.moveaxis(rng.standard_normal((2, 13, 17, 24)).astype(np.float32), -1, 1)
    w = rng.standard_normal((24, 16, 3, 3)).astype(np.float32)
    ys = []
    for isa in ISAS:
        _nhwc.set_isa(isa)
        y = cconv.conv_transpose2d(x, w, stride=2, padding=1)
        assert _layout.is_channels_last(y)
        ys.append(y)
    for y in ys[1:]:
        assert np.array_equal(y, ys[0])


def test_argument_checks():
    a = np.zeros(24, np.uint8)
    with pytest.raises(ValueError, match="3 bytes"):
        _nhwc.transpose(1, 2, 4, 3, a, np.zeros(24, np.uint8), 1)
    with pytest.raises(ValueError, match="wrong size"):
        _nhwc.transpose(1, 2, 3, 4, a, np.zeros(20, np.uint8), 1)
    with pytest.raises(ValueError, match="wrong size"):
        _nhwc.transpose(1, 2, 4, 4, a, np.zeros(32, np.uint8), 1)
    # nothing to do
    _nhwc.transpose(0, 2, 3, 4, np.zeros(0, np.uint8), np.zeros(0, np.uint8), 1)


def test_set_isa_rejects_unknown(isa_guard):
    with pytest.raises(ValueError, match="cannot run here"):
        _nhwc.set_isa("sse9")
    assert _nhwc.isa() in ISAS


# ---- the C check program: native, SIMDe AVX-512, ASan, aarch64 under qemu ----

def _missing(mode):
    return c_programs.missing(mode, ISAS)


@pytest.mark.skipif(_missing("native") is not None, reason=str(_missing("native")))
def test_c_native():
    out = c_programs.run("tr_check", "native", "300", "1")
    for isa in c_programs.cpu_isas(ISAS):
        assert isa in out.splitlines()[0]


@pytest.mark.skipif(_missing("asan") is not None, reason=str(_missing("asan")))
def test_c_asan():
    """No read or write outside the buffers (ragged tiles, block edges)."""
    c_programs.run("tr_check", "asan", "120", "2")


@pytest.mark.skipif(_missing("simde") is not None, reason=str(_missing("simde")))
def test_c_avx512_on_simde():
    out = c_programs.run("tr_check", "simde", "150", "3")
    assert "avx512" in out.splitlines()[0]


@pytest.mark.skipif(_missing("aarch64") is not None, reason=str(_missing("aarch64")))
def test_c_neon_under_qemu():
    out = c_programs.run("tr_check", "aarch64", "200", "4")
    assert "neon" in out.splitlines()[0]
