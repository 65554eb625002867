"""Every argument check cconv makes before any work (PyTorch's
check_shape_forward, batchify, convolution_same and _convolution parameter
checks, as cconv/_params.py has them): the exception
type, and that the message names the offending argument and, where sensible,
the sizes.  Absurd sizes run in subprocesses so that a crash is detected."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cconv
from cconv import _params

CONV = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}
CONVT = {1: cconv.conv_transpose1d, 2: cconv.conv_transpose2d, 3: cconv.conv_transpose3d}


def good(nsp=2, transposed=False, dtype=np.float32):
    """A valid problem: x (2, 4, 6...), groups 2, C_out 6, kernel 3, bias."""
    x = np.ones((2, 4) + (6,) * nsp, dtype)
    if transposed:
        w = np.ones((4, 3) + (3,) * nsp, dtype)
    else:
        w = np.ones((6, 2) + (3,) * nsp, dtype)
    b = np.ones(6, dtype)
    return x, w, b


def expect(exc, call, *needles):
    """``call()`` raises ``exc``; every needle (a string, or a tuple of
    alternatives) occurs in the message (case-insensitive)."""
    with pytest.raises(exc) as ei:
        call()
    msg = str(ei.value)
    low = msg.lower()
    for n in needles:
        alts = n if isinstance(n, tuple) else (n,)
        assert any(a.lower() in low for a in alts), f"message {msg!r} names none of {alts}"
    return msg


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_good_problem_runs(nsp, transposed):
    # positive control for the checks below
    x, w, b = good(nsp, transposed)
    fn = (CONVT if transposed else CONV)[nsp]
    y = fn(x, w, b, groups=2)
    assert y.shape[:2] == (2, 6)


# ------------------------------------------------------------------ parameters


@pytest.mark.parametrize("stride", [0, -1, (1, 0), [0, 1], (-2, 1)])
@pytest.mark.parametrize("transposed", [False, True])
def test_non_positive_stride(stride, transposed):
    x, w, b = good(2, transposed)
    fn = CONVT[2] if transposed else CONV[2]
    expect(ValueError, lambda: fn(x, w, b, stride=stride, groups=2), "stride")


@pytest.mark.parametrize("name,value", [
    ("stride", 2**63), ("stride", (1, 2**64)), ("padding", 2**63), ("padding", (-2**63 - 1, 0)),
    ("dilation", 2**63), ("groups", 2**63), ("output_padding", 2**63)])
@pytest.mark.parametrize("transposed", [False, True])
def test_parameters_beyond_64_bits(name, value, transposed):
    """A parameter outside int64 is a ValueError naming it, as PyTorch's
    argument parser raises one ("Overflow when unpacking long long"); a
    stride of 2**63 gave a result before (its one output along the axis
    never applies it)."""
    if name == "output_padding" and not transposed:
        return
    x, w, b = good(2, transposed)
    fn = CONVT[2] if transposed else CONV[2]
    kw = {"groups": 2, name: value}
    expect(ValueError, lambda: fn(x, w, b, **kw), name, "64-bit")
    # the largest int64 stride is still a parameter like any other
    if name == "stride" and not transposed:
        assert fn(x, w, b, stride=2**63 - 1, groups=2).shape[2:] == (1, 1)


@pytest.mark.parametrize("groups", [0, -1, -2])
@pytest.mark.parametrize("transposed", [False, True])
def test_non_positive_groups(groups, transposed):
    x, w, b = good(2, transposed)
    fn = CONVT[2] if transposed else CONV[2]
    expect(ValueError, lambda: fn(x, w, b, groups=groups), "groups")


@pytest.mark.parametrize("dilation", [0, -1, (1, 0), [-1, 1]])
@pytest.mark.parametrize("transposed", [False, True])
def test_non_positive_dilation(dilation, transposed):
    x, w, b = good(2, transposed)
    fn = CONVT[2] if transposed else CONV[2]
    expect(ValueError, lambda: fn(x, w, b, dilation=dilation, groups=2), "dilation")


def test_non_positive_dilation_with_same_padding():
    x, w, b = good(2)
    expect(ValueError, lambda: CONV[2](x, w, b, padding="same", dilation=0, groups=2), "dilation")


@pytest.mark.parametrize("padding", [-1, (0, -1), [-3, 0]])
@pytest.mark.parametrize("transposed", [False, True])
def test_negative_padding(padding, transposed):
    x, w, b = good(2, transposed)
    fn = CONVT[2] if transposed else CONV[2]
    expect(ValueError, lambda: fn(x, w, b, padding=padding, groups=2), "padding")


@pytest.mark.parametrize("output_padding", [-1, (0, -1)])
def test_negative_output_padding(output_padding):
    x, w, b = good(2, True)
    msg = expect(ValueError, lambda: CONVT[2](x, w, b, stride=2, output_padding=output_padding, groups=2),
                 "output_padding")
    assert "negative" in msg.lower() or "-1" in msg


def test_negative_output_padding_non_transposed_convolution():
    # torch.convolution checks output_padding >= 0 even when transposed=False
    x, w, b = good(2)
    expect(ValueError, lambda: cconv.convolution(x, w, b, [1, 1], [0, 0], [1, 1], False, [-1, 0], 2),
           "output_padding")


@pytest.mark.parametrize("stride,dilation,op", [
    (2, 1, 2),            # == stride, > dilation
    (1, 2, 2),            # == dilation, > stride
    (2, 2, 3),            # above both
    ((2, 1), 1, (1, 1)),  # fine in dim 0, too big in dim 1
    (1, (1, 3), (0, 3)),
])
def test_output_padding_not_smaller_than_stride_or_dilation(stride, dilation, op):
    x, w, b = good(2, True)
    msg = expect(ValueError, lambda: CONVT[2](x, w, b, stride=stride, output_padding=op, groups=2,
                                               dilation=dilation),
                 "output_padding")
    assert "stride" in msg.lower() and "dilation" in msg.lower()


def test_output_padding_smaller_than_dilation_is_fine():
    # the positive side of the rule: op < dilation suffices even with stride 1
    x, w, b = good(2, True)
    y = CONVT[2](x, w, b, stride=1, output_padding=2, dilation=3, groups=2)
    assert y.shape == (2, 6, 6 - 1 + 3 * 2 + 2 + 1, 6 - 1 + 3 * 2 + 2 + 1)


@pytest.mark.parametrize("name,value", [
    ("stride", (1, 1, 1)),
    ("padding", (1, 2, 3)),
    ("dilation", [1, 1, 1]),
    ("stride", ()),
    ("padding", []),
])
@pytest.mark.parametrize("transposed", [False, True])
def test_wrong_length_parameter_tuples_2d(name, value, transposed):
    x, w, b = good(2, transposed)
    fn = CONVT[2] if transposed else CONV[2]
    expect(ValueError, lambda: fn(x, w, b, groups=2, **{name: value}), name)


@pytest.mark.parametrize("name,value", [("stride", (1, 1)), ("padding", (0, 0)), ("dilation", (1, 1, 1, 1))])
def test_wrong_length_parameter_tuples_1d_3d(name, value):
    x, w, b = good(1)
    expect(ValueError, lambda: CONV[1](x, w, b, groups=2, **{name: value}), name)
    x, w, b = good(3)
    if len(value) != 3:
        expect(ValueError, lambda: CONV[3](x, w, b, groups=2, **{name: value}), name)


def test_wrong_length_output_padding():
    x, w, b = good(2, True)
    expect(ValueError, lambda: CONVT[2](x, w, b, stride=2, output_padding=(0, 0, 0), groups=2),
           "output_padding")
    expect(ValueError, lambda: cconv.convolution(x, w, b, [2, 2], [0, 0], [1, 1], True, [0, 0, 0], 2),
           "output_padding")


def test_wrong_length_in_convolution():
    x, w, b = good(3)
    expect(ValueError, lambda: cconv.convolution(x, w, b, [1, 1], [0, 0, 0], [1, 1, 1], False, [0], 2),
           "stride")


# (a string padding is a padding mode: see test_unknown_padding_string)
NON_INTEGER = [(n, v) for n in ("stride", "padding", "dilation", "groups") for v in (1.5, "2", None, 2.0)
               if not (n == "padding" and isinstance(v, str))]


@pytest.mark.parametrize("name,value", NON_INTEGER)
def test_non_integer_parameters(name, value):
    x, w, b = good(2)
    kw = dict(groups=2)
    kw[name] = value
    # a bad parameter type: TypeError (PyTorch) or ValueError (cconv's rule for parameters)
    expect((TypeError, ValueError), lambda: CONV[2](x, w, b, **kw), name)


@pytest.mark.parametrize("groups", [(2,), [2], (2, 2), np.array([2])])
def test_groups_sequence(groups):
    """groups is one int: a sequence is a TypeError that says so (not the
    "int or a tuple of ints" that stride/padding/dilation take)."""
    x, w, b = good(2)
    msg = expect(TypeError, lambda: CONV[2](x, w, b, groups=groups), "groups")
    assert "must be an int," in msg and "tuple of ints" not in msg, msg


@pytest.mark.parametrize("padding", ["SAME", "Same", "full", "", "valid ", "VALID", "causal"])
def test_unknown_padding_string(padding):
    x, w, b = good(2)
    msg = expect(ValueError, lambda: CONV[2](x, w, b, padding=padding, groups=2), "padding")
    assert repr(padding) in msg or f"'{padding}'" in msg or f'"{padding}"' in msg, msg


@pytest.mark.parametrize("stride", [2, (1, 2), (2, 1), [3, 3]])
def test_same_padding_with_stride(stride):
    x, w, b = good(2)
    expect(ValueError, lambda: CONV[2](x, w, b, padding="same", stride=stride, groups=2), "stride")


def test_same_padding_with_unit_stride_tuple_is_fine():
    x, w, b = good(2)
    assert CONV[2](x, w, b, padding="same", stride=(1, 1), groups=2).shape == (2, 6, 6, 6)
    assert CONV[2](x, w, b, padding="same", stride=[1], groups=2).shape == (2, 6, 6, 6)


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_padding_string_for_transposed(padding, nsp):
    x, w, b = good(nsp, True)
    expect(ValueError, lambda: CONVT[nsp](x, w, b, padding=padding, groups=2), "padding")


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_padding_string_in_transposed_convolution(padding):
    x, w, b = good(2, True)
    expect(ValueError, lambda: cconv.convolution(x, w, b, [1, 1], padding, [1, 1], True, [0, 0], 2),
           "padding")


# ------------------------------------------------------------------ ranks (batchify)


@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("delta", [-2, 2])
def test_input_rank(nsp, delta):
    x, w, b = good(nsp)
    shape = (3,) * (nsp + 2 + delta) if delta < 0 else (1, 1) + x.shape
    xb = np.ones(shape, np.float32)
    msg = expect(ValueError, lambda: CONV[nsp](xb, w, b, groups=2), "input")
    assert str(nsp + 1) in msg and str(nsp + 2) in msg  # expected ranks (unbatched, batched)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_input_rank_transposed(nsp):
    x, w, b = good(nsp, True)
    expect(ValueError, lambda: CONVT[nsp](x[None], w, b, groups=2), "input")


def test_zero_dim_input():
    _, w, b = good(2)
    expect(ValueError, lambda: CONV[2](np.float32(1.0), w, b, groups=2), "input")


@pytest.mark.parametrize("wdim", [2, 3, 5])
def test_conv2d_weight_rank(wdim):
    x, _, b = good(2)
    w = np.ones((6, 2, 3, 3, 3)[:wdim], np.float32)
    expect(ValueError, lambda: CONV[2](x, w, b, groups=2), "weight")


@pytest.mark.parametrize("nsp,wdim", [(1, 4), (3, 4), (1, 2)])
def test_conv1d_3d_weight_rank(nsp, wdim):
    x, _, b = good(nsp)
    w = np.ones((6, 2, 3, 3, 3)[:wdim], np.float32)
    expect(ValueError, lambda: CONV[nsp](x, w, b, groups=2), "weight")


@pytest.mark.parametrize("wdim", [3, 5])
def test_conv_transpose2d_weight_rank(wdim):
    x, _, b = good(2, True)
    w = np.ones((4, 3, 3, 3, 3)[:wdim], np.float32)
    expect(ValueError, lambda: CONVT[2](x, w, b, groups=2), "weight")


def test_convolution_weight_input_rank_mismatch():
    x, w, b = good(2)
    msg = expect(ValueError, lambda: cconv.convolution(x, w[..., None], b, [1], [0], [1], False, [0], 2),
                 ("weight", "input"))
    assert "4" in msg and "5" in msg


def test_convolution_weight_rank_too_small():
    x, w, b = good(2)
    expect(ValueError, lambda: cconv.convolution(x[:, :, 0, 0], w[:, :, 0, 0], b, [1], [0], [1], False,
                                                 [0], 2), "weight")


@pytest.mark.parametrize("flag", ["no", "", 2, -1, 1.0, None])
def test_convolution_transposed_must_be_a_bool(flag):
    x, w = np.ones((1, 2, 5, 5)), np.ones((3, 2, 3, 3))
    with pytest.raises(TypeError, match="convolution: transposed must be a bool"):
        cconv.convolution(x, w, None, 1, 0, 1, flag, 0, 1)
    with pytest.raises(TypeError, match="select_backend: transposed must be a bool"):
        cconv.select_backend(x, w, transposed=flag)


@pytest.mark.parametrize("flag", [False, np.False_, 0])
def test_convolution_transposed_false_spellings(flag):
    x, w = np.ones((1, 2, 5, 5)), np.ones((3, 2, 3, 3))
    assert cconv.convolution(x, w, None, 1, 0, 1, flag, 0, 1).shape == (1, 3, 3, 3)


def test_convolution_is_batched_only():
    x, w, b = good(2)
    expect(ValueError, lambda: cconv.convolution(x[0], w, b, [1, 1], [0, 0], [1, 1], False, [0, 0], 2),
           ("input", "weight"))


# ------------------------------------------------------------------ channels and groups


def test_input_channels_not_divisible_by_groups():
    # C_in = 5 cannot be split into 2 groups of weight.shape[1] = 2
    x = np.ones((1, 5, 6, 6), np.float32)
    w = np.ones((6, 2, 3, 3), np.float32)
    msg = expect(ValueError, lambda: CONV[2](x, w, groups=2), ("input", "channels"))
    assert "5" in msg and "4" in msg  # got 5 channels, expected 2 * 2


def test_input_channels_not_divisible_by_groups_transposed():
    x = np.ones((1, 5, 6, 6), np.float32)
    w = np.ones((5, 3, 3, 3), np.float32)
    expect(ValueError, lambda: CONVT[2](x, w, groups=2), ("groups", "channels", "input", "weight"))


def test_output_channels_not_divisible_by_groups():
    x = np.ones((1, 4, 6, 6), np.float32)
    w = np.ones((7, 2, 3, 3), np.float32)
    msg = expect(ValueError, lambda: CONV[2](x, w, groups=2), "weight", "groups")
    assert "7" in msg


def test_weight_fewer_output_channels_than_groups():
    x = np.ones((1, 6, 6, 6), np.float32)
    w = np.ones((2, 2, 3, 3), np.float32)
    expect(ValueError, lambda: CONV[2](x, w, groups=3), "weight", "groups")


def test_weight_zero_output_channels():
    x = np.ones((1, 2, 6, 6), np.float32)
    w = np.ones((0, 2, 3, 3), np.float32)
    expect(ValueError, lambda: CONV[2](x, w), "weight")


def test_input_channel_mismatch():
    x = np.ones((1, 7, 6, 6), np.float32)
    w = np.ones((3, 13, 3, 3), np.float32)
    msg = expect(ValueError, lambda: CONV[2](x, w), ("input", "channels"))
    assert "7" in msg and "13" in msg


def test_input_channel_mismatch_unbatched():
    x = np.ones((7, 6, 6), np.float32)
    w = np.ones((3, 13, 3, 3), np.float32)
    msg = expect(ValueError, lambda: CONV[2](x, w), ("input", "channels"))
    assert "7" in msg and "13" in msg


def test_input_channel_mismatch_transposed():
    x = np.ones((1, 7, 6, 6), np.float32)
    w = np.ones((13, 3, 3, 3), np.float32)
    msg = expect(ValueError, lambda: CONVT[2](x, w), ("input", "channels"))
    assert "7" in msg and "13" in msg


def test_groups_larger_than_channels():
    x, w, b = good(2)
    expect(ValueError, lambda: CONV[2](x, w, b, groups=8), ("groups", "weight", "input"))


# ------------------------------------------------------------------ bias


@pytest.mark.parametrize("bshape", [(5,), (7,), (6, 1), (1, 6), (), (0,)])
def test_bias_shape(bshape):
    x, w, _ = good(2)
    b = np.ones(bshape, np.float32)
    msg = expect(ValueError, lambda: CONV[2](x, w, b, groups=2), "bias")
    assert "6" in msg  # the expected number of elements


@pytest.mark.parametrize("bshape", [(4,), (3,), (6, 1)])
def test_bias_shape_transposed(bshape):
    # transposed: C_out = weight.shape[1] * groups = 6, not weight.shape[0] = 4
    x, w, _ = good(2, True)
    b = np.ones(bshape, np.float32)
    msg = expect(ValueError, lambda: CONVT[2](x, w, b, groups=2), "bias")
    assert "6" in msg


# ------------------------------------------------------------------ sizes


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_kernel_larger_than_input(nsp):
    x = np.ones((1, 2) + (3,) * nsp, np.float32)
    w = np.ones((4, 2) + (5,) * nsp, np.float32)
    msg = expect(ValueError, lambda: CONV[nsp](x, w), ("kernel", "weight"))
    assert "3" in msg and "5" in msg
    # padding 1 is exactly enough
    assert CONV[nsp](x, w, padding=1).shape == (1, 4) + (1,) * nsp


def test_dilated_kernel_larger_than_input():
    x = np.ones((1, 2, 9), np.float32)
    w = np.ones((4, 2, 3), np.float32)
    msg = expect(ValueError, lambda: CONV[1](x, w, dilation=5), ("kernel", "weight"))
    assert "9" in msg and "11" in msg  # padded input 9, dilated kernel 5 * 2 + 1
    assert CONV[1](x, w, dilation=4).shape == (1, 4, 1)


def test_kernel_larger_than_padded_input_one_dim():
    x = np.ones((1, 2, 8, 2), np.float32)
    w = np.ones((4, 2, 3, 5), np.float32)
    expect(ValueError, lambda: CONV[2](x, w, padding=(0, 1)), ("kernel", "weight"))
    assert CONV[2](x, w, padding=(0, 2)).shape == (1, 4, 6, 2)


def test_kernel_larger_than_input_zero_batch():
    # the shape check runs before the zero-batch shortcut
    x = np.ones((0, 2, 3, 3), np.float32)
    w = np.ones((4, 2, 5, 5), np.float32)
    expect(ValueError, lambda: CONV[2](x, w), ("kernel", "weight"))


def test_same_padding_allows_kernel_larger_than_input():
    x = np.ones((1, 2, 2, 2), np.float32)
    w = np.ones((4, 2, 5, 5), np.float32)
    assert CONV[2](x, w, padding="same").shape == (1, 4, 2, 2)


def test_zero_size_kernel():
    x = np.ones((1, 2, 6, 6), np.float32)
    w = np.ones((4, 2, 0, 3), np.float32)
    expect(ValueError, lambda: CONV[2](x, w), ("kernel", "weight"))
    expect(ValueError, lambda: CONV[2](x, w, padding="same"), ("kernel", "weight"))
    wt = np.ones((2, 4, 3, 0), np.float32)
    expect(ValueError, lambda: CONVT[2](x, wt), ("kernel", "weight"))


@pytest.mark.parametrize("batch", [0, 2])
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_transposed_weight_without_output_channels(batch, groups, nsp):
    # PyTorch: "non-empty ... weight tensor expected" (or a oneDNN or select()
    # error); an error for every dtype, batch and group count
    x = np.ones((batch, 4) + (5,) * nsp, np.float64)
    w = np.ones((4, 0) + (3,) * nsp, np.float64)
    msg = expect(ValueError, lambda: CONVT[nsp](x, w, groups=groups), "weight", "empty")
    assert str(list(w.shape)).replace(" ", "") in msg.replace(" ", "")
    gO = np.ones((batch, 0) + (7,) * nsp, np.float64)
    expect(ValueError, lambda: cconv.convolution_backward(
        gO, x, w, None, [1] * nsp, [0] * nsp, [1] * nsp, True, [0] * nsp, groups,
        [True, True, False]), "weight")


@pytest.mark.parametrize("transposed", [False, True])
def test_zero_spatial_size_with_non_zero_batch(transposed):
    # ATen: "Only zero batch or zero channel inputs are supported"
    x = np.ones((1, 2, 0, 5), np.float32)
    if transposed:
        w = np.ones((2, 3, 1, 1), np.float32)
        expect(ValueError, lambda: CONVT[2](x, w), "input")
    else:
        w = np.ones((3, 2, 1, 1), np.float32)
        expect(ValueError, lambda: CONV[2](x, w, padding=1), "input")


def test_transposed_output_size_too_small():
    x = np.ones((1, 2, 1, 1), np.float32)
    w = np.ones((2, 3, 1, 1), np.float32)
    msg = expect(ValueError, lambda: CONVT[2](x, w, padding=1), ("output", "padding"))
    assert "-1" in msg


# PyTorch 2.13 on the CPU: a transposed convolution whose output size is 0 in
# some dimension gives an empty result where its backend choice takes the
# mkldnn path, which has no size check: float32 (or complex64, computed in
# float32), no output padding reaching its stride, and grouped, or a batch
# of more than 1, or a kernel larger than 3 in its last two sizes, or more
# than 20480 elements in the input's first four sizes.  Every other case
# (float64, float16, complex128, a single small image) fails the "output
# size is too small" check, and a negative size always fails.
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.complex64, np.complex128])
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("batch", [1, 2])
def test_transposed_output_size_zero(dtype, groups, batch):
    x = np.ones((batch, 4, 2, 3), dtype)
    w = np.ones((4, 3, 3, 3), dtype)
    b = np.ones(3 * groups, dtype)
    # height: (2 - 1) - 2 * 2 + 2 + 1 = 0; width: 3
    call = lambda: CONVT[2](x, w, b, padding=(2, 1), groups=groups)  # noqa: E731
    gO = np.ones((batch, 3 * groups, 0, 3), dtype)
    bwd = lambda: cconv.convolution_backward(  # noqa: E731
        gO, x, w, [3 * groups], [1, 1], [2, 1], [1, 1], True, [0, 0], groups, [True, True, True])
    # float16 takes the float32 rule on CPUs where PyTorch runs it on mkldnn
    # (AVX512-FP16), and the size check elsewhere
    half = np.dtype(dtype) == np.float16 and _params.half_on_mkldnn()
    if half or ((groups > 1 or batch > 1) and np.dtype(dtype) in (np.float32, np.complex64)):
        y = call()
        assert y.shape == (batch, 3 * groups, 0, 3) and y.dtype == dtype
        gi, gw, gb = bwd()
        assert gi.shape == x.shape and gw.shape == w.shape and gb.shape == b.shape
        assert not gi.any() and not gw.any() and not gb.any()
    else:
        msg = expect(ValueError, call, ("output", "padding"))
        assert "(0, 3)" in msg
        expect(ValueError, bwd, "output")
    if half or (groups > 1 and np.dtype(dtype) in (np.float32, np.complex64)):  # unbatched: batch 1
        assert CONVT[2](x[0], w, b, padding=(2, 1), groups=groups).shape == (3 * groups, 0, 3)
    # a negative size is an error whatever the dtype and groups
    msg = expect(ValueError, lambda: CONVT[2](x, w, b, padding=(3, 1), groups=groups), "output")
    assert "(-2, 3)" in msg


@pytest.mark.parametrize("case,empty", [
    # (x shape, w shape, stride, padding, output_padding, dilation, groups)
    # of float32 problems with an output size of 0: which take torch's
    # mkldnn path (an empty result) and which its size check
    (((1, 2, 3, 3), (2, 1, 4, 4), 1, (3, 1), 0, 1, 1), True),        # kernel 4x4
    (((1, 2, 3, 3), (2, 1, 4, 3), 1, (3, 1), 0, 1, 1), False),       # 4x3: not both > 3
    (((1, 2, 5), (2, 1, 4), 1, 4, 0, 1, 1), False),                   # 1-D: height 1
    (((1, 8, 40, 70), (8, 1, 1, 3), 1, (0, 36), 0, 1, 1), True),      # 8*40*70 = 22400 > 20480
    (((1, 8, 36, 70), (8, 1, 1, 3), 1, (0, 36), 0, 1, 1), False),     # 20160
    (((2, 4, 2, 3), (4, 3, 3, 3), 2, (3, 1), (1, 0), 1, 2), True),    # output padding < stride
    (((2, 4, 3, 3), (4, 3, 3, 3), 1, (4, 1), (1, 0), 2, 2), False),   # output padding >= stride
])
def test_transposed_output_size_zero_backend_rule(case, empty):
    xs, ws, stride, pad, op, dil, groups = case
    x = np.ones(xs, np.float32)
    w = np.ones(ws, np.float32)
    nsp = len(xs) - 2
    call = lambda: CONVT[nsp](x, w, None, stride=stride, padding=pad,  # noqa: E731
                              output_padding=op, groups=groups, dilation=dil)
    if empty:
        y = call()
        assert 0 in y.shape[2:] and y.shape[:2] == (xs[0], ws[1] * groups), y.shape
    else:
        expect(ValueError, call, "output")


# ... and a kernel of 1 x 1 in its last two sizes with no stride or dilation
# above 1 and a batch below 16 takes mkldnn only on more than one thread
# (PyTorch's "1x1 filters" rule, at::get_num_threads(): the OpenMP count
# that torch.set_num_threads and cconv.set_num_threads both set)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case,empty1", [
    # (x shape, w shape, stride, padding, dilation, groups); empty on 1 thread
    (((2, 2, 2), (2, 3, 1), 1, 1, 1, 1), False),                # 1-D k1, batch 2
    (((1, 4, 2), (4, 1, 1), 1, 1, 1, 2), False),                # grouped
    (((2, 2, 2, 2), (2, 3, 1, 1), 1, (1, 0), 1, 1), False),     # 2-D 1x1
    (((2, 2, 2, 2, 2), (2, 3, 3, 1, 1), 1, (2, 0, 0), 1, 1), False),  # 3-D 3x1x1
    (((16, 2, 2), (2, 3, 1), 1, 1, 1, 1), True),                # batch 16
    (((2, 2, 2), (2, 3, 1), 3, 2, 1, 1), True),                 # strided
    (((2, 2, 2, 2), (2, 3, 1, 1), (1, 2), (1, 0), 1, 1), True),  # strided in one dimension
    (((2, 2, 3), (2, 3, 2), 1, 2, 1, 1), True),                 # k2
])
def test_transposed_output_size_zero_one_thread(threads, case, empty1):
    xs, ws, stride, pad, dil, groups = case
    x = np.ones(xs, np.float32)
    w = np.ones(ws, np.float32)
    nsp = len(xs) - 2
    before = cconv.get_num_threads()
    cconv.set_num_threads(threads)
    try:
        if cconv.get_num_threads() != threads:
            pytest.skip("a thread limit holds the count below 2")
        call = lambda: CONVT[nsp](x, w, None, stride=stride, padding=pad,  # noqa: E731
                                  groups=groups, dilation=dil)
        if empty1 or threads > 1:
            y = call()
            assert 0 in y.shape[2:] and y.shape[:2] == (xs[0], ws[1] * groups), y.shape
        else:
            expect(ValueError, call, "output")
    finally:
        cconv.set_num_threads(before)


def test_error_leaves_out_untouched():
    x, w, _ = good(2)
    out = np.full((2, 6, 4, 4), np.nan, np.float32)
    with pytest.raises(ValueError):
        CONV[2](x, w, np.ones(5, np.float32), groups=2, out=out)
    assert np.isnan(out).all()


# ------------------------------------------------------------------ dtypes


@pytest.mark.parametrize("xdt,wdt", [(np.float32, np.float64), (np.float64, np.float32),
                                     (np.float16, np.float32), (np.complex64, np.float32),
                                     (np.complex128, np.complex64), (np.float64, np.complex128)])
def test_dtype_mismatch_input_weight(xdt, wdt):
    x, w, _ = good(2)
    msg = expect(TypeError, lambda: CONV[2](x.astype(xdt), w.astype(wdt), groups=2), ("weight", "input"))
    assert np.dtype(xdt).name in msg and np.dtype(wdt).name in msg


@pytest.mark.parametrize("bdt", [np.float64, np.float16, np.complex64, np.int32])
def test_dtype_mismatch_bias(bdt):
    x, w, b = good(2)
    msg = expect(TypeError, lambda: CONV[2](x, w, b.astype(bdt), groups=2), "bias")
    assert np.dtype(bdt).name in msg


def test_dtype_mismatch_transposed():
    x, w, b = good(2, True)
    expect(TypeError, lambda: CONVT[2](x, w.astype(np.float64), b, groups=2), ("weight", "input"))
    expect(TypeError, lambda: CONVT[2](x, w, b.astype(np.float64), groups=2), "bias")


def test_dtype_mismatch_convolution():
    x, w, b = good(2)
    expect(TypeError, lambda: cconv.convolution(x, w.astype(np.float64), b, [1, 1], [0, 0], [1, 1],
                                                False, [0, 0], 2), ("weight", "input"))


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.bool_])
def test_integer_and_bool_arrays(dt):
    x, w, b = good(2)
    # all three of the same (unsupported) dtype: the dtype itself is the error
    msg = expect(TypeError, lambda: CONV[2](x.astype(dt), w.astype(dt), b.astype(dt), groups=2),
                 ("input", "dtype"))
    assert np.dtype(dt).name in msg


@pytest.mark.parametrize("which", ["input", "weight"])
def test_integer_weight_or_input_with_float_other(which):
    x, w, _ = good(2)
    if which == "input":
        x = x.astype(np.int32)
    else:
        w = w.astype(np.int32)
    expect(TypeError, lambda: CONV[2](x, w, groups=2), ("input", "weight"))


def test_object_arrays():
    x, w, b = good(2)
    expect(TypeError, lambda: CONV[2](x.astype(object), w.astype(object), b.astype(object), groups=2),
           ("input", "dtype", "object"))
    expect(TypeError, lambda: CONV[2](x, w.astype(object), groups=2), ("weight", "object"))


# long double only where it is wider than float64 (x86-64 Linux: it is)
OTHER_DTYPES = [d for d in (np.longdouble, np.clongdouble)
                if np.dtype(d) not in (np.dtype(np.float64), np.dtype(np.complex128))] + ["U1", "datetime64[s]"]


@pytest.mark.parametrize("dt", OTHER_DTYPES, ids=[np.dtype(d).name for d in OTHER_DTYPES])
def test_other_unsupported_dtypes(dt):
    x, w, _ = good(2)
    xx = np.ones(x.shape, np.int64).astype(dt)
    ww = np.ones(w.shape, np.int64).astype(dt)
    expect(TypeError, lambda: CONV[2](xx, ww, None, groups=2), ("input", "dtype"))


def test_none_input():
    _, w, b = good(2)
    expect(TypeError, lambda: CONV[2](None, w, b, groups=2), "input")
    x, _, _ = good(2)
    expect(TypeError, lambda: CONV[2](x, None, b, groups=2), "weight")


def test_integer_transposed():
    x, w, b = good(2, True)
    expect(TypeError, lambda: CONVT[2](x.astype(np.int64), w.astype(np.int64), None, groups=2),
           ("input", "dtype"))


# ------------------------------------------------------------------ absurd sizes (subprocess)

ABSURD = {
    # padded input 5 + 2**63 overflows int64
    "pad_2p62_1d": "conv1d(f32(1, 1, 5), f32(1, 1, 3), padding=2**62)",
    "pad_2p63_1d": "conv1d(f32(1, 1, 5), f32(1, 1, 3), padding=2**63)",
    "pad_2p64_1d": "conv1d(f32(1, 1, 5), f32(1, 1, 3), padding=2**64)",
    # output elements (2**32)**2 = 2**64 overflow
    "pad_2p31_2d": "conv2d(f32(1, 1, 5, 5), f32(1, 1, 1, 1), padding=2**31)",
    # 2**48 output elements: 1 PiB, cannot be allocated
    "pad_2p23_2d": "conv2d(f32(1, 1, 5, 5), f32(1, 1, 1, 1), padding=2**23)",
    "pad_2p16_3d": "conv3d(f32(1, 1, 2, 2, 2), f32(1, 1, 1, 1, 1), padding=2**16)",
    # dilated kernel 2**63 + 1 overflows
    "dilation_2p62": "conv1d(f32(1, 1, 5), f32(1, 1, 3), dilation=2**62)",
    "dilation_pad_2p62": "conv1d(f32(1, 1, 5), f32(1, 1, 3), dilation=2**62, padding=2**62)",
    "dilation_2p63": "conv1d(f32(1, 1, 5), f32(1, 1, 3), dilation=2**63)",
    # transposed output (5 - 1) * 2**62 overflows
    "tstride_2p62": "conv_transpose1d(f32(1, 1, 5), f32(1, 1, 3), stride=2**62)",
    "tstride_op": "conv_transpose1d(f32(1, 1, 5), f32(1, 1, 3), stride=2**61, output_padding=2**61 - 1)",
    "tstride_2p31_2d": "conv_transpose2d(f32(1, 1, 5, 5), f32(1, 1, 1, 1), stride=2**31)",
    "tdilation_2p62": "conv_transpose1d(f32(1, 1, 5), f32(1, 1, 3), dilation=2**62)",
    # groups far beyond the channels: the product weight.shape[1] * groups overflows
    "groups_2p62": "conv1d(f32(1, 4, 5), f32(4, 2, 3), groups=2**62)",
    "groups_2p63": "conv1d(f32(1, 4, 5), f32(4, 2, 3), groups=2**63)",
    # zero-stride inputs of huge logical shape: the result cannot be allocated
    "broadcast_2d": "conv2d(big((2**16, 1, 2**16, 2**16)), f32(1, 1, 1, 1))",
    "broadcast_1d_channels": "conv1d(big((2**24, 4, 2**24)), f32(1, 4, 1))",
    "broadcast_kernel": "conv1d(big((1, 1, 2**50)), f32(1, 1, 2**10))",
    "broadcast_transposed": "conv_transpose1d(big((2**24, 1, 2**24)), f32(1, 1, 2))",
    "broadcast_depthwise": "conv2d(big((2**14, 4, 2**17, 2**17)), f32(4, 1, 3, 3), groups=4)",
    "depthwise_pad": "conv2d(f32(1, 4, 5, 5), f32(4, 1, 3, 3), groups=4, padding=2**31)",
    "winograd_shape_pad": "conv2d(f32(1, 4, 5, 5), f32(4, 1, 3, 3), groups=4, padding=2**23)",
    "broadcast_f64": "conv2d(big((2**16, 1, 2**16, 2**16), np.float64), np.ones((1, 1, 1, 1)))",
    "broadcast_complex": "conv2d(big((2**16, 1, 2**16, 2**16), np.complex64), np.ones((1, 1, 1, 1), np.complex64))",
    "broadcast_f16": "conv2d(big((2**16, 1, 2**16, 2**16), np.float16), np.ones((1, 1, 1, 1), np.float16))",
    "broadcast_unbatched": "conv1d(big((1, 2**52)), f32(1, 1, 2))",
}

_ABSURD_PRELUDE = textwrap.dedent("""
    import numpy as np, cconv
    from cconv import *
    def f32(*shape):
        return np.ones(shape, np.float32)
    def big(shape, dtype=np.float32):
        return np.broadcast_to(np.ones((1,) * len(shape), dtype), shape)
""")


@pytest.mark.parametrize("name", sorted(ABSURD))
def test_absurd_sizes_no_crash(name, tmp_path):
    code = _ABSURD_PRELUDE + textwrap.dedent(f"""
        try:
            y = {ABSURD[name]}
        except (ValueError, MemoryError) as e:
            print("RESULT", type(e).__name__, e)
        except BaseException as e:
            print("RESULT unexpected", type(e).__name__, e)
        else:
            print("RESULT no error, shape", y.shape)
    """)
    try:
        r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, OMP_NUM_THREADS="2"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{ABSURD[name]} hung (> 120 s) instead of raising ValueError or MemoryError")
    if r.returncode < 0:
        pytest.fail(f"{ABSURD[name]} crashed the interpreter (signal {-r.returncode}):\n{r.stderr[-3000:]}")
    assert r.returncode == 0, r.stderr[-3000:]
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT")]
    assert line, r.stdout + r.stderr
    assert line[-1].startswith(("RESULT ValueError", "RESULT MemoryError")), (
        f"{ABSURD[name]}: expected ValueError or MemoryError, got {line[-1]}")
    if line[-1].startswith("RESULT ValueError"):
        # the message should say what is too large
        msg = line[-1].lower()
        words = ("padding", "stride", "dilation", "groups", "output", "size", "overflow", "kernel",
                 "input", "weight", "64-bit", "large")
        assert any(a in msg for a in words), msg


def test_huge_stride_is_fine(tmp_path):
    # a stride far beyond the input is no error in PyTorch (one output position);
    # near the int64 limit cconv may instead refuse it with a ValueError
    code = _ABSURD_PRELUDE + textwrap.dedent("""
        x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
        y = conv1d(x, f32(1, 1, 3), stride=2**31)
        assert y.shape == (1, 1, 1) and float(y[0, 0, 0]) == 3.0, y
        y = conv_transpose1d(x[:, :, :1], f32(1, 1, 3), stride=2**31)
        assert y.shape == (1, 1, 3) and (y == 0).all(), y
        for s in (2**62, 2**63 - 1, 2**63, 2**64):
            try:
                y = conv1d(x, f32(1, 1, 3), stride=s)
            except ValueError as e:
                assert "stride" in str(e), e
            else:
                assert y.shape == (1, 1, 1) and float(y[0, 0, 0]) == 3.0, (s, y)
        print("DONE")
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode >= 0, f"crashed (signal {-r.returncode}):\n{r.stderr[-3000:]}"
    assert r.returncode == 0 and "DONE" in r.stdout, r.stderr[-3000:]
