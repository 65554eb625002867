"""asv: forward convolution through the public functions (conv1d ... conv_transpose3d).

Run from benches/:  asv run --python=same --set-commit-hash $(git rev-parse HEAD)   (see README.md)
"""

import cconv

from ._cases import CASES, EXTRA, FAMILIES

DTYPES = ["float32", "float64"]


class _Forward:
    family = None
    cases = CASES  # name -> cconv._layer.Layer
    param_names = ["case", "dtype"]
    timeout = 120

    def setup(self, case, dtype):
        c = self.cases[case]
        self.x, self.w, self.b, _ = c.arrays(dtype)
        self.fn = getattr(cconv, c.func_name)
        self.kw = c.kwargs()
        self.fn(self.x, self.w, self.b, **self.kw)      # warm the caches and the workspace

    def time_forward(self, case, dtype):
        self.fn(self.x, self.w, self.b, **self.kw)

    def peakmem_forward(self, case, dtype):
        self.fn(self.x, self.w, self.b, **self.kw)


class Conv2d(_Forward):
    """ResNet-50 3x3 / 1x1 / stride-2 / 7x7 stem, ResNeXt 32x4d grouped, DeepLab dilated."""
    params = [FAMILIES["conv2d"], DTYPES]


class Depthwise2d(_Forward):
    """MobileNetV2 depthwise 3x3, stride 1 and 2, batch 1 and 8."""
    params = [FAMILIES["depthwise"], DTYPES]


class ConvTranspose2d(_Forward):
    """DCGAN k4 s2 p1 and UNet 2x2 s2 up-convolutions."""
    params = [FAMILIES["transposed"], DTYPES]


class Conv1d(_Forward):
    """wav2vec 2.0 encoder conv, TCN dilated conv, Conformer depthwise k=31."""
    params = [FAMILIES["conv1d"], DTYPES]


class Conv3d(_Forward):
    """C3D 3x3x3 and R3D-18 stride-2 3x3x3."""
    params = [FAMILIES["conv3d"], DTYPES]


class Conv3dExtra(_Forward):
    """3-D layers of the extra set (compare.py --extra): a dense 3x3x3 with
    64 channels, a 3-D UNet level, a (2+1)-D 1x3x3 conv (3-D Winograd) and
    an X3D-like strided depthwise 3x3x3 (3-D depthwise plane kernels)."""
    cases = EXTRA
    params = [["conv3d_3x3x3_64", "unet3d_32", "r21d_1x3x3", "x3d_dw_s2"], DTYPES]


class DepthwiseExtra(_Forward):
    """Depthwise layers of the extra set: EfficientNet 5x5 stride 1 (28x28
    planes: the channels-last path) and stride 2, ConvNeXt 7x7, a DeepLab
    dilated 3x3 (channels-last, generic taps) and a depthwise transposed
    k4 s2."""
    cases = EXTRA
    params = [["effnet_dw5_s1", "effnet_dw5_s2", "convnext_dw7", "deeplab_dw_d2", "dw_tconv_k4"],
              DTYPES]
