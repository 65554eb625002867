"""Layers from well-known networks: the built-in sets that ``cconv tune``
tunes and the repository's benchmarks time (benches/compare.py, the asv
suite).

Each case is one convolution at a batch size that keeps one call in the
milliseconds-to-tens-of-milliseconds range on a small machine.  ``CASES`` is
the default set (the one the speed targets are stated on), ``EXTRA`` a
second, wider set, ``SMALL`` small layers of the kind a model zoo has by the
thousand.
"""

from __future__ import annotations

from ._layer import Layer as Case

__all__ = ["CASES", "EXTRA", "SMALL", "FAMILIES"]


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

# Layers outside the default case set that a wider survey against torch
# covered: depthwise 5x5/7x7/dilated/transposed, small grouped
# layers, stems and patch embeddings, dense 1-D and 3-D layers.  compare.py
# runs them with --extra (apart from the default set, whose geometric
# means the targets are stated on).
_EXTRA = [
    Case("effnet_dw5_s1", 4, 240, 240, (28, 28), (5, 5), padding=2, groups=240,
         note="EfficientNet depthwise 5x5 s1"),
    Case("effnet_dw5_s2", 4, 144, 144, (56, 56), (5, 5), stride=2, padding=2, groups=144,
         note="EfficientNet depthwise 5x5 s2"),
    Case("convnext_dw7", 4, 96, 96, (56, 56), (7, 7), padding=3, groups=96,
         note="ConvNeXt depthwise 7x7"),
    Case("deeplab_dw_d2", 4, 256, 256, (33, 33), (3, 3), padding=2, dilation=2, groups=256,
         note="DeepLabV3+ MobileNet dilated depthwise 3x3 d=2"),
    Case("dw_tconv_k4", 4, 64, 64, (28, 28), (4, 4), stride=2, padding=1, groups=64,
         transposed=True, note="depthwise conv_transpose2d k4 s2"),
    Case("grouped4_3x3", 4, 128, 128, (28, 28), (3, 3), padding=1, groups=4,
         note="4 groups of 32 channels, 3x3"),
    Case("mobilenet_stem", 8, 3, 32, (224, 224), (3, 3), stride=2, padding=1,
         note="MobileNet/EfficientNet stem 3x3 s2"),
    Case("convnext_patchify", 8, 3, 96, (224, 224), (4, 4), stride=4,
         note="ConvNeXt 4x4 s4 patch embedding"),
    Case("vit_patch16", 8, 3, 768, (224, 224), (16, 16), stride=16, note="ViT-B/16 patch embedding"),
    Case("conv1d_k5_64", 16, 64, 64, (2000,), (5,), padding=2, note="1-D 5-tap 64 channels"),
    Case("conv1d_k2_s2", 4, 512, 512, (1000,), (2,), stride=2, note="1-D 2-tap stride-2 downsampling"),
    Case("conv3d_3x3x3_64", 2, 64, 64, (16, 28, 28), (3, 3, 3), padding=1, note="3-D 3x3x3 64 channels"),
    Case("conv3d_stem", 2, 3, 64, (16, 112, 112), (3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3),
         note="video stem 3x7x7 s(1,2,2)"),
    Case("conv1d_tasnet", 8, 1, 16, (16000,), (1024,), stride=256, note="1-channel k1024 s256 encoder"),
    # 3-D layers of the 3-D Winograd path: a 3-D UNet level, a
    # (2+1)-D spatial 1x3x3 conv, and an X3D-like strided 3-D depthwise
    Case("unet3d_32", 1, 32, 32, (32, 64, 64), (3, 3, 3), padding=1, note="3-D UNet 3x3x3 32 channels"),
    Case("r21d_1x3x3", 2, 64, 64, (8, 56, 56), (1, 3, 3), padding=(0, 1, 1),
         note="R(2+1)D spatial 1x3x3 conv"),
    Case("x3d_dw_s2", 1, 96, 96, (16, 56, 56), (3, 3, 3), stride=(1, 2, 2), padding=1, groups=96,
         note="X3D-like depthwise 3x3x3 s(1,2,2)"),
]

EXTRA = {c.name: c for c in _EXTRA}
assert not set(EXTRA) & set(CASES)

# Small layers as a model zoo has them by the thousand (timm, torchvision):
# squeeze-and-excitation 1x1 convolutions on 1x1 maps (EfficientNet,
# MobileNetV3, RegNet), classifier heads, 1x1 projections on 7x7-10x10 and
# 4x4 maps, one image each.  compare.py runs them with --small; their time
# is mostly fixed costs (the Python layer, entering threads), which a busy
# machine (compare.py --busy N) multiplies.
_SMALL = [
    Case("se_256_64", 1, 256, 64, (1, 1), (1, 1), note="SE reduce 256 -> 64 on a 1x1 map"),
    Case("se_32_120", 1, 32, 120, (1, 1), (1, 1), note="SE expand 32 -> 120 (22 timm models)"),
    Case("se_64_256", 1, 64, 256, (1, 1), (1, 1), note="SE expand 64 -> 256"),
    Case("se_16_8", 1, 16, 8, (1, 1), (1, 1), note="MobileNetV3 small SE reduce"),
    Case("head_256_1024", 1, 256, 1024, (1, 1), (1, 1), note="1x1 head 256 -> 1024 on a 1x1 map"),
    Case("head_960_1280", 1, 960, 1280, (1, 1), (1, 1), note="MobileNetV3-large head 960 -> 1280"),
    Case("proj_480_24_10", 1, 480, 24, (10, 10), (1, 1), note="1x1 projection 480 -> 24 on 10x10"),
    Case("pw_96_576_7", 1, 96, 576, (7, 7), (1, 1), note="1x1 expansion 96 -> 576 on 7x7"),
    Case("pw_160_960_7", 1, 160, 960, (7, 7), (1, 1), note="1x1 expansion 160 -> 960 on 7x7"),
    Case("pw_96_24_4", 1, 96, 24, (4, 4), (1, 1), note="1x1 projection 96 -> 24 on 4x4"),
    Case("dw_576_7", 1, 576, 576, (7, 7), (3, 3), padding=1, groups=576, note="depthwise 3x3 on 7x7"),
    Case("conv3x3_64_7", 1, 64, 64, (7, 7), (3, 3), padding=1, note="3x3 64 -> 64 on 7x7"),
]
SMALL = {c.name: c for c in _SMALL}
assert not set(SMALL) & (set(CASES) | set(EXTRA))

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
