"""index.py: legacy NKI index grids (nl.arange, nl.mgrid), their affine expressions and
mask predicates.

An index expression is an affine form `const + sum(coef * axis)` over grid axes. An axis is
identified by its position counted from the end of its grid (numpy broadcasting aligns
trailing dimensions), so `nl.arange(128)[:, None]` is axis -2 of size 128 and
`nl.arange(512)[None, :]` axis -1 of size 512. A mask is a conjunction of bounds on single
axes; each clips one axis of the instruction it is given to.
"""


class IndexExpr:
    __slots__ = ('const', 'terms', 'rank')

    def __init__(self, const, terms, rank):
        self.const = const
        self.terms = terms          # ((negpos, size, coef), ...) sorted by negpos
        self.rank = rank

    # --- arithmetic -------------------------------------------------------------
    def _combine(self, other, sign):
        if isinstance(other, IndexExpr):
            t = dict(((p, n), c) for p, n, c in self.terms)
            for p, n, c in other.terms:
                t[(p, n)] = t.get((p, n), 0) + sign * c
            terms = tuple(sorted((p, n, c) for (p, n), c in t.items() if c))
            _check_sizes(terms)
            return IndexExpr(self.const + sign * other.const, terms, max(self.rank, other.rank))
        other = _int(other)
        return IndexExpr(self.const + sign * other, self.terms, self.rank)

    def __add__(self, o):
        return self._combine(o, 1)

    __radd__ = __add__

    def __sub__(self, o):
        return self._combine(o, -1)

    def __rsub__(self, o):
        return (-self)._combine(o, 1)

    def __neg__(self):
        return IndexExpr(-self.const, tuple((p, n, -c) for p, n, c in self.terms), self.rank)

    def __mul__(self, o):
        o = _int(o)
        return IndexExpr(self.const * o, tuple((p, n, c * o) for p, n, c in self.terms if c * o),
                         self.rank)

    __rmul__ = __mul__

    def __floordiv__(self, o):
        o = _int(o)
        if any(c % o for _, _, c in self.terms) or self.const % o:
            raise TypeError('index expression // %d is not affine' % o)
        return IndexExpr(self.const // o, tuple((p, n, c // o) for p, n, c in self.terms),
                         self.rank)

    # --- reshaping like numpy: [:, None], [None, :] ------------------------------
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        old = self.rank
        nslices = sum(1 for k in key if isinstance(k, slice))
        if nslices != old or any(k is not None and not isinstance(k, slice) for k in key):
            raise TypeError('index grids are reshaped with ":" and None only')
        newrank = len(key)
        # old axis j (from the front) -> new position of the j-th slice
        posmap = {}
        j = 0
        for i, k in enumerate(key):
            if isinstance(k, slice):
                posmap[j - old] = i - newrank
                j += 1
        return IndexExpr(self.const, tuple(sorted((posmap[p], n, c) for p, n, c in self.terms)),
                         newrank)

    @property
    def shape(self):
        s = [1] * self.rank
        for p, n, _ in self.terms:
            s[self.rank + p] = n
        return tuple(s)

    # --- masks --------------------------------------------------------------------
    def _bound(self, bound, kind):
        bound = _int(bound)
        if len(self.terms) != 1:
            raise TypeError('a mask must bound one index axis (affine_select handles '
                            'predicates over several axes)')
        p, n, c = self.terms[0]
        if c not in (1, -1):
            raise TypeError('a mask must bound an axis with coefficient 1 or -1')
        # c*a + const (kind) bound  ->  a in [lo, hi)
        if c == -1:
            kind = {'lt': 'gt', 'le': 'ge', 'gt': 'lt', 'ge': 'le'}[kind]
            bound, const = -bound, -self.const
        else:
            const = self.const
        b = bound - const
        lo, hi = 0, n
        if kind == 'lt':
            hi = min(n, b)
        elif kind == 'le':
            hi = min(n, b + 1)
        elif kind == 'gt':
            lo = max(0, b + 1)
        else:
            lo = max(0, b)
        return Mask(((p, self.rank, n, lo, hi),))

    def __lt__(self, b):
        return self._bound(b, 'lt')

    def __le__(self, b):
        return self._bound(b, 'le')

    def __gt__(self, b):
        return self._bound(b, 'gt')

    def __ge__(self, b):
        return self._bound(b, 'ge')

    def __repr__(self):
        return 'IndexExpr(%d + %r)' % (self.const, self.terms)

    def __hash__(self):
        return id(self)

    def __index__(self):
        if self.terms:
            raise TypeError('an index grid is not a single integer')
        return self.const


def _check_sizes(terms):
    seen = {}
    for p, n, _ in terms:
        if seen.setdefault(p, n) != n:
            raise TypeError('index grids of sizes %d and %d on the same axis' % (seen[p], n))


def _int(x):
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x
    try:
        return int(x.__index__())
    except (AttributeError, TypeError):
        raise TypeError('index arithmetic needs integers, got %r' % (x,)) from None


class Mask:
    """A conjunction of single-axis bounds: ((negpos, rank, size, lo, hi), ...)."""
    __slots__ = ('conds',)

    def __init__(self, conds):
        self.conds = conds

    def __and__(self, o):
        if o is None or o is True:
            return self
        if not isinstance(o, Mask):
            raise TypeError('masks combine with & only')
        return Mask(self.conds + o.conds)

    __rand__ = __and__

    def clips(self):
        """{position from the front: (lo, hi)} intersected over the conditions."""
        out = {}
        for p, rank, n, lo, hi in self.conds:
            pos = rank + p
            a, b = out.get(pos, (0, 1 << 62))
            out[pos] = (max(a, lo), min(b, hi))
        return out

    def __bool__(self):
        raise TypeError('use & (not "and") to combine masks')


def arange(*args):
    if len(args) == 1:
        start, stop = 0, _int(args[0])
    elif len(args) == 2:
        start, stop = _int(args[0]), _int(args[1])
    else:
        raise TypeError('nl.arange takes (stop) or (start, stop)')
    n = stop - start
    if n <= 0:
        raise TypeError('nl.arange of an empty range')
    return IndexExpr(start, ((-1, n, 1),), 1)


class Grid(tuple):
    """What nl.mgrid[...] returns: the per-axis expressions, also as .p, .x, .y, .z."""

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]

    @property
    def y(self):
        return self[2]

    @property
    def z(self):
        return self[3]


class _MGrid:
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        rank = len(key)
        out = []
        for i, s in enumerate(key):
            if not isinstance(s, slice) or s.stop is None or (s.step not in (None, 1)):
                raise TypeError('nl.mgrid takes start:stop slices')
            start = s.start or 0
            n = _int(s.stop) - _int(start)
            if n <= 0:
                raise TypeError('nl.mgrid of an empty range')
            out.append(IndexExpr(_int(start), ((i - rank, n, 1),), rank))
        return Grid(out)


mgrid = _MGrid()
