"""nx_nki: the neuron-explorer NKI shim's core (not an NKI API itself).

neuronxcc.nki (legacy) and nki (Beta 2) are thin packages over it: a user's kernel runs
against the recorder (record.py, ops.py), the compiler passes decide what the real
compiler would (compiler.py, policy.py), the listing is written (emit.py) and the
neuron-explorer binary assembles, simulates and ingests it (driver.py). docs/nki.md.
"""
from . import errors
from .dtypes import tagged  # noqa: F401  (bf16/fp8 inputs without ml_dtypes: docs/nki.md)

errors.install_hook()
__version__ = '0.1'
