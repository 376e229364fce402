"""Calibration kernel (family A, "Opt 3", fully optimised): BF16 matmul
[4096,8192] @ [8192,8192] on trn1 (measured 6.97 ms on one trn1.32xlarge NeuronCore).

Blocks of 16 M tiles, 2 N tiles and 8 K tiles; wide DMAs (4 KiB and 2 KiB per
partition); partial sums across K blocks are accumulated in BF16 SBUF tiles.
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
def calib_trn1_matmul_opt(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    BM = TILES_IN_BLOCK_M * TILE_M
    BN = TILES_IN_BLOCK_N * TILE_N
    BK = TILES_IN_BLOCK_K * TILE_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for nb in nl.affine_range(N // BN):
        res = nl.zeros((M // BM, TILES_IN_BLOCK_M, TILES_IN_BLOCK_N, nl.par_dim(TILE_M), TILE_N), dtype=lhsT.dtype, buffer=nl.sbuf)
        for kb in nl.sequential_range(K // BK):
            b = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BN), dtype=rhs.dtype, buffer=nl.sbuf)
            for bk in nl.affine_range(TILES_IN_BLOCK_K):
                b[bk] = nl.load(rhs[kb * BK + bk * TILE_K:kb * BK + (bk + 1) * TILE_K, nb * BN:(nb + 1) * BN])
            for mb in nl.affine_range(M // BM):
                a = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BM), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bk in nl.affine_range(TILES_IN_BLOCK_K):
                    a[bk] = nl.load(lhsT[kb * BK + bk * TILE_K:kb * BK + (bk + 1) * TILE_K, mb * BM:(mb + 1) * BM])
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    for bm in nl.affine_range(TILES_IN_BLOCK_M):
                        acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(TILES_IN_BLOCK_K):
                            acc += nisa.nc_matmul(a[bk, :, bm * TILE_M:(bm + 1) * TILE_M], b[bk, :, bn * TILE_N:(bn + 1) * TILE_N])
                        res[mb, bm, bn] = nl.add(res[mb, bm, bn], acc)
        for mb in nl.affine_range(M // BM):
            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                pack = nl.ndarray((nl.par_dim(TILE_M), BN), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    pack[:, bn * TILE_N:(bn + 1) * TILE_N] = nl.copy(res[mb, bm, bn])
                m0 = mb * BM + bm * TILE_M
                nl.store(result[m0:m0 + TILE_M, nb * BN:(nb + 1) * BN], value=pack)
    return result
