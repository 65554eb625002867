"""The CUDA path: cupy.ndarray inputs on the GPU.

``_cupy``: lazy access to CuPy (``import cconv`` never imports it);
``kernels``: the .cu sources of this folder compiled once per device with
NVRTC (CuPy's RawModule) and their Python front; ``gemm``,
``gemm_transpose``, ``depthwise``: the CUDA_* backends; ``_common``: what
they share.  Nothing in this package imports CuPy at import time.
"""
