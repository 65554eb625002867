"""Float32 error of Winograd F(2x2, 3x3) and F(4x4, 3x3) against a float64
direct 3x3 correlation, on random and adversarial data.

The transforms are evaluated in float32 with NumPy (U = G g G^T, V = B^T d B,
the channel sum of U * V per transformed element, Y = A^T M A), over many
output tiles at once; the reference is the float64 direct sum of the same
float32-rounded inputs.  The error of a run is max |y - ref| / max |ref| over
its tiles and output channels, the measure the test suite bounds by 3e-6 for
float32 Winograd (tests/test_winograd_dense.py).  cconv's kernels sum in a
different order with FMAs, so their figures differ a little; the gap between
the two tile sizes is what this measures.

    python benches/winograd_error.py [--tiles 256] [--channels 16,64,256,1024] [--1d]

With --1d the same for 1-D layers: F(2, 3) against F(4, 3), the matrices
above applied along one axis.
"""
from __future__ import annotations

import argparse

import numpy as np

# F(2x2, 3x3): interpolation points 0, 1, -1, infinity
G2 = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]])
BT2 = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]])
AT2 = np.array([[1, 1, 1, 0], [0, 1, -1, -1]])
# F(4x4, 3x3): points 0, 1, -1, 2, -2, infinity
G4 = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
               [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])
BT4 = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
                [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]])
AT4 = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
                [0, 1, -1, 8, -8, 1]])
F = {2: (G2, BT2, AT2), 4: (G4, BT4, AT4)}


def winograd(d, g, m):
    """Output tiles (tiles, K, m, m) of windows d (tiles, C, m+2, m+2) and
    filters g (K, C, 3, 3), every step in float32."""
    G, BT, AT = (a.astype(np.float32) for a in F[m])
    U = np.einsum("ij,kcjl,ml->imkc", G, g, G, optimize=True)        # n n K C
    V = np.einsum("ij,tcjl,ml->imct", BT, d, BT, optimize=True)      # n n C T
    M = np.matmul(U, V)                                              # n n K T
    return np.einsum("ij,jlkt,ml->tkim", AT, M, AT, optimize=True)


def direct(d, g, m):
    """The float64 direct correlation of the same windows."""
    d64, g64 = d.astype(np.float64), g.astype(np.float64)
    out = np.empty((d.shape[0], g.shape[0], m, m))
    for i in range(m):
        for j in range(m):
            out[:, :, i, j] = np.einsum("tcab,kcab->tk", d64[:, :, i:i + 3, j:j + 3], g64)
    return out


def data(kind, rng, shape):
    if kind == "normal":
        return rng.standard_normal(shape)
    if kind == "uniform01":
        return rng.random(shape)
    if kind == "lognormal":  # positive, wide dynamic range
        return rng.lognormal(0.0, 2.0, shape)
    if kind == "signs":  # +-1 in the sign pattern of B^T's widest row
        pat = np.sign(BT4[0] if shape[-1] == 6 else BT2[0]).astype(float)
        pat[pat == 0] = 1
        base = np.multiply.outer(pat[: shape[-2]], pat[: shape[-1]])
        return base * rng.uniform(0.5, 1.0, shape)
    raise ValueError(kind)


def winograd1d(d, g, m):
    """1-D F(m, 3) (G, B^T, A^T of the 2-D tables applied once): outputs
    (tiles, K, m) of windows d (tiles, C, m + 2), filters g (K, C, 3), every
    step in float32."""
    G, BT, AT = (a.astype(np.float32) for a in F[m])
    U = np.einsum("ij,kcj->ikc", G, g, optimize=True)                 # n K C
    V = np.einsum("ij,tcj->ict", BT, d, optimize=True)                # n C T
    return np.einsum("ij,jkt->tki", AT, np.matmul(U, V), optimize=True)


def direct1d(d, g, m):
    d64, g64 = d.astype(np.float64), g.astype(np.float64)
    return np.stack([np.einsum("tca,kca->tk", d64[:, :, i:i + 3], g64) for i in range(m)], -1)


def main_1d(a, rng) -> None:
    """The same for 1-D layers: F(2, 3) against F(4, 3) (tiles of 4
    outputs: F(4, 3) once, F(2, 3) on both halves)."""
    print("| data | channels | F(2,3) | F(4,3) | F4 / F2 |")
    print("|---|---|---|---|---|")
    for kind in ("normal", "uniform01", "lognormal", "signs"):
        for C in (int(c) for c in a.channels.split(",")):
            worst = {2: 0.0, 4: 0.0}
            for _ in range(a.trials):
                if kind == "signs":  # B^T(4)'s widest row's signs along each window
                    pat = np.sign(BT4[0]).astype(float)
                    pat[pat == 0] = 1
                    d = pat * rng.uniform(0.5, 1.0, (a.tiles, C, 6))
                else:
                    d = data(kind, rng, (a.tiles, C, 6))
                d = d.astype(np.float32)
                g = data("normal" if kind == "signs" else kind, rng,
                         (a.out_channels, C, 3)).astype(np.float32)
                ref = direct1d(d, g, 4)
                y4 = winograd1d(d, g, 4)
                y2 = np.concatenate([winograd1d(d[:, :, i:i + 4], g, 2) for i in (0, 2)], -1)
                s = np.abs(ref).max()
                worst[2] = max(worst[2], float(np.abs(y2 - ref).max() / s))
                worst[4] = max(worst[4], float(np.abs(y4 - ref).max() / s))
            print(f"| {kind} | {C} | {worst[2]:.1e} | {worst[4]:.1e} | {worst[4] / worst[2]:.1f} |",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiles", type=int, default=256)
    ap.add_argument("--channels", default="16,64,256,1024")
    ap.add_argument("--out-channels", type=int, default=8)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--1d", dest="one_d", action="store_true",
                    help="1-D F(2, 3) against F(4, 3) instead")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    if a.one_d:
        main_1d(a, rng)
        return
    print("| data | channels | F(2x2,3x3) | F(4x4,3x3) | F4 / F2 |")
    print("|---|---|---|---|---|")
    for kind in ("normal", "uniform01", "lognormal", "signs"):
        for C in (int(c) for c in a.channels.split(",")):
            worst = {2: 0.0, 4: 0.0}
            for _ in range(a.trials):
                # one 4x4 output block per tile: F(4x4) once, F(2x2) on its four 2x2 quarters
                d = data(kind, rng, (a.tiles, C, 6, 6)).astype(np.float32)
                g = data("normal" if kind == "signs" else kind, rng,
                         (a.out_channels, C, 3, 3)).astype(np.float32)
                ref = direct(d, g, 4)
                y4 = winograd(d, g, 4)
                y2 = np.empty_like(y4)
                for i in (0, 2):
                    for j in (0, 2):
                        y2[:, :, i:i + 2, j:j + 2] = winograd(d[:, :, i:i + 4, j:j + 4], g, 2)
                s = np.abs(ref).max()
                worst[2] = max(worst[2], float(np.abs(y2 - ref).max() / s))
                worst[4] = max(worst[4], float(np.abs(y4 - ref).max() / s))
            print(f"| {kind} | {C} | {worst[2]:.1e} | {worst[4]:.1e} | {worst[4] / worst[2]:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
