"""Naive BF16 matmul C = lhsT.T @ rhs (V0), 4096 x 4096 x 4096 by default.

For every output tile (m, n) and every contraction step k, the kernel loads a
128x128 lhsT tile and a 128x512 rhs tile straight from HBM and uses each once.
Nothing is reused, so the same bytes cross the DMA engines over and over, and
the lhsT loads move only 256 bytes per partition.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_K = 128  # contraction tile: the partition dimension
TILE_M = 128  # stationary free size
TILE_N = 512  # moving free size (one PSUM bank of fp32)


@nki.jit
def matmul_v0(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lhsT_tile = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                rhs_tile = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                acc += nisa.nc_matmul(lhsT_tile, rhs_tile)
            out_tile = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=out_tile)
    return result
