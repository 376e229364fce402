"""neuronxcc.nki.trace: imported by traced kernels; tracing is what every launch does."""
from nx_nki.api import trace  # noqa: F401
