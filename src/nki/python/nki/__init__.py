"""nki (NKI Beta 2): jit, baremetal, benchmark, profile, simulate_kernel and the
language/isa modules (dst-first ISA), recorded by the neuron-explorer shim."""
import nx_nki
from nx_nki.api import (jit, baremetal, benchmark, profile, simulate_kernel, simulate,
                        Kernel)
from . import language, isa, typing, compiler  # noqa: F401
