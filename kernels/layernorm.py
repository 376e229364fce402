"""Layer normalisation of a BF16 matrix x (R x D) with gamma and beta, 4096 x 2048
by default.

Per 128-row tile: mean and variance along the free dimension, then
(x - mean) * rsqrt(var + eps) * gamma + beta. Everything but the square and the
rsqrt runs on VectorE, which makes this kernel VectorE-heavy.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

P = 128
EPS = 1e-5


@nki.jit
def layernorm(x, gamma, beta):
    R, D = x.shape
    out = nl.ndarray((R, D), dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.load(gamma)  # gamma and beta arrive pre-broadcast to 128 rows
    b = nl.load(beta)

    for r in nl.affine_range(R // P):
        xt = nl.load(x[r * P:(r + 1) * P, :])
        mean = nisa.tensor_reduce(nl.add, xt, axis=1) / D
        xc = nisa.tensor_scalar(xt, nl.subtract, mean, dtype=nl.float32)
        sq = nisa.activation(nl.square, xc)
        var = nisa.tensor_reduce(nl.add, sq, axis=1) / D
        rstd = nisa.activation(nl.rsqrt, var, bias=EPS)
        xn = nisa.tensor_scalar(xc, nl.multiply, rstd)
        y = nisa.tensor_tensor(xn, g, nl.multiply)
        y = nisa.tensor_tensor(y, b, nl.add, dtype=x.dtype)
        nl.store(out[r * P:(r + 1) * P, :], value=y)
    return out
