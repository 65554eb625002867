"""Porting a small PyTorch network to NumPy with cconv: forward and backward.

The network: a 3x3 stem (conv, batch norm, ReLU, 2x2 max pool), a ResNet
basic block, a MobileNetV2 inverted residual (1x1 expand, 3x3 depthwise,
1x1 project, ReLU6), global average pooling and a linear classifier.

1. The weights come from a ``.npz`` file named by the PyTorch state_dict's
   keys.  With torch installed the file is exported from a torch model
   (``np.savez(path, **{k: v.numpy() for k, v in model.state_dict().items()})``);
   without it, the same keys are filled with random values.
2. The NumPy network folds each eval-mode batch norm into the convolution
   before it (``w * gamma / sqrt(var + eps)``, ``beta - mean * gamma /
   sqrt(var + eps)``) and runs the convolutions with :func:`cconv.conv2d`.
3. The backward runs :func:`cconv.convolution_backward` per convolution,
   with ReLU, pooling, the residual sums and the linear layer by hand; the
   gradient of a folded weight is mapped back to the original conv weight.
4. With torch installed, the logits, the input gradient and every conv
   weight gradient are compared with torch's (eval mode, autograd).

Run:  python examples/port_torch_model.py [--weights FILE.npz] [--dtype float32]
Exits 1 when a result differs from torch's by more than the tolerance.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

import cconv

EPS = 1e-5  # torch.nn.BatchNorm2d's default

# (name, C_in, C_out, kernel, stride, padding, groups) of every conv + batch norm
CONVS = [
    ("stem", 3, 16, 3, 1, 1, 1),
    ("block.conv1", 16, 16, 3, 1, 1, 1),
    ("block.conv2", 16, 16, 3, 1, 1, 1),
    ("inv.expand", 16, 64, 1, 1, 0, 1),
    ("inv.dw", 64, 64, 3, 1, 1, 64),
    ("inv.project", 64, 16, 1, 1, 0, 1),
]
N_CLASSES = 10


# ------------------------------------------------------------------ weights
def torch_model():
    """The network in PyTorch (eval mode, random weights and statistics)."""
    import torch
    from torch import nn

    def conv_bn(cin, cout, k, s, p, g):
        return nn.Sequential(nn.Conv2d(cin, cout, k, s, p, groups=g, bias=False),
                             nn.BatchNorm2d(cout))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            mods = {name: conv_bn(*spec) for name, *spec in CONVS}
            self.stem = mods["stem"]
            self.block = nn.ModuleDict({"conv1": mods["block.conv1"], "conv2": mods["block.conv2"]})
            self.inv = nn.ModuleDict({k: mods[f"inv.{k}"] for k in ("expand", "dw", "project")})
            self.fc = nn.Linear(16, N_CLASSES)

        def forward(self, x):
            x = nn.functional.max_pool2d(torch.relu(self.stem(x)), 2)
            h = torch.relu(self.block["conv1"](x))
            x = torch.relu(self.block["conv2"](h) + x)
            h = nn.functional.relu6(self.inv["expand"](x))
            h = nn.functional.relu6(self.inv["dw"](h))
            x = self.inv["project"](h) + x
            return self.fc(x.mean(dim=(2, 3)))

    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():  # statistics that make the folding matter
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    return net.eval()


def state_keys():
    """The state_dict keys and shapes the NumPy network reads."""
    keys = {}
    for name, cin, cout, k, s, p, g in CONVS:
        keys[f"{name}.0.weight"] = (cout, cin // g, k, k)
        for part in ("weight", "bias", "running_mean", "running_var"):
            keys[f"{name}.1.{part}"] = (cout,)
    keys["fc.weight"] = (N_CLASSES, 16)
    keys["fc.bias"] = (N_CLASSES,)
    return keys


def export_weights(path: str, use_torch: bool) -> None:
    """Write the ``.npz`` file: torch's state_dict, or random values."""
    if use_torch:
        sd = torch_model().state_dict()
        np.savez(path, **{k: v.numpy() for k, v in sd.items() if v.dtype.is_floating_point})
        return
    rng = np.random.default_rng(0)
    arrays = {}
    for key, shape in state_keys().items():
        if key.endswith("running_var"):
            arrays[key] = rng.uniform(0.5, 2.0, shape)
        elif key.endswith(".1.weight"):
            arrays[key] = rng.uniform(0.5, 1.5, shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            arrays[key] = rng.standard_normal(shape) / np.sqrt(fan_in)
    np.savez(path, **{k: v.astype(np.float32) for k, v in arrays.items()})


# ------------------------------------------------------------ NumPy network
class NumpyNet:
    """The network on NumPy arrays, batch norm folded into the convolutions."""

    def __init__(self, weights: dict, dtype=np.float32):
        self.dtype = np.dtype(dtype)
        self.conv = {}
        for name, cin, cout, k, s, p, g in CONVS:
            w = np.asarray(weights[f"{name}.0.weight"], np.float64)
            gamma, beta, mean, var = (np.asarray(weights[f"{name}.1.{part}"], np.float64) for part in
                                      ("weight", "bias", "running_mean", "running_var"))
            scale = gamma / np.sqrt(var + EPS)
            self.conv[name] = dict(
                w=(w * scale[:, None, None, None]).astype(self.dtype),
                b=(beta - mean * scale).astype(self.dtype),
                scale=scale, stride=s, padding=p, groups=g)
        self.fc_w = np.asarray(weights["fc.weight"], self.dtype)
        self.fc_b = np.asarray(weights["fc.bias"], self.dtype)

    def _conv(self, name, x, cache):
        c = self.conv[name]
        cache[name] = x
        return cconv.conv2d(x, c["w"], c["b"], stride=c["stride"], padding=c["padding"],
                            groups=c["groups"])

    def forward(self, x):
        """Logits ``(N, 10)`` and the activations the backward needs."""
        cache = {}
        a = self._conv("stem", x, cache)
        cache["stem.pre"] = a
        a = np.maximum(a, 0)
        n, ch, hh, ww = a.shape
        win = a.reshape(n, ch, hh // 2, 2, ww // 2, 2).transpose(0, 1, 2, 4, 3, 5)
        win = win.reshape(n, ch, hh // 2, ww // 2, 4)
        cache["pool.arg"] = win.argmax(axis=-1)
        x = win.max(axis=-1)
        h = self._conv("block.conv1", x, cache)
        cache["block.pre1"] = h
        h = np.maximum(h, 0)
        s = self._conv("block.conv2", h, cache) + x
        cache["block.pre2"] = s
        x = np.maximum(s, 0)
        h = self._conv("inv.expand", x, cache)
        cache["inv.pre1"] = h
        h = np.clip(h, 0, 6)
        h2 = self._conv("inv.dw", h, cache)
        cache["inv.pre2"] = h2
        h2 = np.clip(h2, 0, 6)
        x = self._conv("inv.project", h2, cache) + x
        cache["spatial"] = x.shape
        pooled = x.mean(axis=(2, 3))
        cache["pooled"] = pooled
        return pooled @ self.fc_w.T + self.fc_b, cache

    def _conv_back(self, name, g, cache, grads):
        c = self.conv[name]
        gx, gw, _ = cconv.convolution_backward(
            g, cache[name], c["w"], None, c["stride"], c["padding"], 1, False, 0, c["groups"],
            (True, True, False))
        # d loss / d w_original = d loss / d w_folded * scale (per output channel)
        grads[name] = gw * c["scale"][:, None, None, None].astype(gw.dtype)
        return gx

    def backward(self, g_logits, cache):
        """Gradients of ``sum(logits * g_logits)``: the input's and every
        conv weight's (as torch's ``conv.weight.grad``)."""
        grads = {}
        n, ch, hh, ww = cache["spatial"]
        g = (g_logits @ self.fc_w)[:, :, None, None] / (hh * ww)
        g = np.broadcast_to(g, cache["spatial"]).astype(self.dtype)
        g_skip = g
        h = self._conv_back("inv.project", g, cache, grads)
        pre = cache["inv.pre2"]
        h = self._conv_back("inv.dw", h * ((pre > 0) & (pre < 6)), cache, grads)
        pre = cache["inv.pre1"]
        g = g_skip + self._conv_back("inv.expand", h * ((pre > 0) & (pre < 6)), cache, grads)
        g = g * (cache["block.pre2"] > 0)
        g_skip = g
        h = self._conv_back("block.conv2", g, cache, grads)
        h = h * (cache["block.pre1"] > 0)
        g = g_skip + self._conv_back("block.conv1", h, cache, grads)
        # max pool: each window's gradient goes to its argmax
        arg = cache["pool.arg"]
        win = np.zeros(arg.shape + (4,), self.dtype)
        np.put_along_axis(win, arg[..., None], g[..., None], axis=-1)
        nb, c2, h2, w2 = arg.shape
        g = win.reshape(nb, c2, h2, w2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
            nb, c2, 2 * h2, 2 * w2)
        g = g * (cache["stem.pre"] > 0)
        gx = self._conv_back("stem", g, cache, grads)
        return gx, grads


# -------------------------------------------------------------------- main
def rel_err(a, ref) -> float:
    ref = np.asarray(ref, np.float64)
    return float(np.linalg.norm(np.asarray(a, np.float64) - ref) / max(np.linalg.norm(ref), 1e-30))


def compare_with_torch(net_np: NumpyNet, x, g_logits, logits, gx, grads, tol: float) -> int:
    import torch

    model = torch_model()
    if net_np.dtype == np.float64:
        model = model.double()
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    out = model(xt)
    (out * torch.from_numpy(g_logits)).sum().backward()
    mods = dict(model.named_modules())
    rows = [("logits", rel_err(logits, out.detach().numpy())),
            ("grad input", rel_err(gx, xt.grad.numpy()))]
    for name, *_ in CONVS:
        rows.append((f"grad {name}.weight", rel_err(grads[name], mods[f"{name}.0"].weight.grad.numpy())))
    bad = 0
    for what, e in rows:
        ok = e <= tol
        bad += not ok
        print(f"  {what:<26} rel. error vs torch {e:.2e}{'' if ok else '  ABOVE TOLERANCE'}")
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", help="the .npz file (written first when it does not exist)")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--no-torch", action="store_true", help="do not use torch even if installed")
    args = ap.parse_args(argv)
    try:
        if args.no_torch:
            raise ImportError
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    tmp = None
    path = args.weights
    if path is None:
        tmp = tempfile.TemporaryDirectory()
        path = os.path.join(tmp.name, "weights.npz")
    if not os.path.exists(path):
        export_weights(path, have_torch)
        print(f"wrote {path} ({'exported from torch' if have_torch else 'random weights'})")
    with np.load(path) as f:
        weights = {k: f[k] for k in f.files}
    dtype = np.dtype(args.dtype)
    net = NumpyNet(weights, dtype)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 32, 32)).astype(dtype)
    logits, cache = net.forward(x)
    g_logits = rng.standard_normal(logits.shape).astype(dtype)
    gx, grads = net.backward(g_logits, cache)
    print(f"forward: logits {logits.shape} {logits.dtype}; backward: grad input {gx.shape}, "
          f"{len(grads)} conv weight gradients")
    bad = 0
    if have_torch:
        bad = compare_with_torch(net, x, g_logits, logits, gx, grads,
                                 tol=1e-4 if dtype == np.float32 else 1e-10)
        print("matches torch" if not bad else f"{bad} result(s) differ from torch")
    else:
        print("torch is not installed: no comparison (tests/test_porting_example.py checks "
              "the gradients by finite differences)")
    if tmp is not None:
        tmp.cleanup()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
