"""BF16 matmul C = A @ B with A stored row-major (M x K), 2048^3 by default.

The Tensor engine needs A transposed (K on the partitions), so every 128x128
tile of A is transposed on the Tensor engine with nc_transpose (an identity
matmul) and copied back to SBUF before the real matmuls use it.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE = 128
TILE_N = 512


@nki.jit
def matmul_transpose(a, b):
    M, K = a.shape
    _, N = b.shape
    KT = K // TILE
    result = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)

    for m in nl.affine_range(M // TILE):
        aT = nl.ndarray((KT, nl.par_dim(TILE), TILE), dtype=a.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(KT):
            a_tile = nl.load(a[m * TILE:(m + 1) * TILE, k * TILE:(k + 1) * TILE])
            aT_psum = nisa.nc_transpose(a_tile)
            aT[k] = nl.copy(aT_psum, dtype=a.dtype)
        for n in nl.affine_range(N // TILE_N):
            acc = nl.zeros((TILE, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                b_tile = nl.load(b[k * TILE:(k + 1) * TILE, n * TILE_N:(n + 1) * TILE_N])
                acc += nisa.nc_matmul(aT[k], b_tile)
            out_tile = nl.copy(acc, dtype=result.dtype)
            nl.store(result[m * TILE:(m + 1) * TILE, n * TILE_N:(n + 1) * TILE_N], value=out_tile)
    return result
