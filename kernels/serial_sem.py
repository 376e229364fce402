"""Planted problem: a tiled matmul pipeline serialised by semaphore waits.

C = lhsT.T @ rhs, 512^3 by default, every buffer single: the result tile is staged in
the lhsT strip's space, so the next strip's load waits for the previous store, the
matmuls for the loads, the copy for the matmuls and the store for the copy; the loops
are sequential, so nothing of one tile runs ahead into another. The engines take turns
and mostly wait (evt_wait_time). Fix: double buffering. At larger sizes the per-tile
loads also re-read the inputs, a second problem that then dominates.
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_K = 128
TILE_M = 128
TILE_N = 512


@nki.jit
def serial_sem(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    lhsT_buf = nl.ndarray((nl.par_dim(TILE_K), K), dtype=lhsT.dtype, buffer=nl.sbuf)
    rhs_buf = nl.ndarray((nl.par_dim(TILE_K), K // TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)

    for m in nl.sequential_range(M // TILE_M):
        for n in nl.sequential_range(N // TILE_N):
            for k in nl.sequential_range(K // TILE_K): lhsT_buf[:, k * TILE_M:(k + 1) * TILE_M] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])  # noqa: E501,E701 single buffer
            for k in nl.sequential_range(K // TILE_K): rhs_buf[:, k, :] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])  # noqa: E501,E701 single buffer
            acc = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.sequential_range(K // TILE_K):
                acc += nisa.nc_matmul(lhsT_buf[:, k * TILE_M:(k + 1) * TILE_M], rhs_buf[:, k, :])
            lhsT_buf[:, 0:TILE_N] = nl.copy(acc, dtype=result.dtype)   # the strip's space again
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=lhsT_buf[:, 0:TILE_N])
    return result
