"""Calibration kernel (family A, "Tiled"): BF16 matmul [4096,8192] @ [8192,8192] on trn1.

Rebuilt from the loop nest of the NKI matrix-multiplication tutorial's first version,
whose latency was measured on one NeuronCore of a trn1.32xlarge (51.80 ms). Both
operand tiles are loaded from HBM inside the contraction loop and used once.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_M = 128  # stationary free size
TILE_K = 128  # partitions
TILE_N = 512  # moving free size


@nki.jit
def calib_trn1_matmul_tiled(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                a = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                b = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                acc += nisa.nc_matmul(a, b)
            s = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=s)
    return result
