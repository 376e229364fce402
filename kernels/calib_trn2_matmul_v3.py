"""Calibration kernel (family B, v3, hoisted loads): FP32 matmul
[4096,8192] @ [8192,8192] on trn2 (profiled span 39.89 -> 28.20 ms on one NeuronCore).

64 lhsT tiles of 128 x 128 are copied once per m, 64 rhs tiles of 128 x 512 once per
(m, n).
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_M = 128
TILE_K = 128
TILE_N = 512


@nki.jit
def calib_trn2_matmul_v3(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        a = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_M), dtype=nl.float32, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            nisa.dma_copy(dst=a[k], src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
        for n in nl.affine_range(N // TILE_N):
            b = nl.ndarray((KT, nl.par_dim(TILE_K), TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                nisa.dma_copy(dst=b[k], src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                nisa.nc_matmul(dst=acc, stationary=a[k], moving=b[k], accumulate=True)
            s = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=s, src=acc)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], src=s)
    return result
