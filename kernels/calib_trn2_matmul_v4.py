"""Calibration kernel (family B, v4, 2 x 2 free-dimension blocking): FP32 matmul
[4096,8192] @ [8192,8192] on trn2 (profiled span 28.41 ms on one NeuronCore).
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
def calib_trn2_matmul_v4(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    BM = TILES_IN_BLOCK_M * TILE_M
    BN = TILES_IN_BLOCK_N * TILE_N
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    for mb in nl.affine_range(M // BM):
        a = nl.ndarray((TILES_IN_BLOCK_M, KT, nl.par_dim(TILE_K), TILE_M), dtype=nl.float32, buffer=nl.sbuf)
        for bm in nl.affine_range(TILES_IN_BLOCK_M):
            for k in nl.affine_range(KT):
                nisa.dma_copy(dst=a[bm, k], src=lhsT[k * TILE_K:(k + 1) * TILE_K, mb * BM + bm * TILE_M:mb * BM + (bm + 1) * TILE_M])
        for nb in nl.affine_range(N // BN):
            b = nl.ndarray((TILES_IN_BLOCK_N, KT, nl.par_dim(TILE_K), TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            for bn in nl.affine_range(TILES_IN_BLOCK_N):
                for k in nl.affine_range(KT):
                    nisa.dma_copy(dst=b[bn, k], src=rhs[k * TILE_K:(k + 1) * TILE_K, nb * BN + bn * TILE_N:nb * BN + (bn + 1) * TILE_N])
            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(KT):
                        nisa.nc_matmul(dst=acc, stationary=a[bm, k], moving=b[bn, k], accumulate=True)
                    s = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=s, src=acc)
                    m0 = mb * BM + bm * TILE_M
                    n0 = nb * BN + bn * TILE_N
                    nisa.dma_copy(dst=result[m0:m0 + TILE_M, n0:n0 + TILE_N], src=s)
    return result
