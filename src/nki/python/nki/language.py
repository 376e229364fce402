"""nki.language (Beta 2): tensors with explicit buffers, slices, ranges, and the 0.3
value-returning wrappers; see nx_nki/lang.py."""
from nx_nki.lang import *  # noqa: F401,F403
from nx_nki.lang import (sum, max, min, abs, all, tile_size, sbuf, psum, hbm,  # noqa
                         shared_hbm, private_hbm, ds, program_id, copy, par_dim)
from nx_nki.lang import static_range as range  # noqa: F401  (unrolled, like Beta 2)
