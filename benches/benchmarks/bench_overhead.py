"""asv: the fixed cost of a call, on problems too small for the kernels to
matter (an inference loop over small layers pays it on every layer).

What it measures: argument checks, the plan and dispatch caches, the array
wrappers and the C entry, for the forward (with and without ``out=``) and
for ``convolution_backward``; dense and depthwise.

Run from benches/:  asv run --python=same --set-commit-hash $(git rev-parse HEAD)   (see README.md)
"""

import numpy as np

import cconv

KINDS = ["dense", "depthwise"]


class CallOverhead:
    param_names = ["kind"]
    params = [KINDS]

    def setup(self, kind):
        cconv.set_num_threads(1)
        rng = np.random.default_rng(0)
        self.groups = 4 if kind == "depthwise" else 1
        self.x = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
        self.w = rng.standard_normal((4, 4 // self.groups, 3, 3)).astype(np.float32)
        self.b = np.zeros(4, np.float32)
        self.gy = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
        self.out = np.empty((1, 4, 5, 5), np.float32)
        self.time_forward(kind)   # warm the plan caches
        self.time_backward(kind)

    def time_forward(self, kind):
        cconv.conv2d(self.x, self.w, self.b, padding=1, groups=self.groups)

    def time_forward_out(self, kind):
        cconv.conv2d(self.x, self.w, self.b, padding=1, groups=self.groups, out=self.out)

    def time_backward(self, kind):
        cconv.convolution_backward(self.gy, self.x, self.w, [4], 1, 1, 1, False, 0, self.groups,
                                   (True, True, True))
