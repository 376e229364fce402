"""Calibration kernel (family B, v5, fully optimised): FP32 matmul
[4096,8192] @ [8192,8192] on trn2 (profiled span 28.30 ms on one NeuronCore).

Blocks of 16 M tiles, 2 N tiles and 8 K tiles; wide copies (8 KiB and 4 KiB per
partition); FP32 accumulators in SBUF, zeroed with memset and added to with
tensor_tensor; two output tiles packed side by side for one store.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_M = 128
TILE_K = 128
TILE_N = 512
TILES_IN_BLOCK_M = 16
TILES_IN_BLOCK_N = 2
TILES_IN_BLOCK_K = 8


@nki.jit
def calib_trn2_matmul_v5(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    BM = TILES_IN_BLOCK_M * TILE_M
    BN = TILES_IN_BLOCK_N * TILE_N
    BK = TILES_IN_BLOCK_K * TILE_K
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)

    for nb in nl.affine_range(N // BN):
        res = nl.ndarray((M // BM, TILES_IN_BLOCK_M, TILES_IN_BLOCK_N, nl.par_dim(TILE_M), TILE_N), dtype=nl.float32, buffer=nl.sbuf)
        for i in nl.affine_range(M // BM * TILES_IN_BLOCK_M * TILES_IN_BLOCK_N):
            nisa.memset(dst=res.flat_tile(i), value=0.0)
        for kb in nl.sequential_range(K // BK):
            b = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BN), dtype=nl.float32, buffer=nl.sbuf)
            for bk in range(TILES_IN_BLOCK_K):
                nisa.dma_copy(dst=b[bk], src=rhs[kb * BK + bk * TILE_K:kb * BK + (bk + 1) * TILE_K, nb * BN:(nb + 1) * BN])
            for mb in nl.affine_range(M // BM):
                a = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BM), dtype=nl.float32, buffer=nl.sbuf)
                for bk in nl.affine_range(TILES_IN_BLOCK_K):
                    nisa.dma_copy(dst=a[bk], src=lhsT[kb * BK + bk * TILE_K:kb * BK + (bk + 1) * TILE_K, mb * BM:(mb + 1) * BM])
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    for bm in nl.affine_range(TILES_IN_BLOCK_M):
                        acc = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(TILES_IN_BLOCK_K):
                            nisa.nc_matmul(dst=acc, stationary=a[bk, :, bm * TILE_M:(bm + 1) * TILE_M], moving=b[bk, :, bn * TILE_N:(bn + 1) * TILE_N], accumulate=True)
                        nisa.tensor_tensor(dst=res[mb, bm, bn], data1=res[mb, bm, bn], data2=acc, op=nl.add)
        for mb in nl.affine_range(M // BM):
            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                pack = nl.ndarray((nl.par_dim(TILE_M), BN), dtype=nl.float32, buffer=nl.sbuf)
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    nisa.tensor_copy(dst=pack[:, bn * TILE_N:(bn + 1) * TILE_N], src=res[mb, bm, bn])
                m0 = mb * BM + bm * TILE_M
                nisa.dma_copy(dst=result[m0:m0 + TILE_M, nb * BN:(nb + 1) * BN], src=pack)
    return result
