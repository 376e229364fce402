"""Planted problem: an elementwise add whose loads are cut into tiny DMAs.

out = x + y over a BF16 matrix (R x D), 4096 x 1024 by default. Each 128-row
tile is loaded in 32-column strips, so every descriptor moves only 64 bytes per
partition and the DMA engines spend their time on per-descriptor overhead. The
fix is one load per tile (2 KiB per partition).
"""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

P = 128
STRIP = 32  # columns per DMA: 64 bytes per partition


@nki.jit
def dma_tiny(x, y):
    R, D = x.shape
    out = nl.ndarray((R, D), dtype=x.dtype, buffer=nl.shared_hbm)

    for r in nl.affine_range(R // P):
        xt = nl.ndarray((nl.par_dim(P), D), dtype=x.dtype, buffer=nl.sbuf)
        yt = nl.ndarray((nl.par_dim(P), D), dtype=y.dtype, buffer=nl.sbuf)
        for c in nl.affine_range(D // STRIP):
            xt[:, c * STRIP:(c + 1) * STRIP] = nl.load(x[r * P:(r + 1) * P, c * STRIP:(c + 1) * STRIP])
            yt[:, c * STRIP:(c + 1) * STRIP] = nl.load(y[r * P:(r + 1) * P, c * STRIP:(c + 1) * STRIP])
        s = nisa.tensor_tensor(xt, yt, nl.add)
        nl.store(out[r * P:(r + 1) * P, :], value=s)
    return out
