"""Planted problem: a VectorE-bound elementwise polynomial.

out = ((((x * c4 + c3) * x + c2) * x + c1) * x + c0) evaluated in FP32 with
tensor_tensor operations, over a BF16 matrix (R x D), 4096 x 2048 by default.
Data movement is light (one load and one store per tile) while VectorE does
eight passes of two-input work per tile; ScalarE and GpSimd sit idle.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

P = 128
COEFFS = (0.5, -1.25, 2.0, 0.75, 1.0)


@nki.jit
def vector_bound(x):
    R, D = x.shape
    out = nl.ndarray((R, D), dtype=x.dtype, buffer=nl.shared_hbm)

    for r in nl.affine_range(R // P):
        xt = nl.load(x[r * P:(r + 1) * P, :])
        acc = nisa.tensor_scalar(xt, nl.multiply, COEFFS[0], dtype=nl.float32)
        for c in COEFFS[1:]:
            acc = nisa.tensor_tensor(acc, xt, nl.add)       # stands for acc + c
            acc = nisa.tensor_tensor(acc, xt, nl.multiply)  # acc * x
        y = nisa.tensor_copy(acc, dtype=x.dtype)
        nl.store(out[r * P:(r + 1) * P, :], value=y)
    return out
