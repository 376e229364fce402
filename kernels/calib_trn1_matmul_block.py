"""Calibration kernel (family A, "Opt 2", blocked free dimensions): BF16 matmul
[4096,8192] @ [8192,8192] on trn1 (measured 22.07 ms on one trn1.32xlarge NeuronCore).

Two M tiles and two N tiles form a block, so each loaded tile is used twice.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_M = 128
TILE_K = 128
TILE_N = 512
TILES_IN_BLOCK_M = 2
TILES_IN_BLOCK_N = 2


@nki.jit
def calib_trn1_matmul_block(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    BM = TILES_IN_BLOCK_M * TILE_M
    BN = TILES_IN_BLOCK_N * TILE_N
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for mb in nl.affine_range(M // BM):
        a = nl.ndarray((TILES_IN_BLOCK_M, KT, nl.par_dim(TILE_K), TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for bm in nl.affine_range(TILES_IN_BLOCK_M):
            for k in nl.affine_range(KT):
                a[bm, k] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, mb * BM + bm * TILE_M:mb * BM + (bm + 1) * TILE_M])
        for nb in nl.affine_range(N // BN):
            b = nl.ndarray((TILES_IN_BLOCK_N, KT, nl.par_dim(TILE_K), TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for bn in nl.affine_range(TILES_IN_BLOCK_N):
                for k in nl.affine_range(KT):
                    b[bn, k] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, nb * BN + bn * TILE_N:nb * BN + (bn + 1) * TILE_N])
            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(KT):
                        acc += nisa.nc_matmul(a[bm, k], b[bn, k])
                    s = nl.copy(acc, dtype=result.dtype)
                    m0 = mb * BM + bm * TILE_M
                    n0 = nb * BN + bn * TILE_N
                    nl.store(result[m0:m0 + TILE_M, n0:n0 + TILE_N], value=s)
    return result
