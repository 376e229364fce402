"""neuronxcc.nki.isa (nisa): see nx_nki/isa.py."""
from nx_nki.isa import *  # noqa: F401,F403
from nx_nki.isa import (nc_matmul, nc_transpose, activation, tensor_tensor, tensor_scalar,  # noqa
                        tensor_reduce, tensor_copy, memset, iota, reciprocal, dma_copy,
                        unknown_engine, tensor_engine, vector_engine, scalar_engine,
                        gpsimd_engine)
