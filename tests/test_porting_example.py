"""examples/port_torch_model.py: runs (against torch when installed), its
forward equals the float64 reference's, and its gradients agree with
finite differences."""
import importlib.util
import os

import numpy as np
import pytest

from reference import ref_conv

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                       "port_torch_model.py")


@pytest.fixture(scope="module")
def ex():
    spec = importlib.util.spec_from_file_location("port_torch_model", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def weights(ex, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("w") / "random.npz")
    ex.export_weights(path, use_torch=False)
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def test_example_runs(ex, tmp_path, capsys):
    """The example as a user runs it: with torch installed it exports the
    weights from a torch model and compares logits and gradients."""
    assert ex.main(["--weights", str(tmp_path / "w.npz")]) == 0
    text = capsys.readouterr().out
    try:
        import torch  # noqa: F401
        assert "matches torch" in text
    except ImportError:
        assert "no comparison" in text
    assert ex.main(["--no-torch", "--dtype", "float64"]) == 0


def test_forward_matches_reference(ex, weights, monkeypatch):
    net = ex.NumpyNet(weights, np.float64)
    x = np.random.default_rng(3).standard_normal((2, 3, 32, 32))
    logits, _ = net.forward(x)

    def ref_conv2d(x, w, b=None, stride=1, padding=0, groups=1):
        return ref_conv(x, w, b, stride=stride, pad_before=padding, groups=groups)

    monkeypatch.setattr(ex.cconv, "conv2d", ref_conv2d)
    ref, _ = net.forward(x)
    np.testing.assert_allclose(logits, ref, rtol=1e-12, atol=1e-12)


def test_gradients_match_finite_differences(ex, weights):
    net = ex.NumpyNet(weights, np.float64)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 32, 32))
    logits, cache = net.forward(x)
    g = rng.standard_normal(logits.shape)
    gx, grads = net.backward(g, cache)

    def f():
        return float((net.forward(x)[0] * g).sum())

    eps = 1e-6
    v = rng.standard_normal(x.shape)
    x0 = x.copy()
    x[...] = x0 + eps * v
    fp = f()
    x[...] = x0 - eps * v
    fm = f()
    x[...] = x0
    fd = (fp - fm) / (2 * eps)
    assert abs(fd - float((gx * v).sum())) <= 1e-6 * max(1.0, abs(fd))
    for name in ("stem", "block.conv2", "inv.dw", "inv.project"):
        c = net.conv[name]
        w0 = c["w"].copy()
        v = rng.standard_normal(w0.shape)
        step = v * c["scale"][:, None, None, None]  # a step of v in the original weight
        c["w"] = w0 + eps * step
        fp = f()
        c["w"] = w0 - eps * step
        fm = f()
        c["w"] = w0
        fd = (fp - fm) / (2 * eps)
        assert abs(fd - float((grads[name] * v).sum())) <= 1e-6 * max(1.0, abs(fd)), name
