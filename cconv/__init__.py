"""cconv: convolutions for NumPy (and CuPy) arrays with PyTorch's semantics.

Forward: conv1d/2d/3d, conv_transpose1d/2d/3d, convolution.  Gradients:
convolution_backward, convolution_double_backward, the grad module.  Dispatch:
Backend, select_backend (BackendChoice).  Configuration: set_num_threads,
get_num_threads, show_config, empty_cache, set_benchmark/benchmark; tune and
record_layers (the per-machine tuning file).
"""
# Load scipy-openblas64's library first, so the extension modules resolve
# libscipy_openblas64_.so wherever the two packages are installed.
import scipy_openblas64 as _scipy_openblas64  # noqa: F401

__version__ = "0.1.0"

from ._dispatch import Backend  # noqa: E402
from ._config import empty_cache, get_num_threads, set_num_threads, show_config  # noqa: E402
from ._autotune import benchmark, get_benchmark, set_benchmark  # noqa: E402
from ._functional import (  # noqa: E402
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    convolution,
    select_backend,
)
from ._backward import convolution_backward, convolution_double_backward  # noqa: E402
from . import grad  # noqa: E402
from ._dispatch import BackendChoice  # noqa: E402
from ._tuning import record_layers, tune  # noqa: E402
from . import _tuning  # noqa: E402

_tuning.load_at_import()

__all__ = [
    "Backend",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "convolution",
    "convolution_backward",
    "convolution_double_backward",
    "grad",
    "select_backend",
    "set_num_threads",
    "get_num_threads",
    "show_config",
    "empty_cache",
    "set_benchmark",
    "get_benchmark",
    "benchmark",
    "BackendChoice",
    "tune",
    "record_layers",
]
