"""asv: small-plane layers outside the compare.py set, where cconv once lost
to torch (a random-shape sweep found them): ConvNeXt's 7x7 and
EfficientNet's 5x5 depthwise layers on 7x7-14x14 planes (the channels-last
depthwise path), late-ResNet layers on 7x7 images at batch 1-8 and a small
3-D volume (the GEMM plan's image blocks and shared im2col).

Run from benches/:  asv run --python=same --set-commit-hash $(git rev-parse HEAD)   (see README.md)
"""

from cconv._layer import Layer

from .bench_forward import _Forward

SMALL = {
    lay.name: lay
    for lay in (
        Layer("convnext_dw7_s4", 1, 768, 768, (7, 7), (7, 7), padding=3, groups=768,
              note="ConvNeXt-T stage 4 depthwise 7x7"),
        Layer("convnext_dw7_s3", 1, 384, 384, (14, 14), (7, 7), padding=3, groups=384,
              note="ConvNeXt-T stage 3 depthwise 7x7"),
        Layer("effnet_dw5_7", 1, 1152, 1152, (7, 7), (5, 5), padding=2, groups=1152,
              note="EfficientNet-B0 stage 7 depthwise 5x5"),
        Layer("mbv2_dw3_7_b8", 8, 960, 960, (7, 7), (3, 3), padding=1, groups=960,
              note="MobileNetV2 last depthwise 3x3, batch 8"),
        Layer("resnet50_l4_1x1_b8", 8, 256, 64, (7, 7), (1, 1), note="1x1 on 7x7, batch 8"),
        Layer("resnet50_l4_3x3_b8", 8, 512, 512, (7, 7), (3, 3), padding=1,
              note="ResNet-50 layer4 3x3, batch 8"),
        Layer("resnet50_l4_3x3_b1", 1, 512, 512, (7, 7), (3, 3), padding=1,
              note="ResNet-50 layer4 3x3, batch 1"),
        Layer("conv3d_4cube", 1, 128, 128, (4, 4, 4), (3, 3, 3), padding=1,
              note="3x3x3 on a 4x4x4 volume"),
    )
}


class SmallLayers(_Forward):
    cases = SMALL
    params = [list(SMALL), ["float32"]]
