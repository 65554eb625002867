"""The benchmark layers, shared by the asv suites and benches/compare.py.

Each case is one convolution from a well-known network, at a batch size that
keeps one call in the milliseconds-to-tens-of-milliseconds range on a small
machine.  Only NumPy is imported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Case:
    name: str
    batch: int
    c_in: int
    c_out: int
    size: tuple                 # input spatial size
    kernel: tuple
    stride: int = 1
    padding: int = 0
    dilation: int = 1
    groups: int = 1
    transposed: bool = False
    output_padding: int = 0
    note: str = ""

    @property
    def nsp(self):
        return len(self.size)

    @property
    def func_name(self):
        return f"conv{'_transpose' if self.transposed else ''}{self.nsp}d"

    def tup(self, v):
        return (v,) * self.nsp if isinstance(v, int) else tuple(v)

    def weight_shape(self):
        if self.transposed:
            return (self.c_in, self.c_out // self.groups) + tuple(self.kernel)
        return (self.c_out, self.c_in // self.groups) + tuple(self.kernel)

    def out_size(self):
        s, p, d, op = (self.tup(v) for v in (self.stride, self.padding, self.dilation, self.output_padding))
        out = []
        for i, n in enumerate(self.size):
            ext = d[i] * (self.kernel[i] - 1) + 1
            if self.transposed:
                out.append((n - 1) * s[i] - 2 * p[i] + ext + op[i])
            else:
                out.append((n + 2 * p[i] - ext) // s[i] + 1)
        return tuple(out)

    def input_shape(self):
        return (self.batch, self.c_in) + tuple(self.size)

    def output_shape(self):
        return (self.batch, self.c_out) + self.out_size()

    def flops(self):
        """2 x multiply-adds of the forward convolution (bias not counted)."""
        k = math.prod(self.kernel)
        if self.transposed:
            return 2 * self.batch * self.c_in * math.prod(self.size) * (self.c_out // self.groups) * k
        return 2 * self.batch * self.c_out * math.prod(self.out_size()) * (self.c_in // self.groups) * k

    def arrays(self, dtype="float32", seed=0):
        """(x, w, b, grad_output), standard normal (w scaled by 1/sqrt(fan_in))."""
        dt = np.dtype(dtype)
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(self.input_shape()).astype(dt)
        w = rng.standard_normal(self.weight_shape()).astype(dt)
        w *= dt.type(1.0 / math.sqrt(math.prod(w.shape[1:])))
        b = rng.standard_normal(self.c_out).astype(dt)
        gy = rng.standard_normal(self.output_shape()).astype(dt)
        return x, w, b, gy

    def kwargs(self):
        """Keyword arguments of conv{n}d / conv_transpose{n}d (cconv and torch alike)."""
        kw = dict(stride=self.stride, padding=self.padding, dilation=self.dilation, groups=self.groups)
        if self.transposed:
            kw["output_padding"] = self.output_padding
        return kw

    def conv_args(self):
        """(stride, padding, dilation, transposed, output_padding, groups) as
        torch.convolution / convolution_backward take them (tuples)."""
        return (self.tup(self.stride), self.tup(self.padding), self.tup(self.dilation),
                self.transposed, self.tup(self.output_padding), self.groups)

    def describe(self):
        sz = "x".join(map(str, self.size))
        ks = "x".join(map(str, self.kernel))
        s = f"{self.batch}x{self.c_in}x{sz}->{self.c_out} k{ks}"
        for tag, v, dflt in (("s", self.stride, 1), ("p", self.padding, 0), ("d", self.dilation, 1),
                             ("g", self.groups, 1), ("op", self.output_padding, 0)):
            if v != dflt:
                s += f" {tag}{v}"
        return s


_ALL = [
    # plain 2-D, ResNet-50
    Case("resnet50_3x3", 4, 128, 128, (28, 28), (3, 3), padding=1, note="ResNet-50 layer2 3x3"),
    Case("resnet50_1x1", 4, 256, 64, (56, 56), (1, 1), note="ResNet-50 layer1 1x1 reduce"),
    Case("resnet50_3x3_s2", 4, 128, 128, (56, 56), (3, 3), stride=2, padding=1,
         note="ResNet-50 v1.5 downsampling 3x3"),
    Case("resnet50_stem", 8, 3, 64, (224, 224), (7, 7), stride=2, padding=3, note="ResNet-50 7x7 stem"),
    # grouped / dilated 2-D
    Case("resnext_32x4d", 8, 128, 128, (56, 56), (3, 3), padding=1, groups=32,
         note="ResNeXt-50 32x4d stage-1 grouped 3x3"),
    Case("resnext_28_s2", 8, 256, 256, (56, 56), (3, 3), stride=2, padding=1, groups=32,
         note="ResNeXt-50 32x4d stage-2 first block, grouped 3x3 s2 (8 ch/group)"),
    Case("resnext_28", 8, 256, 256, (28, 28), (3, 3), padding=1, groups=32,
         note="ResNeXt-50 32x4d stage-2 grouped 3x3 (8 ch/group)"),
    Case("resnext_14", 8, 512, 512, (14, 14), (3, 3), padding=1, groups=32,
         note="ResNeXt-50 32x4d stage-3 grouped 3x3 (16 ch/group)"),
    Case("deeplab_dilated", 1, 256, 256, (33, 33), (3, 3), padding=2, dilation=2,
         note="DeepLab atrous 3x3 d=2"),
    # depthwise 2-D, MobileNetV2
    Case("mbv2_dw_s1_b1", 1, 144, 144, (56, 56), (3, 3), padding=1, groups=144,
         note="MobileNetV2 depthwise 3x3 s1"),
    Case("mbv2_dw_s1_b8", 8, 144, 144, (56, 56), (3, 3), padding=1, groups=144,
         note="MobileNetV2 depthwise 3x3 s1"),
    Case("mbv2_dw_s2_b1", 1, 144, 144, (56, 56), (3, 3), stride=2, padding=1, groups=144,
         note="MobileNetV2 depthwise 3x3 s2"),
    Case("mbv2_dw_s2_b8", 8, 144, 144, (56, 56), (3, 3), stride=2, padding=1, groups=144,
         note="MobileNetV2 depthwise 3x3 s2"),
    # transposed 2-D
    Case("dcgan_tconv", 8, 256, 128, (8, 8), (4, 4), stride=2, padding=1, transposed=True,
         note="DCGAN generator conv_transpose2d k4 s2 p1"),
    Case("unet_tconv", 1, 512, 256, (32, 32), (2, 2), stride=2, transposed=True,
         note="UNet up-convolution 2x2 s2"),
    # 1-D
    Case("wav2vec_conv1d", 1, 512, 512, (1599,), (3,), stride=2, note="wav2vec 2.0 feature encoder conv"),
    Case("tcn_dilated_conv1d", 4, 128, 128, (1024,), (3,), padding=4, dilation=4,
         note="TCN dilated conv1d d=4"),
    Case("conformer_dw_conv1d", 4, 256, 256, (500,), (31,), padding=15, groups=256,
         note="Conformer depthwise conv1d k=31"),
    # 3-D
    Case("c3d_conv3d", 1, 128, 128, (8, 14, 14), (3, 3, 3), padding=1, note="C3D-like 3x3x3"),
    Case("r3d_conv3d_s2", 1, 64, 128, (8, 28, 28), (3, 3, 3), stride=2, padding=1,
         note="R3D-18 downsampling 3x3x3 s2"),
]

CASES = {c.name: c for c in _ALL}

# groupings used by the asv classes
FAMILIES = {
    "conv2d": ["resnet50_3x3", "resnet50_1x1", "resnet50_3x3_s2", "resnet50_stem",
               "resnext_32x4d", "resnext_28_s2", "resnext_28", "resnext_14", "deeplab_dilated"],
    "depthwise": ["mbv2_dw_s1_b1", "mbv2_dw_s1_b8", "mbv2_dw_s2_b1", "mbv2_dw_s2_b8"],
    "transposed": ["dcgan_tconv", "unet_tconv"],
    "conv1d": ["wav2vec_conv1d", "tcn_dilated_conv1d", "conformer_dw_conv1d"],
    "conv3d": ["c3d_conv3d", "r3d_conv3d_s2"],
}
assert sorted(sum(FAMILIES.values(), [])) == sorted(CASES)
