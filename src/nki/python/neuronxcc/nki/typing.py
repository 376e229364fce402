"""neuronxcc.nki.typing: nt.tensor[shape, dtype] placeholders (shape-only kernel inputs)."""
from nx_nki.typing import tensor, mutable_tensor, scalar  # noqa: F401
