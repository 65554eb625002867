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


def _source_folder_error(err: ImportError) -> ImportError:
    """The error for an import of the source folder ``cconv/`` (which has
    no compiled modules and no ``_version.py``: the build writes those)
    instead of the installed package, e.g. ``python -c 'import cconv'`` run
    from the repository root next to a regular install."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(here, "_version.py.in")):
        return err
    return ImportError(
        f"cconv: cannot import cconv from its source folder {here}: it has no compiled modules "
        f"(the build makes them). Import the installed package instead: run Python from another "
        f"directory than the repository root (the `cconv` and `pytest` commands work from "
        f"anywhere), or install from this folder with `pip install .` (or, for development, "
        f"`pip install --no-build-isolation -e .`). ({type(err).__name__}: {err})"
    )


try:
    from ._version import __version__ as _built_version
    from . import _kernels as _kernels  # noqa: F401  (the compiled core)
except ImportError as _e:
    raise _source_folder_error(_e) from None

#: the version, from meson.build's project version (written by the build)
__version__: str = _built_version

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
from . import _kind, _tuning  # noqa: E402

_kind.load_at_import()
_tuning.load_at_import()

__all__ = [
    "__version__",
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
