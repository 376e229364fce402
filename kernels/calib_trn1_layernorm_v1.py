"""Calibration kernel (family C, v1): FP32 LayerNorm of a 4096 x 8192 input on trn1.

Rebuilt from the NKI LayerNorm tutorial's first version (nki.language ops), whose
median NeuronCore latency on trn1 was 2311 us. Per 128-row tile: mean, mean of the
squared deviations, rsqrt, two full-width shift/scale passes, then gamma and beta.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

P = 128
EPS = 1e-5


@nki.jit
def calib_trn1_layernorm_v1(x, gamma, beta):
    R, N = x.shape
    out = nl.ndarray((R, N), dtype=nl.float32, buffer=nl.shared_hbm)
    g = nl.broadcast_to(nl.load(gamma.reshape((1, N))), shape=(P, N))
    b = nl.broadcast_to(nl.load(beta.reshape((1, N))), shape=(P, N))

    for i in nl.affine_range(R // P):
        xt = nl.load(x[i * P:(i + 1) * P, :])
        mean = nl.mean(xt, axis=[1])
        sq = nl.square(xt)
        var = nl.mean(sq, axis=[1]) - mean * mean
        rstd = nl.rsqrt(var + EPS)
        y = nl.subtract(xt, mean)
        y = nl.multiply(y, rstd)
        y = nl.multiply(y, g)
        y = nl.add(y, b)
        nl.store(out[i * P:(i + 1) * P, :], value=y)
    return out
