"""Calibration kernel (family B, v2): FP32 matmul [4096,8192] @ [8192,8192] on trn2.

Rebuilt from the loop nest of the NKI kernel-optimization guide's v2 (the tiled
version), whose profiled span on one trn2 NeuronCore was 39.89 ms. Both operand tiles
are copied from HBM inside the contraction loop with nisa.dma_copy.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_M = 128
TILE_K = 128
TILE_N = 512


@nki.jit
def calib_trn2_matmul_v2(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                a = nl.ndarray((TILE_K, TILE_M), dtype=nl.float32, buffer=nl.sbuf)
                b = nl.ndarray((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                nisa.dma_copy(dst=b, src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                nisa.nc_matmul(dst=acc, stationary=a, moving=b, accumulate=True)
            s = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=s, src=acc)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], src=s)
    return result
