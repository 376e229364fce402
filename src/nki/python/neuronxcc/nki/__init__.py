"""neuronxcc.nki (NKI Beta 1, legacy): jit, baremetal, benchmark, profile,
simulate_kernel and the language/isa/typing modules, recorded by the neuron-explorer shim."""
import nx_nki
from nx_nki.api import (jit, baremetal, benchmark, profile, simulate_kernel, simulate,
                        Kernel)
from nx_nki.api import trace as _trace_fn
from . import language, isa, typing, compiler  # noqa: F401
from . import trace  # noqa: F401  (a module in the real package; also callable below)

tensor = typing.tensor
