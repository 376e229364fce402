"""neuronxcc.nki.language (nl): see nx_nki/lang.py."""
from nx_nki.lang import *  # noqa: F401,F403
from nx_nki.lang import (sum, max, min, abs, all, tile_size, par_dim, sbuf, psum, hbm,  # noqa
                         shared_hbm, private_hbm, arange, mgrid, ds, program_id, copy)

