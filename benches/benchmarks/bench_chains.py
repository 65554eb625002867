"""asv: chains of convolutions, each call's result the next one's input,
as a network's forward runs them.

What it measures beyond the single-layer suites: the results' memory.  Each
call returns a fresh array; glibc often hands a freed result's pages back to
the system, and the next results then fault in new ones (about 1 us per 4
KiB).  cconv allocates results from a cache of freed blocks (src/core/outbuf.c);
``empty_cache`` runs in ``setup`` only, so the timed rounds see the cache
warm, as a loop over a network would.

Run from benches/:  asv run --python=same --set-commit-hash $(git rev-parse HEAD)   (see README.md)
"""

import numpy as np

import cconv

CHAINS = ["mbv2_block", "resnet50_bottleneck", "resnext_block"]


def _chain(name, n, rng):
    def mk(*shape, scale=0.1):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    if name == "mbv2_block":       # 1x1 expand 24 -> 144, depthwise 3x3, 1x1 project -> 24; 56x56
        x = mk(n, 24, 56, 56, scale=1.0)
        w1, wd, w2 = mk(144, 24, 1, 1), mk(144, 1, 3, 3), mk(24, 144, 1, 1)
        return lambda: cconv.conv2d(cconv.conv2d(cconv.conv2d(x, w1), wd, padding=1, groups=144), w2)
    if name == "resnet50_bottleneck":  # 256 -> 64 (1x1), 64 -> 64 (3x3), 64 -> 256 (1x1); 56x56
        x = mk(n, 256, 56, 56, scale=1.0)
        w1, w2, w3 = mk(64, 256, 1, 1), mk(64, 64, 3, 3), mk(256, 64, 1, 1)
        return lambda: cconv.conv2d(cconv.conv2d(cconv.conv2d(x, w1), w2, padding=1), w3)
    # ResNeXt 32x4d stage 2: 256 -> 256 (1x1), grouped 3x3 g32, 256 -> 256 (1x1); 28x28
    x = mk(n, 256, 28, 28, scale=1.0)
    w1, w2, w3 = mk(256, 256, 1, 1), mk(256, 8, 3, 3), mk(256, 256, 1, 1)
    return lambda: cconv.conv2d(cconv.conv2d(cconv.conv2d(x, w1), w2, padding=1, groups=32), w3)


class Chain:
    param_names = ["chain", "batch"]
    params = [CHAINS, [1, 8]]
    timeout = 120

    def setup(self, chain, batch):
        cconv.empty_cache()
        self.run = _chain(chain, batch, np.random.default_rng(0))
        self.run()  # warm the plans, the workspace and the result blocks

    def time_chain(self, chain, batch):
        self.run()
