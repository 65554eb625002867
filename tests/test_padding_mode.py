"""padding_mode ('zeros', 'reflect', 'replicate', 'circular'): forward and
gradients against an index-map NumPy reference (always) and against
torch.nn.Conv1d/2d/3d modules and autograd (when torch is installed)."""
import itertools

import numpy as np
import pytest

import cconv
from reference import (assert_close, reduction_length, ref_conv, ref_conv_grad_input,
                       ref_conv_grad_weight)

MODES = ("zeros", "reflect", "replicate", "circular")
FUNCS = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}


# ------------------------------------------------------------- reference
def _src_index(mode, n, before, after):
    """For each padded position, the input index it copies (None: a zero)."""
    out = []
    for j in range(-before, n + after):
        if 0 <= j < n:
            out.append(j)
        elif mode == "zeros":
            out.append(None)
        elif mode == "replicate":
            out.append(0 if j < 0 else n - 1)
        elif mode == "circular":
            out.append(j % n)
        else:  # reflect: mirror about the edge element, not repeating it
            out.append(-j if j < 0 else 2 * (n - 1) - j)
    return out


def ref_pad(x, pads, mode):
    """x (batched, float64) padded on its spatial dims, one axis at a time
    from explicit index lists."""
    y = x
    for i, (a, b) in enumerate(pads):
        ax = 2 + i
        idx = _src_index(mode, y.shape[ax], a, b)
        zero = np.zeros_like(np.take(y, [0], axis=ax))
        parts = [zero if k is None else np.take(y, [k], axis=ax) for k in idx]
        y = np.concatenate(parts, axis=ax)
    return y


def ref_pad_adjoint(g, in_shape, pads, mode):
    """Gradient of ref_pad: np.add.at over the same index lists."""
    for i in reversed(range(len(pads))):
        a, b = pads[i]
        ax = 2 + i
        n = in_shape[ax]
        idx = _src_index(mode, n, a, b)
        shape = list(g.shape)
        shape[ax] = n
        r = np.zeros(shape, dtype=g.dtype)
        gm = np.moveaxis(g, ax, 0)
        rm = np.moveaxis(r, ax, 0)
        for j, k in enumerate(idx):
            if k is not None:
                rm[k] += gm[j]
        g = r
    return g


def torch_pads(padding, kernel, dilation, stride, nsp):
    """(before, after) per dim, as torch.nn.ConvNd's _reversed_padding_repeated_twice."""
    if padding == "valid":
        return [(0, 0)] * nsp
    if padding == "same":
        out = []
        for d, k in zip(dilation, kernel):
            t = d * (k - 1)
            out.append((t // 2, t - t // 2))
        return out
    return [(p, p) for p in padding]


def _case(rng, nsp, mode, dtype=np.float64):
    groups = int(rng.choice([1, 2]))
    cin = groups * int(rng.integers(1, 3))
    cout = groups * int(rng.integers(1, 3))
    kernel = tuple(int(k) for k in rng.integers(1, 4, nsp))
    dilation = tuple(int(d) for d in rng.integers(1, 3, nsp))
    size = tuple(int(max(s, (k - 1) * d + 1)) for s, k, d in
                 zip(rng.integers(3, 7, nsp), kernel, dilation))
    kind = rng.choice(["int", "tuple", "same", "valid"])
    stride = tuple(int(s) for s in rng.integers(1, 3, nsp))
    if kind == "same":
        stride = (1,) * nsp
        padding = "same"
    elif kind == "valid":
        padding = "valid"
    elif kind == "int":
        padding = int(rng.integers(0, 3))
    else:
        padding = tuple(int(p) for p in rng.integers(0, 3, nsp))
    padt = padding if isinstance(padding, str) else (
        (padding,) * nsp if isinstance(padding, int) else padding)
    pads = torch_pads(padt, kernel, dilation, stride, nsp)
    if mode == "reflect":  # keep each pad below its dimension (torch's rule)
        size = tuple(max(s, a + 1, b + 1) for s, (a, b) in zip(size, pads))
    n = int(rng.integers(1, 3))
    x = rng.standard_normal((n, cin) + size).astype(dtype)
    w = rng.standard_normal((cout, cin // groups) + kernel).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype) if rng.random() < 0.7 else None
    return dict(x=x, w=w, b=b, stride=stride, padding=padding, dilation=dilation,
                groups=groups, pads=pads)


@pytest.mark.parametrize("nsp,mode,seed", [
    (nsp, mode, seed) for nsp in (1, 2, 3) for mode in MODES for seed in range(4)])
def test_forward_and_gradients_match_reference(nsp, mode, seed):
    rng = np.random.default_rng(1000 * nsp + 10 * MODES.index(mode) + seed)
    dtype = np.float32 if seed % 2 else np.float64
    c = _case(rng, nsp, mode, dtype)
    x, w, b, pads = c["x"], c["w"], c["b"], c["pads"]
    kw = dict(stride=c["stride"], padding=c["padding"], dilation=c["dilation"], groups=c["groups"])
    y = FUNCS[nsp](x, w, b, padding_mode=mode, **kw)
    xp = ref_pad(x.astype(np.float64), pads, mode)
    ref = ref_conv(xp, w.astype(np.float64), None if b is None else b.astype(np.float64),
                   stride=c["stride"], pad_before=0, dilation=c["dilation"], groups=c["groups"])
    red = reduction_length(x.shape[1], c["groups"], w.shape[2:])
    assert y.dtype == x.dtype and y.shape == ref.shape
    assert_close(y, ref, dtype, red, what=f"{mode} forward")

    gy = rng.standard_normal(y.shape).astype(dtype)
    gi, gw, gb = cconv.convolution_backward(
        gy, x, w, None if b is None else [w.shape[0]], c["stride"], c["padding"], c["dilation"],
        False, 0, c["groups"], (True, True, True), padding_mode=mode)
    gyd = gy.astype(np.float64)
    ref_gi_p = ref_conv_grad_input(gyd, w.astype(np.float64), xp.shape, stride=c["stride"],
                                   pad_before=0, dilation=c["dilation"], groups=c["groups"])
    ref_gi = ref_pad_adjoint(ref_gi_p, x.shape, pads, mode)
    ref_gw = ref_conv_grad_weight(xp, gyd, w.shape, stride=c["stride"], pad_before=0,
                                  dilation=c["dilation"], groups=c["groups"])
    assert gi.shape == x.shape and gw.shape == w.shape
    assert_close(gi, ref_gi, dtype, red * 2, what=f"{mode} grad_input")
    assert_close(gw, ref_gw, dtype, int(np.prod(gy.shape)) // gy.shape[1], what=f"{mode} grad_weight")
    assert_close(gb, gyd.sum(axis=tuple(i for i in range(gy.ndim) if i != 1)), dtype, gy.size,
                 what="grad_bias")


@pytest.mark.parametrize("nsp,mode,seed", [
    (nsp, mode, seed) for nsp in (1, 2, 3) for mode in MODES for seed in range(2)])
def test_dask_arrays_stay_lazy_and_match_reference(nsp, mode, seed):
    """A dask input is padded by dask (lazy, chunked), and the forward and
    gradients are the reference's."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(7000 + 1000 * nsp + 10 * MODES.index(mode) + seed)
    dtype = np.float64 if seed else np.float32
    c = _case(rng, nsp, mode, dtype)
    x, w, b, pads = c["x"], c["w"], c["b"], c["pads"]
    chunks = (1, x.shape[1]) + tuple(max(1, n // 2) for n in x.shape[2:])
    xd = da.from_array(x, chunks=chunks)
    kw = dict(stride=c["stride"], padding=c["padding"], dilation=c["dilation"], groups=c["groups"])
    y = FUNCS[nsp](xd, w, b, padding_mode=mode, **kw)
    assert isinstance(y, da.Array)
    xp = ref_pad(x.astype(np.float64), pads, mode)
    ref = ref_conv(xp, w.astype(np.float64), None if b is None else b.astype(np.float64),
                   stride=c["stride"], pad_before=0, dilation=c["dilation"], groups=c["groups"])
    red = reduction_length(x.shape[1], c["groups"], w.shape[2:])
    assert_close(y.compute(), ref, dtype, red, what=f"dask {mode} forward")
    gy = rng.standard_normal(ref.shape).astype(dtype)
    gi, gw, _ = cconv.convolution_backward(
        da.from_array(gy, chunks=(1,) + gy.shape[1:]), xd, w, None, c["stride"], c["padding"],
        c["dilation"], False, 0, c["groups"], (True, True, False), padding_mode=mode)
    assert isinstance(gi, da.Array) and isinstance(gw, da.Array)
    gyd = gy.astype(np.float64)
    ref_gi = ref_pad_adjoint(
        ref_conv_grad_input(gyd, w.astype(np.float64), xp.shape, stride=c["stride"], pad_before=0,
                            dilation=c["dilation"], groups=c["groups"]), x.shape, pads, mode)
    ref_gw = ref_conv_grad_weight(xp, gyd, w.shape, stride=c["stride"], pad_before=0,
                                  dilation=c["dilation"], groups=c["groups"])
    assert_close(gi.compute(), ref_gi, dtype, red * 2, what=f"dask {mode} grad_input")
    assert_close(gw.compute(), ref_gw, dtype, int(np.prod(gy.shape)) // gy.shape[1],
                 what=f"dask {mode} grad_weight")


def test_unbatched_out_complex_float16():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 6, 7)) + 1j * rng.standard_normal((3, 6, 7))).astype(np.complex128)
    w = (rng.standard_normal((4, 3, 3, 3)) + 1j * rng.standard_normal((4, 3, 3, 3)))
    y = cconv.conv2d(x, w, padding=(1, 2), padding_mode="circular")
    ref = ref_conv(ref_pad(x[None], [(1, 1), (2, 2)], "circular"), w)[0]
    assert y.shape == ref.shape
    assert_close(y, ref, np.complex128, 27)
    out = np.empty_like(y)
    assert cconv.conv2d(x, w, padding=(1, 2), padding_mode="circular", out=out) is out
    np.testing.assert_array_equal(out, y)
    x16 = rng.standard_normal((1, 2, 9)).astype(np.float16)
    w16 = rng.standard_normal((2, 2, 3)).astype(np.float16)
    y16 = cconv.conv1d(x16, w16, padding="same", padding_mode="reflect")
    assert y16.dtype == np.float16 and y16.shape == (1, 2, 9)
    ref16 = ref_conv(ref_pad(x16.astype(np.float64), [(1, 1)], "reflect"), w16.astype(np.float64))
    assert_close(y16, ref16, np.float16, 6)


def test_convolution_entry_and_zeros_default():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 3, 5, 5))
    w = rng.standard_normal((4, 3, 3, 3))
    y = cconv.convolution(x, w, None, 1, 1, 1, False, 0, 1, padding_mode="replicate")
    np.testing.assert_allclose(y, cconv.conv2d(x, w, padding=1, padding_mode="replicate"),
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(cconv.conv2d(x, w, padding=1, padding_mode="zeros"),
                                  cconv.conv2d(x, w, padding=1))


@pytest.mark.parametrize("call,exc,words", [
    (lambda x, w: cconv.conv2d(x, w, padding=1, padding_mode="mirror"), ValueError, "padding_mode must be one of"),
    (lambda x, w: cconv.conv2d(x, w, padding=1, padding_mode=None), TypeError, "padding_mode must be a str"),
    (lambda x, w: cconv.conv2d(x, w, padding=5, padding_mode="reflect"), ValueError, "smaller than its input"),
    (lambda x, w: cconv.conv2d(x, w, padding=6, padding_mode="circular"), ValueError, "wrap around"),
    (lambda x, w: cconv.conv2d(x, w, padding="same", stride=2, padding_mode="reflect"), ValueError,
     "strided"),
    (lambda x, w: cconv.conv2d(x, w, padding="full", padding_mode="reflect"), ValueError,
     "Invalid padding string"),
    (lambda x, w: cconv.conv2d(x, w, padding=-3, padding_mode="replicate"), ValueError, "crops all"),
    (lambda x, w: cconv.conv2d(x, w, padding=-1, padding_mode="zeros"), ValueError, "negative padding"),
    (lambda x, w: cconv.conv_transpose2d(x, w, padding_mode="reflect"), ValueError, "only 'zeros'"),
    (lambda x, w: cconv.convolution(x, w, None, 1, 0, 1, True, 0, 1, padding_mode="circular"), ValueError,
     "only 'zeros'"),
    (lambda x, w: cconv.conv2d(x[0, 0], w, padding=1, padding_mode="reflect"), ValueError, "Expected 3D"),
])
def test_errors(call, exc, words):
    x = np.zeros((1, 3, 5, 5), np.float32)
    w = np.zeros((3, 3, 3, 3), np.float32)
    with pytest.raises(exc, match=words):
        call(x, w)


def test_backward_errors():
    x = np.zeros((1, 3, 5, 5))
    w = np.zeros((3, 3, 3, 3))
    gy = np.zeros((1, 3, 5, 5))
    with pytest.raises(ValueError, match="only 'zeros'"):
        cconv.convolution_backward(gy, x, w, None, 1, 1, 1, True, 0, 1, (True, True, False),
                                   padding_mode="reflect")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        cconv.convolution_backward(gy, x, w, None, 1, 1, 1, False, 0, 1, (True, True, False),
                                   padding_mode="symmetric")
    with pytest.raises(ValueError, match="grad_output"):
        cconv.convolution_backward(gy[..., :4], x, w, None, 1, 1, 1, False, 0, 1,
                                   (True, True, False), padding_mode="reflect")


# ----------------------------------------------------------------- torch
@pytest.mark.parametrize("nsp,mode", list(itertools.product((1, 2, 3), MODES)))
def test_against_torch_modules(nsp, mode):
    torch = pytest.importorskip("torch", reason="optional differential test against PyTorch")
    rng = np.random.default_rng(77 + 7 * nsp + MODES.index(mode))
    mod_cls = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[nsp]
    for trial in range(3):
        c = _case(rng, nsp, mode, np.float64)
        x, w, b = c["x"], c["w"], c["b"]
        m = mod_cls(x.shape[1], w.shape[0], w.shape[2:], stride=c["stride"], padding=c["padding"],
                    dilation=c["dilation"], groups=c["groups"], bias=b is not None,
                    padding_mode=mode).double()
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(w))
            if b is not None:
                m.bias.copy_(torch.from_numpy(b))
        xt = torch.from_numpy(x).requires_grad_(True)
        yt = m(xt)
        gy = rng.standard_normal(tuple(yt.shape))
        yt.backward(torch.from_numpy(gy))
        kw = dict(stride=c["stride"], padding=c["padding"], dilation=c["dilation"],
                  groups=c["groups"])
        y = FUNCS[nsp](x, w, b, padding_mode=mode, **kw)
        np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-10, atol=1e-10)
        gi, gw, gb = cconv.convolution_backward(
            gy, x, w, None if b is None else [w.shape[0]], c["stride"], c["padding"],
            c["dilation"], False, 0, c["groups"], (True, True, b is not None), padding_mode=mode)
        np.testing.assert_allclose(gi, xt.grad.numpy(), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(gw, m.weight.grad.numpy(), rtol=1e-10, atol=1e-10)
        if b is not None:
            np.testing.assert_allclose(gb, m.bias.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_torch_rejects_the_same_calls():
    torch = pytest.importorskip("torch", reason="optional differential test against PyTorch")
    x = np.zeros((1, 3, 5, 5), np.float32)
    w = np.zeros((3, 3, 3, 3), np.float32)
    with pytest.raises(ValueError):
        torch.nn.ConvTranspose2d(3, 3, 3, padding_mode="reflect")
    with pytest.raises(ValueError):
        cconv.conv_transpose2d(x, w, padding_mode="reflect")
    with pytest.raises(ValueError):
        torch.nn.Conv2d(3, 3, 3, padding_mode="mirror")
    with pytest.raises(ValueError):
        torch.nn.Conv2d(3, 3, 3, padding="same", stride=2, padding_mode="reflect")
    m = torch.nn.Conv2d(3, 3, 3, padding=5, padding_mode="reflect")
    with pytest.raises(RuntimeError):
        m(torch.from_numpy(x))
    with pytest.raises(ValueError):
        cconv.conv2d(x, w, padding=5, padding_mode="reflect")
    # circular: a pad equal to the size is accepted by both, one more is not
    m = torch.nn.Conv2d(3, 3, 3, padding=5, padding_mode="circular", bias=False).double()
    xr = np.random.default_rng(0).standard_normal((1, 3, 5, 5))
    wr = np.random.default_rng(1).standard_normal((3, 3, 3, 3))
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(wr))
        yt = m(torch.from_numpy(xr)).numpy()
    np.testing.assert_allclose(cconv.conv2d(xr, wr, padding=5, padding_mode="circular"), yt,
                               rtol=1e-10, atol=1e-10)
    m = torch.nn.Conv2d(3, 3, 3, padding=6, padding_mode="circular")
    with pytest.raises(Exception):
        m(torch.from_numpy(x))
    with pytest.raises(ValueError):
        cconv.conv2d(x, w, padding=6, padding_mode="circular")


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_negative_padding_crops(mode):
    """torch.nn.ConvNd hands a negative padding to F.pad, which crops."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 7, 8))
    w = rng.standard_normal((4, 3, 2, 3))
    y = cconv.conv2d(x, w, padding=(-1, 2) if mode != "reflect" else (-1, 3), padding_mode=mode)
    pads = [(-1, -1), (2, 2) if mode != "reflect" else (3, 3)]
    xp = ref_pad(x, pads, mode)
    assert xp.shape[2] == 5
    np.testing.assert_allclose(y, ref_conv(xp, w), rtol=1e-12, atol=1e-12)
    gy = rng.standard_normal(y.shape)
    gi, gw, _ = cconv.convolution_backward(gy, x, w, None, 1, pads[0][0:1] + pads[1][0:1], 1, False,
                                           0, 1, (True, True, False), padding_mode=mode)
    ref_gi = ref_pad_adjoint(ref_conv_grad_input(gy, w, xp.shape), x.shape, pads, mode)
    np.testing.assert_allclose(gi, ref_gi, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw, ref_conv_grad_weight(xp, gy, w.shape), rtol=1e-12, atol=1e-12)
    assert not gi[:, :, 0].any() and not gi[:, :, -1].any()   # the cropped rows get nothing
    try:
        import torch
    except ImportError:
        return
    m = torch.nn.Conv2d(3, 4, (2, 3), padding=(-1, pads[1][0]), padding_mode=mode, bias=False).double()
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(w))
    xt = torch.from_numpy(x).requires_grad_(True)
    yt = m(xt)
    yt.backward(torch.from_numpy(gy))
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gi, xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_zero_batch():
    x = np.zeros((0, 2, 4, 5), np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    for mode in ("reflect", "replicate", "circular"):
        assert cconv.conv2d(x, w, padding=1, padding_mode=mode).shape == (0, 3, 4, 5)
