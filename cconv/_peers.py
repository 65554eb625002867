"""Other libraries' convolutions, timed next to cconv's by ``cconv bench
--compare``: PyTorch (``torch.nn.functional.conv*``) and ONNX Runtime (a
one-node Conv or ConvTranspose model built in memory).  Each is optional:
:func:`make` says why one cannot run instead of raising.  Nothing here is
imported by ``import cconv``."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._layer import Layer

__all__ = ["PEERS", "make"]

PEERS = ("torch", "onnxruntime")


def _torch(layer: Layer, x, w, b, threads: int, **_opts) -> Callable[[], Any]:
    import torch

    torch.set_num_threads(threads)
    f = getattr(torch.nn.functional, layer.func_name)
    xt, wt, bt = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
    kw = layer.kwargs()

    def run():
        with torch.no_grad():
            return f(xt, wt, bt, **kw)
    return run


def _onnxruntime(layer: Layer, x, w, b, threads: int, spinning: bool = False) -> Callable[[], Any]:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    etype = {np.dtype(np.float32): TensorProto.FLOAT,
             np.dtype(np.float64): TensorProto.DOUBLE}[x.dtype]
    pads = layer.pads()
    attrs = dict(kernel_shape=list(layer.kernel), strides=list(layer.tup(layer.stride)),
                 dilations=list(layer.tup(layer.dilation)), group=layer.groups,
                 pads=[p[0] for p in pads] + [p[1] for p in pads])
    if layer.transposed:
        attrs["output_padding"] = list(layer.tup(layer.output_padding))
    node = helper.make_node("ConvTranspose" if layer.transposed else "Conv", ["X", "W", "B"], ["Y"],
                            **attrs)
    graph = helper.make_graph(
        [node], "cconv_bench_layer",
        [helper.make_tensor_value_info("X", etype, list(x.shape))],
        [helper.make_tensor_value_info("Y", etype, None)],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = min(model.ir_version, 9)
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    # idle intra-op threads sleep instead of spinning (they would hold the
    # cores the next library's call needs), unless the caller times ONNX
    # Runtime in blocks of its own calls, where its default spinning is
    # what a user's loop gets
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feed = {"X": x}

    def run():
        return sess.run(None, feed)[0]
    return run


_MAKERS = {"torch": _torch, "onnxruntime": _onnxruntime}


def make(name: str, layer: Layer, x, w, b, threads: int, **opts) -> tuple[Callable | None, str]:
    """(a call that runs ``layer`` on ``name``, "") or (None, why not);
    ``opts``: ``spinning=True`` keeps ONNX Runtime's idle threads spinning."""
    try:
        return _MAKERS[name](layer, x, w, b, threads, **opts), ""
    except ImportError as e:
        return None, f"not installed ({e.name or e})"
    except KeyError as e:
        return None, f"dtype {e} not supported"
    except Exception as e:  # the peer's own refusal (dtype, operator), reported in the table
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}"
