"""nki.isa (Beta 2): dst-first instructions; see nx_nki/beta2.py."""
from nx_nki.beta2 import *  # noqa: F401,F403
