"""Calibration kernel (family C, v2): FP32 LayerNorm of a 4096 x 8192 input on trn1.

Rebuilt from the NKI LayerNorm tutorial's second version, whose median NeuronCore
latency on trn1 was 1969 us: bn_stats over 512-wide chunks, bn_aggr, then one
tensor_scalar for (x - mean) * rstd; gamma and beta as in v1.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

P = 128
EPS = 1e-5
CHUNK = 512  # bn_stats free-size limit


@nki.jit
def calib_trn1_layernorm_v2(x, gamma, beta):
    R, N = x.shape
    out = nl.ndarray((R, N), dtype=nl.float32, buffer=nl.shared_hbm)
    g = nl.broadcast_to(nl.load(gamma.reshape((1, N))), shape=(P, N))
    b = nl.broadcast_to(nl.load(beta.reshape((1, N))), shape=(P, N))

    for i in nl.affine_range(R // P):
        xt = nl.load(x[i * P:(i + 1) * P, :])
        stats = nl.ndarray((P, 6 * (N // CHUNK)), dtype=nl.float32)
        for j in nl.affine_range(N // CHUNK):
            stats[:, 6 * j:6 * j + 6] = nisa.bn_stats(xt[:, j * CHUNK:(j + 1) * CHUNK])
        mv = nisa.bn_aggr(stats)
        rstd = nl.rsqrt(mv[:, 1:2] + EPS)
        y = nisa.tensor_scalar(xt, nl.subtract, mv[:, 0:1], op1=nl.multiply, operand1=rstd)
        y = nl.multiply(y, g)
        y = nl.add(y, b)
        nl.store(out[i * P:(i + 1) * P, :], value=y)
    return out
