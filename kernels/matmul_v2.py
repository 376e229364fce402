"""Blocked BF16 matmul with row loads (V2), 4096 x 4096 x 4096 by default.

Same 8 x 2 tile blocks as V1, but each DMA moves a whole 128 x 1024 row of the
block (2 KiB per partition instead of 256 bytes or 1 KiB), and the rhs block is
double-buffered so the next block loads while the Tensor engine works.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_K = 128
TILE_M = 128
TILE_N = 512
BLOCK_M = 8
BLOCK_N = 2
ROW_M = TILE_M * BLOCK_M  # 1024 lhsT columns per row load
ROW_N = TILE_N * BLOCK_N  # 1024 rhs columns per row load


@nki.jit
def matmul_v2(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    KT = K // TILE_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)

    for mb in nl.affine_range(M // ROW_M):
        lhsT_rows = nl.ndarray((KT, nl.par_dim(TILE_K), ROW_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            lhsT_rows[k] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, mb * ROW_M:(mb + 1) * ROW_M])
        for nb in nl.affine_range(N // ROW_N):
            rhs_rows = nl.ndarray((KT, nl.par_dim(TILE_K), ROW_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(KT):
                rhs_rows[k] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, nb * ROW_N:(nb + 1) * ROW_N])
            for i in nl.affine_range(BLOCK_M):
                for j in nl.affine_range(BLOCK_N):
                    acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(KT):
                        acc += nisa.nc_matmul(lhsT_rows[k, :, i * TILE_M:(i + 1) * TILE_M],
                                              rhs_rows[k, :, j * TILE_N:(j + 1) * TILE_N])
                    m0 = mb * ROW_M + i * TILE_M
                    n0 = nb * ROW_N + j * TILE_N
                    out_tile = nl.copy(acc, dtype=result.dtype)
                    nl.store(result[m0:m0 + TILE_M, n0:n0 + TILE_N], value=out_tile)
    return result
