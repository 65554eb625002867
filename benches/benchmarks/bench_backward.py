"""asv: cconv.convolution_backward with output_mask (True, True, True).

Skipped (NotImplementedError in setup) while cconv has no convolution_backward.
"""

import cconv

from ._cases import CASES, FAMILIES

DTYPES = ["float32", "float64"]
MASK = (True, True, True)


class _Backward:
    param_names = ["case", "dtype"]
    timeout = 180

    def setup(self, case, dtype):
        if not hasattr(cconv, "convolution_backward"):
            raise NotImplementedError("cconv.convolution_backward is not available")
        c = CASES[case]
        self.x, self.w, _, self.gy = c.arrays(dtype)
        self.args = (self.gy, self.x, self.w, [c.c_out]) + c.conv_args() + (MASK,)
        cconv.convolution_backward(*self.args)          # warm up

    def time_backward(self, case, dtype):
        cconv.convolution_backward(*self.args)

    def peakmem_backward(self, case, dtype):
        cconv.convolution_backward(*self.args)


class Conv2dBackward(_Backward):
    params = [FAMILIES["conv2d"], DTYPES]


class Depthwise2dBackward(_Backward):
    params = [FAMILIES["depthwise"], DTYPES]


class ConvTranspose2dBackward(_Backward):
    params = [FAMILIES["transposed"], DTYPES]


class Conv1dBackward(_Backward):
    params = [FAMILIES["conv1d"], DTYPES]


class Conv3dBackward(_Backward):
    params = [FAMILIES["conv3d"], DTYPES]
