"""dtypes.py: the NKI data types, their listing names and their numerics.

Every value a kernel computes is held in numpy arrays of a storage type (float32 for the
float types, int64 for the integer ones) whose values are already rounded to the NKI type:
numpy has no bfloat16, so bf16 is a float32 array whose low 16 bits are zero (round to
nearest even), fp8 likewise (e4m3 and e5m2 by table). Arithmetic runs in fp32, as on the
engines, and each result is rounded to its destination type.
"""
import numpy as np


class DType:
    """One NKI data type. `listing` is the kernel-listing spelling (None: the listing
    has no such type yet)."""
    __slots__ = ('name', 'size', 'listing', 'kind', 'np_out', 'aliases')

    def __init__(self, name, size, listing, kind, np_out, aliases=()):
        self.name = name
        self.size = size
        self.listing = listing
        self.kind = kind            # 'f' float, 'i' signed int, 'u' unsigned int, 'b' bool
        self.np_out = np_out        # numpy dtype of arrays returned to the user
        self.aliases = aliases

    def __repr__(self):
        return 'nl.' + self.name

    def __reduce__(self):
        return (as_dtype, (self.name,))

    @property
    def itemsize(self):
        return self.size

    @property
    def is_float(self):
        return self.kind == 'f'


bfloat16 = DType('bfloat16', 2, 'bf16', 'f', np.float32, ('bf16',))
float16 = DType('float16', 2, 'fp16', 'f', np.float16, ('fp16', 'half'))
float32 = DType('float32', 4, 'fp32', 'f', np.float32, ('fp32', 'float', 'single'))
tfloat32 = DType('tfloat32', 4, 'tf32', 'f', np.float32, ('tf32',))
float8_e4m3 = DType('float8_e4m3', 1, 'fp8', 'f', np.float32, ('fp8', 'float8_e4m3fn'))
float8_e5m2 = DType('float8_e5m2', 1, None, 'f', np.float32, ())
int8 = DType('int8', 1, None, 'i', np.int8)
int16 = DType('int16', 2, None, 'i', np.int16)
int32 = DType('int32', 4, 'int32', 'i', np.int32)
uint8 = DType('uint8', 1, 'uint8', 'u', np.uint8)
uint16 = DType('uint16', 2, None, 'u', np.uint16)
uint32 = DType('uint32', 4, None, 'u', np.uint32)
bool_ = DType('bool_', 1, None, 'b', np.bool_, ('bool',))

ALL = (bfloat16, float16, float32, tfloat32, float8_e4m3, float8_e5m2, int8, int16, int32,
       uint8, uint16, uint32, bool_)
_BY_NAME = {}
for _d in ALL:
    _BY_NAME[_d.name] = _d
    for _a in _d.aliases:
        _BY_NAME[_a] = _d
_BY_NP = {np.dtype(np.float32): float32, np.dtype(np.float16): float16,
          np.dtype(np.int8): int8, np.dtype(np.int16): int16, np.dtype(np.int32): int32,
          np.dtype(np.uint8): uint8, np.dtype(np.uint16): uint16, np.dtype(np.uint32): uint32,
          np.dtype(np.bool_): bool_, np.dtype(np.float64): float32, np.dtype(np.int64): int32}


def as_dtype(x):
    """An NKI DType from a DType, a numpy dtype or type, or a name; None stays None.
    Raises TypeError for anything else."""
    if x is None or isinstance(x, DType):
        return x
    if isinstance(x, str):
        d = _BY_NAME.get(x)
        if d is None:
            raise TypeError("unknown dtype '%s'" % x)
        return d
    try:
        nd = np.dtype(x)
    except TypeError:
        raise TypeError('not a dtype: %r' % (x,)) from None
    if nd.name == 'bfloat16':          # ml_dtypes, when a user has it
        return bfloat16
    if nd.name.startswith('float8_e4m3'):
        return float8_e4m3
    if nd.name.startswith('float8_e5m2'):
        return float8_e5m2
    d = _BY_NP.get(nd)
    if d is None:
        raise TypeError('numpy dtype %s has no NKI equivalent' % nd)
    return d


def of_array(a):
    """The NKI dtype of a user's numpy array (a bf16-tagged array is bfloat16)."""
    tag = getattr(a, 'nki_dtype', None)
    if tag is not None:
        return tag
    return as_dtype(a.dtype)


def storage(d):
    """numpy dtype of the arrays that hold values of NKI dtype d while a kernel runs."""
    return np.float32 if d.kind == 'f' else (np.bool_ if d.kind == 'b' else np.int64)


def round_bf16(x):
    """float32 array rounded to bfloat16 (nearest even), NaN kept."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32)
    r = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1)))
         & np.uint32(0xFFFF0000)).view(np.float32)
    nan = np.isnan(x)
    if nan.any():
        r = np.where(nan, x, r)
    return r


def _fp8_table(exp_bits, man_bits, bias, has_inf):
    vals = []
    for e in range(1 << exp_bits):
        for m in range(1 << man_bits):
            if e == 0:
                v = (m / (1 << man_bits)) * 2.0 ** (1 - bias)
            else:
                v = (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
            vals.append(v)
    vals = np.array(vals, dtype=np.float64)
    if has_inf:                               # e5m2: top exponent is inf/NaN
        vals = vals[:-(1 << man_bits)]
    else:                                     # e4m3fn: only S.1111.111 is NaN
        vals = vals[:-1]
    return vals


_E4M3 = _fp8_table(4, 3, 7, False)
_E5M2 = _fp8_table(5, 2, 15, True)


def _round_table(x, table):
    x = np.asarray(x, dtype=np.float32)
    a = np.abs(x).astype(np.float64)
    i = np.clip(np.searchsorted(table, a), 1, len(table) - 1)
    lo, hi = table[i - 1], table[i]
    pick = np.where(a - lo <= hi - a, lo, hi)
    pick = np.where(a >= table[-1], table[-1], pick)
    return np.where(np.isnan(x), x, np.copysign(pick, x)).astype(np.float32)


def cast(x, d):
    """Values of x converted to NKI dtype d, in d's storage type (round to nearest even for
    floats; ints truncate toward zero and wrap as the engines' fp32-to-int conversion)."""
    if d.kind == 'f':
        x = np.asarray(x, dtype=np.float32)
        if d is float32 or d is tfloat32:
            return x
        if d is bfloat16:
            return round_bf16(x)
        if d is float16:
            return x.astype(np.float16).astype(np.float32)
        return _round_table(x, _E4M3 if d is float8_e4m3 else _E5M2)
    if d.kind == 'b':
        return np.asarray(x) != 0
    x = np.asarray(x)
    if x.dtype.kind == 'f':
        x = np.nan_to_num(np.trunc(x), nan=0.0, posinf=0.0, neginf=0.0)
    bits = 8 * d.size
    v = x.astype(np.int64)
    if d.kind == 'u':
        return v & ((1 << bits) - 1)
    v = v & ((1 << bits) - 1)
    return np.where(v >= 1 << (bits - 1), v - (1 << bits), v)


def to_user(x, d):
    """A storage array handed back to the user: the numpy dtype of d; bf16 and fp8 come
    back as float32 arrays tagged with `.nki_dtype` (see Bf16Array)."""
    if d is bfloat16 or d is float8_e4m3 or d is float8_e5m2:
        out = np.ascontiguousarray(x, dtype=np.float32).view(TaggedArray)
        out.nki_dtype = d
        return out
    return np.ascontiguousarray(x).astype(d.np_out, copy=False)


class TaggedArray(np.ndarray):
    """A float32 numpy array that stands for a bfloat16 (or fp8) array: its values are
    exactly representable in that type and `nki_dtype` names it. Kernels given one see an
    input of that dtype; arithmetic on it in numpy is plain float32."""

    def __array_finalize__(self, obj):
        self.nki_dtype = getattr(obj, 'nki_dtype', None)


def tagged(a, d):
    """a (any array-like) rounded to NKI float dtype d and tagged with it."""
    d = as_dtype(d)
    out = cast(np.asarray(a, dtype=np.float32), d).view(TaggedArray)
    out.nki_dtype = d
    return out


def promote(a, b):
    """Result type of a binary op on tiles of dtypes a and b (NKI rules: the same type
    stays; float beats int; two different float types go to fp32)."""
    if a is b:
        return a
    if a.kind == 'f' and b.kind != 'f':
        return a
    if b.kind == 'f' and a.kind != 'f':
        return b
    if a.kind == 'f':
        return float32
    return a if a.size >= b.size else b
