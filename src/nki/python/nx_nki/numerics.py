"""numerics.py: what each engine operation computes, on float32 numpy arrays.

ALU operations (tensor_tensor, tensor_scalar, reductions), activation functions and
their listing spellings. Results are rounded to the destination dtype by the caller.
"""
import numpy as np

_f = np.float32


def _erf(x):
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf
    x = np.asarray(x, dtype=np.float64)
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-a * a)
    return (s * y).astype(np.float32)


def _gelu(x):
    return (0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))).astype(np.float32)


def _gelu_tanh(x):
    return (0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))).astype(_f)


def _sigmoid(x):
    with np.errstate(over='ignore'):
        return (1.0 / (1.0 + np.exp(-x))).astype(_f)


def _softplus(x):
    with np.errstate(over='ignore'):
        return np.logaddexp(0, x).astype(_f)


def _safe(fn):
    def g(x):
        with np.errstate(all='ignore'):
            return fn(x).astype(_f, copy=False)
    return g


# name -> (numpy function, listing act= spelling or None when the listing lacks it)
ACT = {
    'identity': (lambda x: x, 'identity'),
    'copy': (lambda x: x, 'copy'),
    'exp': (_safe(np.exp), 'exp'),
    'log': (_safe(np.log), 'log'),
    'tanh': (_safe(np.tanh), 'tanh'),
    'sigmoid': (_sigmoid, 'sigmoid'),
    'relu': (lambda x: np.maximum(x, 0).astype(_f), 'relu'),
    'gelu': (_gelu, 'gelu'),
    'gelu_apprx_tanh': (_gelu_tanh, 'gelu_apprx_tanh'),
    'gelu_dx': (lambda x: (_erf(x / np.sqrt(2.0)) * 0.5 + 0.5 +
                           x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)).astype(_f), 'gelu_dx'),
    'silu': (lambda x: (x * _sigmoid(x)).astype(_f), 'silu'),
    'silu_dx': (lambda x: (_sigmoid(x) * (1 + x * (1 - _sigmoid(x)))).astype(_f), 'silu_dx'),
    'sqrt': (_safe(np.sqrt), 'sqrt'),
    'rsqrt': (_safe(lambda x: 1.0 / np.sqrt(x)), 'rsqrt'),
    'square': (lambda x: (x * x).astype(_f), 'square'),
    'abs': (lambda x: np.abs(x), 'abs'),
    'sign': (lambda x: np.sign(x).astype(_f), 'sign'),
    'sin': (_safe(np.sin), 'sin'),
    'cos': (_safe(np.cos), 'cos'),
    'arctan': (_safe(np.arctan), 'arctan'),
    'erf': (_erf, 'erf'),
    'erf_dx': (lambda x: (2 / np.sqrt(np.pi) * np.exp(-x * x)).astype(_f), 'erf_dx'),
    'softplus': (_softplus, 'softplus'),
    'mish': (lambda x: (x * np.tanh(_softplus(x))).astype(_f), 'mish'),
    'reciprocal': (_safe(lambda x: 1.0 / x), 'reciprocal'),
    'negative': (lambda x: -x, 'negative'),
    'ceil': (np.ceil, 'ceil'),
    'floor': (np.floor, 'floor'),
    'trunc': (np.trunc, 'trunc'),
}


def _cmp(fn):
    return lambda a, b: fn(a, b).astype(_f)


def _ints(fn):
    def g(a, b):
        return fn(np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64)).astype(_f)
    return g


# name -> (binary numpy function, listing alu= spelling, reduction identity or None)
ALU = {
    'add': (np.add, 'add', 0.0),
    'subtract': (np.subtract, 'sub', None),
    'multiply': (np.multiply, 'mul', 1.0),
    'divide': (lambda a, b: np.divide(a, b, dtype=_f), 'div', None),
    'max': (np.maximum, 'max', -np.inf),
    'min': (np.minimum, 'min', np.inf),
    'power': (lambda a, b: np.power(a, b, dtype=_f), 'pow', None),
    'equal': (_cmp(np.equal), 'is_equal', None),
    'not_equal': (_cmp(np.not_equal), 'not_equal', None),
    'greater': (_cmp(np.greater), 'is_gt', None),
    'greater_equal': (_cmp(np.greater_equal), 'is_ge', None),
    'less': (_cmp(np.less), 'is_lt', None),
    'less_equal': (_cmp(np.less_equal), 'is_le', None),
    'logical_and': (_cmp(np.logical_and), 'logical_and', None),
    'logical_or': (_cmp(np.logical_or), 'logical_or', None),
    'logical_xor': (_cmp(np.logical_xor), 'logical_xor', None),
    'bitwise_and': (_ints(np.bitwise_and), 'bitwise_and', None),
    'bitwise_or': (_ints(np.bitwise_or), 'bitwise_or', None),
    'bitwise_xor': (_ints(np.bitwise_xor), 'bitwise_xor', None),
    'left_shift': (_ints(np.left_shift), 'logical_shift_left', None),
    'right_shift': (_ints(np.right_shift), 'logical_shift_right', None),
    'abs_max': (lambda a, b: np.maximum(np.abs(a), np.abs(b)), 'abs_max', 0.0),
    'mod': (lambda a, b: np.mod(a, b, dtype=_f), 'mod', None),
    'bypass': (lambda a, b: np.asarray(a, dtype=_f), 'bypass', None),
}


def alu(name, a, b):
    with np.errstate(all='ignore'):
        return ALU[name][0](a, b)


def reduce(name, x, axes):
    """Reduction `name` over the given axes of x (keepdims)."""
    x = np.asarray(x, dtype=np.float32)
    if name == 'add':
        return np.sum(x, axis=axes, keepdims=True, dtype=np.float32)
    if name == 'max':
        return np.max(x, axis=axes, keepdims=True)
    if name == 'min':
        return np.min(x, axis=axes, keepdims=True)
    if name == 'multiply':
        return np.prod(x, axis=axes, keepdims=True, dtype=np.float32)
    if name == 'abs_max':
        return np.max(np.abs(x), axis=axes, keepdims=True)
    if name in ('bitwise_and', 'bitwise_or', 'bitwise_xor', 'logical_and', 'logical_or'):
        fn = {'bitwise_and': np.bitwise_and, 'bitwise_or': np.bitwise_or,
              'bitwise_xor': np.bitwise_xor, 'logical_and': np.logical_and,
              'logical_or': np.logical_or}[name]
        return fn.reduce(x.astype(np.int64), axis=axes, keepdims=True).astype(np.float32)
    raise KeyError(name)
