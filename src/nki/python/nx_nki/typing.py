"""typing.py: nt.tensor[shape, dtype] and friends: kernel inputs known by shape only."""
from .api import Placeholder


class _TensorType:
    def __getitem__(self, key):
        if not isinstance(key, tuple) or len(key) != 2:
            raise TypeError('nt.tensor[shape, dtype]')
        shape, dtype = key
        return Placeholder(shape, dtype)

    def __call__(self, shape, dtype):
        return Placeholder(shape, dtype)


tensor = _TensorType()
mutable_tensor = _TensorType()


class scalar:
    def __class_getitem__(cls, k):
        return cls
