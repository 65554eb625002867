"""Argument normalisation and every shape check, done once per call.

``make_params`` turns the user's arguments into a frozen ``ConvParams``
(output shape included) or raises ``ValueError``/``TypeError`` naming the
offending argument, the way PyTorch's ``_convolution`` and
``check_shape_forward`` do, before any kernel runs.
"""
from __future__ import annotations

import dataclasses
import functools
import operator
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

__all__ = ["ConvParams", "make_params", "normalize_int_tuple", "PaddingStringError"]

_INT64_MAX = (1 << 63) - 1


class PaddingStringError(ValueError, TypeError):
    """A padding string where none is allowed (transposed convolutions).

    PyTorch raises ``TypeError`` here (its argument parser) while cconv's
    rule is ``ValueError`` for bad parameters: this is both."""


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _as_int(name: str, v: Any, fn: str, what: str = "an int or a tuple of ints") -> int:
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{fn}: {name} must be {what}, but got a bool ({v!r})")
    try:
        r = operator.index(v)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be {what}, but got {type(v).__name__} ({v!r})") from None
    if not -_INT64_MAX - 1 <= r <= _INT64_MAX:
        # PyTorch's argument parser: "Overflow when unpacking long long"
        raise ValueError(f"{fn}: {name} value {r} does not fit a 64-bit integer")
    return r


def check_flag(fn: str, name: str, v: Any) -> bool:
    """A bool argument (True/False, NumPy bools, 0 or 1); TypeError naming
    it for anything else (a string such as "no" is not read as True)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)) and int(v) in (0, 1):
        return bool(v)
    raise TypeError(f"{fn}: {name} must be a bool, but got {type(v).__name__} ({v!r})")


def normalize_int_tuple(name: str, value: Any, nsp: int, fn: str) -> tuple[int, ...]:
    """An int, or a list/tuple of 1 or ``nsp`` ints, as a tuple of ``nsp`` ints."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        vals = tuple(_as_int(name, v, fn) for v in value)
        if len(vals) == 1:
            return vals * nsp
        if len(vals) != nsp:
            raise ValueError(
                f"{fn}: expected {name} to be a single integer value or a list of {nsp} values "
                f"to match the convolution dimensions, but got {name}={list(vals)}"
            )
        return vals
    return (_as_int(name, value, fn),) * nsp


@dataclass(frozen=True)
class ConvParams:
    """One convolution problem, in the user's view (see docs/design.md).

    Shapes are batched: input ``(batch, c_in, *in_size)``, weight
    ``(c_out, c_in // groups, *kernel)`` or, transposed,
    ``(c_in, c_out // groups, *kernel)``, output ``(batch, c_out, *out_size)``.
    Immutable; its hash and plain geometry are computed once, at creation
    (every call looks its problem up in the dispatch caches: hashing 16
    fields anew took about 1.5 us).
    """

    nsp: int
    transposed: bool
    batch: int
    c_in: int
    c_out: int
    groups: int
    in_size: tuple[int, ...]
    out_size: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    pad_before: tuple[int, ...]
    pad_after: tuple[int, ...]
    dilation: tuple[int, ...]
    output_padding: tuple[int, ...]
    dtype: Any = None
    _geom: tuple = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._derive()

    def _derive(self) -> None:
        object.__setattr__(self, "_geom", self._make_geom())
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f.name) for f in _FIELDS)))

    def __hash__(self) -> int:
        return self._hash

    def __getstate__(self) -> dict:
        # the fields only: the derived values are recomputed where the
        # object lands (hashes of some field types differ between processes)
        return {f.name: getattr(self, f.name) for f in _FIELDS}

    def __setstate__(self, state: dict) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)
        self._derive()

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (self.batch, self.c_in) + self.in_size

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.batch, self.c_out) + self.out_size

    @property
    def weight_shape(self) -> tuple[int, ...]:
        if self.transposed:
            return (self.c_in, self.c_out // self.groups) + self.kernel
        return (self.c_out, self.c_in // self.groups) + self.kernel

    @property
    def is_depthwise(self) -> bool:
        """groups == C_in >= 2 of the plain convolution (any multiplier)."""
        cin = self.c_out if self.transposed else self.c_in
        return self.groups >= 2 and self.groups == cin

    @property
    def is_single_channel(self) -> bool:
        """One input channel of the plain convolution (groups == C_in == 1):
        a bank of filters over one signal, image or volume, which is also a
        depthwise convolution of channel multiplier C_out."""
        cin = self.c_out if self.transposed else self.c_in
        return self.groups == 1 and cin == 1

    def with_dtype(self, dtype) -> "ConvParams":
        """The same problem computed in ``dtype`` (itself when it is)."""
        dtype = np.dtype(dtype)
        if self.dtype is not None and self.dtype == dtype:  # (NumPy: None == float64)
            return self
        return dataclasses.replace(self, dtype=dtype)

    def flops(self) -> int:
        """Multiply-adds x 2 of the direct convolution."""
        k = int(np.prod(self.kernel))
        if self.transposed:
            return 2 * self.batch * self.c_in * int(np.prod(self.in_size)) * (self.c_out // self.groups) * k
        return 2 * self.batch * self.c_out * int(np.prod(self.out_size)) * (self.c_in // self.groups) * k

    def geom(self) -> tuple:
        """The plain-convolution geometry of src/cconv.h, padded to 3-D:
        ``(batch, groups, c_in, c_out, in3, out3, k3, stride3, pad3, dil3)``
        (for a transposed convolution, the plain one it is the adjoint of)."""
        return self._geom

    def _make_geom(self) -> tuple:
        lead = 3 - self.nsp

        def pad3(t, fill):
            return (fill,) * lead + tuple(t)

        if self.transposed:
            c_in, c_out, im, co = self.c_out, self.c_in, self.out_size, self.in_size
        else:
            c_in, c_out, im, co = self.c_in, self.c_out, self.in_size, self.out_size
        return (
            self.batch,
            self.groups,
            c_in,
            c_out,
            pad3(im, 1),
            pad3(co, 1),
            pad3(self.kernel, 1),
            pad3(self.stride, 1),
            pad3(self.pad_before, 0),
            pad3(self.dilation, 1),
        )


_FIELDS = tuple(f for f in dataclasses.fields(ConvParams) if f.init)


def _check_size(what: str, shape: Sequence[int]) -> None:
    n = 1
    for s in shape:
        if s > _INT64_MAX:
            raise ValueError(f"{what} size {tuple(shape)} does not fit 64-bit indexing")
        n *= s
    if n > _INT64_MAX:
        raise ValueError(
            f"{what} of shape {tuple(shape)} has {n} elements, more than 64-bit indexing allows"
        )


def _check_numpy_size(what: str, shape: Sequence[int], itemsize: int) -> None:
    """NumPy cannot make an array whose non-zero sizes multiply to more
    bytes than an intp holds, even when another size is 0 (PyTorch can): a
    ValueError naming the shape, not NumPy's "array is too big" from deep
    inside a call."""
    n = itemsize
    for s in shape:
        if s:
            n *= s
    if n > _INT64_MAX:
        raise ValueError(
            f"{what} of shape {tuple(shape)} cannot be a NumPy array: its non-zero sizes "
            f"multiply to more than {_INT64_MAX} bytes (NumPy's limit, even for an array with no "
            f"elements)"
        )


_ZERO_OUT_DTYPES = (np.dtype(np.float32), np.dtype(np.complex64))


@functools.lru_cache(maxsize=None)
def half_on_mkldnn() -> bool:
    """Whether PyTorch's CPU backend choice runs every float16 convolution on
    mkldnn on this machine (ConvParams::use_mkldnn: its fp16 device check,
    true on x86 CPUs of oneDNN's avx512_core_fp16 level, i.e. with
    AVX512-FP16, and on ARM CPUs with half-precision arithmetic), where an
    empty transposed result is allowed as for float32.  Read from
    /proc/cpuinfo once; False where it cannot be read."""
    import platform

    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return False
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            flags.update(line.split(":", 1)[1].split())
            break
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return {"avx512_fp16", "avx512_bf16", "avx512bw", "avx512vl", "avx512dq"} <= flags
    if machine in ("aarch64", "arm64"):
        return {"fphp", "asimdhp"} <= flags
    return False


def _layout_hint(input_shape: tuple, weight_shape: tuple, groups: int, transposed: bool) -> str:
    """A hint for a channel mismatch that a channels-last array explains:
    an input in NHWC order (channels last) or a weight in HWIO order
    (TensorFlow/Keras's, kernel first), as arrays ported from those
    frameworks often are.  Empty when neither reading fits."""
    nsp = len(weight_shape) - 2
    c_in_w = weight_shape[0] if transposed else weight_shape[1] * groups
    hints = []
    if len(input_shape) == nsp + 2 and input_shape[-1] == c_in_w:
        perm = (0, nsp + 1) + tuple(range(1, nsp + 1))
        hints.append(f"the input looks channels-last (N, *spatial, C); cconv takes (N, C, *spatial) "
                     f"as PyTorch: pass x.transpose{perm}")
    if not transposed and groups == 1 and nsp >= 1 and weight_shape[-2] == input_shape[1]:
        # HWIO: (*kernel, C_in, C_out) -> OIHW: (C_out, C_in, *kernel)
        perm = (nsp + 1, nsp) + tuple(range(nsp))
        hints.append(f"the weight looks like (*kernel, C_in, C_out) (HWIO, as TensorFlow/Keras); "
                     f"cconv takes (C_out, C_in // groups, *kernel) as PyTorch: pass "
                     f"w.transpose{perm}")
    return (" (" + "; or ".join(hints) + ")") if hints else ""


def _mkldnn_transposed(batch, c_in, in_size, kernel, groups, stride, output_padding,
                       dilation) -> bool:
    """Whether PyTorch's CPU backend choice (ConvParams::use_mkldnn) runs a
    float32 transposed convolution on mkldnn: not when an output padding
    reaches its stride; not for a kernel of 1 x 1 in its last two sizes
    (1-D seen as 2-D of height 1), no stride or dilation above 1 and a batch
    below 16 on one thread (cconv's count: PyTorch asks its OpenMP runtime,
    which a process shares with cconv, so the two agree where both run);
    else when it is grouped, the kernel's last two sizes both exceed 3, the
    batch exceeds 1, or the first four sizes of the input multiply to more
    than 20480."""
    if any(op >= s for op, s in zip(output_padding, stride)):
        return False
    k2 = (1,) * max(0, 2 - len(kernel)) + tuple(kernel)
    if k2[-1] == 1 and k2[-2] == 1 and batch < 16 and all(s == 1 for s in stride) and all(
            d == 1 for d in dilation):
        from ._config import get_num_threads  # (not at the top: _params needs no extension)
        if get_num_threads() <= 1:
            return False
    dims = (batch, c_in) + (1,) * max(0, 2 - len(in_size)) + tuple(in_size)
    return (groups > 1 or (k2[-1] > 3 and k2[-2] > 3) or batch > 1
            or dims[0] * dims[1] * dims[2] * dims[3] > 20480)


def make_params(
    input_shape: Sequence[int],
    weight_shape: Sequence[int],
    bias_shape: Sequence[int] | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: Any,
    fn: str,
    dtype: Any = None,
    user_dtype: Any = None,
) -> ConvParams:
    """Check every argument and compute the output shape (batched shapes).
    ``dtype`` is the dtype the kernels run in; ``user_dtype`` the caller's
    (defaults to ``dtype``), which decides one PyTorch rule below."""
    input_shape = tuple(int(s) for s in input_shape)
    weight_shape = tuple(int(s) for s in weight_shape)
    wdim = len(weight_shape)
    if wdim < 3 or wdim > 5:
        raise ValueError(
            f"{fn}: weight must have 3, 4 or 5 dimensions (1-D, 2-D or 3-D convolution), "
            f"but got weight of size {_fmt(weight_shape)}"
        )
    nsp = wdim - 2
    if len(input_shape) != wdim:
        raise ValueError(
            f"{fn}: expected {wdim}-dimensional input for {wdim}-dimensional weight "
            f"{_fmt(weight_shape)}, but got {len(input_shape)}-dimensional input of size "
            f"{_fmt(input_shape)} instead"
        )
    groups = _as_int("groups", groups, fn, "an int")
    if groups <= 0:
        raise ValueError(f"{fn}: non-positive groups is not supported (groups={groups})")
    stride = normalize_int_tuple("stride", stride, nsp, fn)
    dilation = normalize_int_tuple("dilation", dilation, nsp, fn)
    output_padding = normalize_int_tuple("output_padding", output_padding, nsp, fn)
    if any(s <= 0 for s in stride):
        raise ValueError(f"{fn}: non-positive stride is not supported (stride={list(stride)})")
    if any(d <= 0 for d in dilation):
        raise ValueError(f"{fn}: non-positive dilation is not supported (dilation={list(dilation)})")
    if any(o < 0 for o in output_padding):
        raise ValueError(
            f"{fn}: negative output_padding is not supported (output_padding={list(output_padding)})"
        )
    kernel = weight_shape[2:]
    if isinstance(padding, str):
        if transposed:
            raise PaddingStringError(
                f"{fn}: padding must be an int or a tuple of ints for a transposed convolution, "
                f"but got the string {padding!r}"
            )
        if padding == "valid":
            pad_before = pad_after = (0,) * nsp
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(
                    f"{fn}: padding='same' is not supported for strided convolutions "
                    f"(stride={list(stride)})"
                )
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            pad_before = tuple(t // 2 for t in total)
            pad_after = tuple(t - t // 2 for t in total)
        else:
            raise ValueError(
                f"{fn}: Invalid padding string: {padding!r}; expected 'same', 'valid', an int or a tuple of ints"
            )
    else:
        pad_before = normalize_int_tuple("padding", padding, nsp, fn)
        if any(p < 0 for p in pad_before):
            raise ValueError(f"{fn}: negative padding is not supported (padding={list(pad_before)})")
        pad_after = pad_before

    batch, c_in_x = input_shape[0], input_shape[1]
    in_size = input_shape[2:]
    if batch != 0 and c_in_x != 0 and any(i == 0 for i in in_size):
        raise ValueError(
            f"{fn}: input of size {_fmt(input_shape)} has an empty spatial dimension; only zero "
            f"batch or zero channel inputs are supported"
        )
    if transposed:
        if weight_shape[0] < 1:
            raise ValueError(
                f"{fn}: Given groups={groups}, expected weight to be at least 1 at dimension 0, "
                f"but got weight of size {_fmt(weight_shape)} instead"
            )
        if weight_shape[0] % groups != 0:
            raise ValueError(
                f"{fn}: Given groups={groups}, expected weight to be divisible by {groups} at "
                f"dimension 0, but got weight of size {_fmt(weight_shape)} instead"
            )
        if c_in_x != weight_shape[0]:
            raise ValueError(
                f"{fn}: Given transposed=1, weight of size {_fmt(weight_shape)}, expected "
                f"input{_fmt(input_shape)} to have {weight_shape[0]} channels, but got {c_in_x} "
                f"channels instead{_layout_hint(input_shape, weight_shape, groups, True)}"
            )
        if weight_shape[1] < 1:
            # PyTorch rejects this whatever the batch, dtype or groups
            raise ValueError(
                f"{fn}: expected a non-empty weight, but got weight of size {_fmt(weight_shape)} "
                f"(zero output channels per group, dimension 1)"
            )
        c_out = weight_shape[1] * groups
        for i in range(nsp if batch else 0):
            # (a batch of 0 runs ATen's Empty backend, which checks no
            # output padding: the result is the empty array)
            if not (output_padding[i] < stride[i] or output_padding[i] < dilation[i]):
                raise ValueError(
                    f"{fn}: output_padding must be smaller than either stride or dilation, but got "
                    f"output_padding={list(output_padding)}, stride={list(stride)}, "
                    f"dilation={list(dilation)}"
                )
    else:
        if weight_shape[0] < 1:
            raise ValueError(
                f"{fn}: Given groups={groups}, expected weight to be at least 1 at dimension 0, "
                f"but got weight of size {_fmt(weight_shape)} instead"
            )
        if weight_shape[0] % groups != 0:
            raise ValueError(
                f"{fn}: Given groups={groups}, expected weight to be divisible by {groups} at "
                f"dimension 0, but got weight of size {_fmt(weight_shape)} instead"
            )
        if c_in_x != weight_shape[1] * groups:
            raise ValueError(
                f"{fn}: Given groups={groups}, weight of size {_fmt(weight_shape)}, expected "
                f"input{_fmt(input_shape)} to have {weight_shape[1] * groups} channels, but got "
                f"{c_in_x} channels instead{_layout_hint(input_shape, weight_shape, groups, False)}"
            )
        c_out = weight_shape[0]
        output_padding = (0,) * nsp  # ignored by a plain convolution, as in PyTorch
    if bias_shape is not None:
        bias_shape = tuple(int(s) for s in bias_shape)
        if len(bias_shape) != 1 or bias_shape[0] != c_out:
            raise ValueError(
                f"{fn}: Given weight of size {_fmt(weight_shape)}, expected bias to be 1-dimensional "
                f"with {c_out} elements, but got bias of size {_fmt(bias_shape)} instead"
            )

    if transposed:
        out_size = tuple(
            (i - 1) * s - pb - pa + d * (k - 1) + op + 1
            for i, s, pb, pa, d, k, op in zip(in_size, stride, pad_before, pad_after, dilation, kernel, output_padding)
        )
        # PyTorch allows an output size of 0 (an empty result) when there is
        # no batch, and also where its CPU backend choice takes the mkldnn
        # path, which has no size check: float32 and complex64 (as float32
        # parts) transposed convolutions that _mkldnn_transposed says, and
        # float16 ones without an output padding reaching its stride on CPUs
        # where it runs float16 on mkldnn (half_on_mkldnn); every other case
        # runs the "output size is too small" check.  Negative sizes are
        # always errors.
        udt = user_dtype if user_dtype is not None else dtype
        udt = None if udt is None else np.dtype(udt)
        # (torch.convolution itself checks the size of a complex64 one, where
        # the conv_transpose functions take the float32 rule)
        zero_dtypes = _ZERO_OUT_DTYPES[:1] if fn == "convolution" else _ZERO_OUT_DTYPES
        zero_ok = batch == 0 or (
            udt in zero_dtypes
            and _mkldnn_transposed(batch, c_in_x, in_size, kernel, groups, stride, output_padding,
                                   dilation)
        ) or (
            udt == np.float16 and half_on_mkldnn()
            and not any(op >= s for op, s in zip(output_padding, stride)))
        empty_ok = zero_ok and all(o >= 0 for o in out_size)
        if not empty_ok and (any(i < 1 for i in in_size) or any(o < 1 for o in out_size)):
            raise ValueError(
                f"{fn}: Given input size per channel: {tuple(in_size)}, the calculated output size "
                f"per channel is {out_size}: output size is too small (input, padding={list(pad_before)}, "
                f"kernel size {tuple(kernel)})"
            )
    else:
        padded = tuple(i + pb + pa for i, pb, pa in zip(in_size, pad_before, pad_after))
        dk = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
        if any(p < k for p, k in zip(padded, dk)):
            raise ValueError(
                f"{fn}: Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, dk))}). Kernel size can't be greater than "
                f"actual input size (input of size {_fmt(input_shape)}, weight of size "
                f"{_fmt(weight_shape)}, padding={list(pad_before)}, dilation={list(dilation)})"
            )
        out_size = tuple((p - k) // s + 1 for p, k, s in zip(padded, dk, stride))
    if any(k < 1 for k in kernel):
        raise ValueError(f"{fn}: weight of size {_fmt(weight_shape)} has an empty kernel")
    if not transposed and c_in_x == 0:
        c_out = 0  # ATen's Empty backend: (N, 0, *out)
    _check_size(f"{fn}: output", (batch, c_out) + out_size)
    _check_size(f"{fn}: input", input_shape)
    # the result, or a float32 temporary of its shape (float16 is computed
    # in float32), must be a NumPy array
    udt_any = user_dtype if user_dtype is not None else dtype
    isz = 16 if udt_any is None else max(np.dtype(udt_any).itemsize, 4)
    _check_numpy_size(f"{fn}: output", (batch, c_out) + out_size, isz)
    if not transposed:
        # one output along a dimension: its stride is never applied, so a
        # stride of 2^62 there computes what PyTorch does (a fuzz against
        # torch: conv1d of 5 values with stride=2**62 was "too large for
        # 64-bit indexing", torch gives the one output)
        stride = tuple(1 if o == 1 else s for s, o in zip(stride, out_size))
    for name, vals in (("stride", stride), ("padding", pad_before), ("dilation", dilation)):
        if any(v > _INT64_MAX // 4 for v in vals):
            raise ValueError(f"{fn}: {name}={list(vals)} is too large for 64-bit indexing")
    return ConvParams(
        nsp=nsp,
        transposed=bool(transposed),
        batch=batch,
        c_in=c_in_x,
        c_out=c_out,
        groups=groups,
        in_size=in_size,
        out_size=out_size,
        kernel=kernel,
        stride=stride,
        pad_before=pad_before,
        pad_after=pad_after,
        dilation=dilation,
        output_padding=output_padding,
        dtype=None if dtype is None else np.dtype(dtype),
    )
