"""emit.py: writes a compiled kernel as a kernel listing (docs/formats/listing.md).

Two listing levels: `full` (the listing with every NKI operation: two-op tensor_scalar,
activation bias/scale, reduce negate/axes, reciprocal, scans, bn_stats, 4-D access
patterns, DMA casts, `decision` lines) and `basic` (the original syntax, for an older
neuron-explorer: operations it cannot express are refused with a clear error, never
written as another operation; decisions become comments). The driver probes which one the
binary accepts.
"""
from . import errors
from .ops import ENGINE_NAMES, PE, free_elems
from .numerics import ACT, ALU

_BASIC_DT = {'bfloat16': 'bf16', 'float16': 'fp16', 'float32': 'fp32', 'float8_e4m3': 'fp8',
             'tfloat32': 'tf32', 'int32': 'int32', 'uint8': 'uint8'}
_FULL_DT = dict(_BASIC_DT, float8_e5m2='fp8_e5m2', int8='int8', int16='int16',
                uint16='uint16', uint32='uint32', bool_='uint8')
# lines joined into one piece of the listing at a time: the text is built from pieces, not
# from one list of every line (whose small strings would outweigh the text itself)
_PIECE_LINES = 4096
_BASIC_ACT = {'identity', 'exp', 'relu', 'gelu', 'tanh', 'sigmoid', 'rsqrt', 'square', 'copy'}
_BASIC_ALU = {'add', 'subtract', 'multiply', 'max', 'min', 'divide'}


class EmitError(errors.NkiError):
    pass


def _fail(ins, msg):
    where = '%s:%d' % ins.loc if ins is not None and ins.loc else None
    api = ins.a.get('api') if ins is not None and ins.a else None
    raise EmitError(msg, api, where)


class Emitter:
    def __init__(self, prog, level, source=None, release=False):
        self.prog = prog
        self.release = release    # free the instructions (and temp tiles) once written
        self.level = level
        self.full = level == 'full'
        self.dts = _FULL_DT if self.full else _BASIC_DT
        self.out = []             # the lines not yet joined into a piece
        self.pieces = []
        self.nblock = 0
        self.names = {}
        self.source = source or prog.trace.source
        self.cur_ins = None

    # --- names and types -----------------------------------------------------------------
    def dt(self, d):
        n = self.dts.get(d.name)
        if n is None:
            _fail(self.cur_ins, 'dtype %s is not supported by this neuron-explorer\'s kernel '
                  'listing%s' % (d.name, '' if self.full else ' (it needs the newer listing)'))
        return n

    def loc(self, loc):
        if loc is None:
            return ''
        f, l = loc
        if f == self.source:
            return '@%d ' % l
        if ' ' in f:
            return ''
        return '@%s:%d ' % (f, l)

    # --- access patterns -----------------------------------------------------------------
    def _free(self, axes, merge=True, split=0):
        """The free axes, innermost first, with contiguous neighbours merged (never across
        the boundary after the `split` innermost axes; not at all without merge)."""
        merged = []
        for i, (s, n) in enumerate(reversed(axes[1:])):
            if n == 1:
                continue
            g = i < split
            if merge and merged and merged[-1][2] == g and merged[-1][0] * merged[-1][1] == s:
                merged[-1] = (merged[-1][0], merged[-1][1] * n, g)
            else:
                merged.append((s, n, g))
        return [(s, n) for s, n, _ in merged]

    def ap(self, v, a, merge=True, split=0):
        b = v[0]
        F = b.F
        ds = b.dtype.size
        row, col = divmod(v[2], F)
        n0 = v[3][0][1] if v[3] else 1
        merged = self._free(v[3], merge, split)
        if not merged:
            merged = [(1, 1)]
        lim = 4 if self.full else 2
        if len(merged) > lim:
            _fail(self.cur_ins, 'an access pattern with %d free dims (the listing takes %d)'
                  % (len(merged), lim))
        sizes = ','.join(str(n) for _, n in merged)
        dflt = True
        acc = 1
        for s, n in merged:
            if s != acc:
                dflt = False
            acc *= n
        txt = '%s[%d:%d]+%d:%s[%s]' % ('sbuf' if b.kind == 'sbuf' else 'psum', row, row + n0,
                                       a[1] + col * ds, self.dt(b.dtype), sizes)
        if not dflt:
            if len(merged) == 1 and not self.full:
                txt = txt[:-1] + ',1]{%d,0}' % merged[0][0]
            else:
                txt += '{%s}' % ','.join(str(s) for s, _ in merged)
        return txt

    def chip_side(self, v, a, cast=None):
        """A DMA's on-chip side: contiguous per partition, or None (caller splits)."""
        b = v[0]
        row, col = divmod(v[2], b.F)
        n0 = v[3][0][1] if v[3] else 1
        txt = '%s[%d:%d]+%d' % ('sbuf' if b.kind == 'sbuf' else 'psum', row, row + n0,
                                a[1] + col * b.dtype.size)
        return txt

    def hbm_name(self, b):
        n = self.names.get(id(b))
        if n is None:
            _fail(self.cur_ins, 'internal: undeclared HBM tensor')
        return n

    def hbm_side(self, v):
        """NAME[slices] of an HBM view; one slice per declared dim."""
        b = v[0]
        shape = b.shape
        nd = len(shape)
        strides = [1] * nd
        for d in range(nd - 2, -1, -1):
            strides[d] = strides[d + 1] * shape[d + 1]
        off = v[2]
        start = []
        for d in range(nd):
            start.append((off // strides[d]) % shape[d] if shape[d] else 0)
        cnt = [1] * nd
        step = [1] * nd
        d = nd - 1
        for s, n in reversed(v[3]):
            if n == 1:
                continue
            if s == 0:
                _fail(self.cur_ins, 'a DMA from a broadcast (stride 0) HBM view')
            # one dim with a step
            e = d
            done = False
            while e >= 0:
                if s % strides[e] == 0 and (s // strides[e]) * (n - 1) + start[e] < shape[e] \
                        and s < strides[e] * shape[e]:
                    cnt[e] = n
                    step[e] = s // strides[e]
                    d = e - 1
                    done = True
                    break
                if strides[e] > s:
                    break
                e -= 1
            if done:
                continue
            # a run of whole dims
            e = d
            while e >= 0 and strides[e] < s:
                e -= 1
            if e < 0 or strides[e] != s:
                _fail(self.cur_ins, 'this HBM access pattern is not expressible as DMA '
                      'slices of %s' % (b.describe(),))
            rem = n
            while rem > 1 and e >= 0:
                if rem % shape[e] == 0 and start[e] == 0 and cnt[e] == 1:
                    cnt[e] = shape[e]
                    rem //= shape[e]
                elif start[e] + rem <= shape[e] and cnt[e] == 1:
                    cnt[e] = rem
                    rem = 1
                else:
                    break
                e -= 1
            if rem != 1:
                _fail(self.cur_ins, 'this HBM access pattern is not expressible as DMA '
                      'slices of %s' % (b.describe(),))
            d = e
        sl = []
        for k in range(nd):
            a0 = start[k]
            if cnt[k] == 1:
                sl.append(str(a0))
            elif step[k] == 1:
                sl.append('%d:%d' % (a0, a0 + cnt[k]))
            else:
                sl.append('%d:%d:%d' % (a0, a0 + (cnt[k] - 1) * step[k] + 1, step[k]))
        return '%s[%s]' % (self.hbm_name(b), ', '.join(sl))

    # --- the listing -----------------------------------------------------------------------
    def header(self):
        tr = self.prog.trace
        o = self.out
        o.append('# NKI kernel %s, recorded by the neuron-explorer NKI shim' % tr.name)
        o.append('# policy: %s' % self.prog.pol.describe())
        o.append('kernel %s' % _ident(tr.name))
        if self.source and ' ' not in self.source:
            o.append('source %s' % self.source)
            o.append('frame %s %s:%d' % (_ident(tr.name), self.source, tr.func_line or 1))
        used = set()
        for ins in self.prog.ins:
            if ins.op == 'dma':
                for v in (ins.dst,) + ins.srcs:
                    if v is not None and v[0].kind == 'hbm':
                        used.add(id(v[0]))
        taken = set()
        for b in tr.bufs + ([self.prog.spill] if self.prog.spill is not None else []):
            if b.kind != 'hbm' or (id(b) not in used and b.role not in ('input', 'output')):
                continue
            if id(b) in self.names:
                continue
            base = _ident(b.name or {'input': 'in', 'output': 'out', 'const': 'const'}
                          .get(b.role, 'hbm'))
            n = base
            k = 1
            while n in taken or n in ('sbuf', 'psum'):
                n = '%s_%d' % (base, k)
                k += 1
            taken.add(n)
            self.names[id(b)] = n
            kind = {'input': 'input', 'output': 'output', 'const': 'weight'}.get(b.role,
                                                                                 'internal')
            if b is self.prog.spill and self.full:
                kind = 'spill'    # a "virtual" tensor: the profile counts its spill bytes
            self.cur_ins = None
            dt = _BASIC_DT.get(b.dtype.name) if not self.full else _FULL_DT.get(b.dtype.name)
            if dt is None:
                raise EmitError('%s: dtype %s is not supported yet by this neuron-explorer\'s '
                                'kernel listing' % (b.describe(), b.dtype.name),
                                where='%s:%d' % (tr.source, tr.func_line))
            o.append('tensor %s %s %s %s' % (n, kind, dt,
                                             'x'.join(str(s) for s in b.shape) or '1'))
        for q in self.prog.queues:
            o.append('queue %s %s %s sem=%d' % (q.name, q.type, ENGINE_NAMES[q.owner],
                                                q.stream + 1))
        for kind, loc, d in self.prog.decisions:
            kv = ' '.join('%s=%s' % (k, _word(v)) for k, v in d.items())
            if self.full:
                o.append('%sdecision %s %s' % (self.loc(loc), kind, kv))
            else:
                o.append('# decision %s %s%s' % (kind, kv, ' (%s:%d)' % loc if loc else ''))
        for loc, text in self.prog.trace.notes:
            o.append('# note: %s%s' % (text, ' (%s:%d)' % loc if loc else ''))

    def body(self):
        o = self.out
        nest = ()
        last_stat = None
        ins_list = self.prog.ins
        release = self.release
        if release:
            # each instruction freed once written, and with the last view of a temp tile
            # the tile: the listing's text takes the place of the recording
            self.prog.ins = []
            tr = self.prog.trace
            tr.bufs = [b for b in tr.bufs if not b.temp or b.kind == 'hbm']
        for k in range(len(ins_list)):
            ins = ins_list[k]
            if release:
                ins_list[k] = None
            if len(o) >= _PIECE_LINES:
                o.append('')
                self.pieces.append('\n'.join(o))
                o.clear()
            self.cur_ins = ins
            if ins.nest != nest:
                nest = ins.nest
                if nest:
                    o.append('iter ' + ' '.join(
                        '%s=%d%s' % (_ident(var), val, ('@%d' % line) if f == self.source else '')
                        for var, val, line, f in nest))
                else:
                    o.append('iter')
            L = self.loc(ins.loc)
            eng = ENGINE_NAMES[ins.eng]
            waits = ['wait=S[%d]>=%d' % (S + 1, c * 16 if S >= 5 else c) for S, c in ins.waits]
            for w in waits[:-1]:
                o.append('%s%s event_semaphore %s' % (L, eng, w))
            w = (' ' + waits[-1]) if waits else ''
            sig = (' sig=S[%d]++' % (ins.eng + 1)) if ins.sig and ins.op != 'dma' else ''
            op = ins.op
            if op == 'dma':
                self.dma(ins, L, eng, w)
            elif op == 'mm':
                last_stat = self.matmul(ins, L, w, sig, last_stat)
                continue
            else:
                o.append('%s%s %s%s%s' % (L, eng, self.compute(ins), w, sig))
            if ins.eng == PE:
                last_stat = None

    def dma(self, ins, L, eng, w):
        a = ins.a
        q = a['q']
        name = 'b%d' % self.nblock
        self.nblock += 1
        self.out.append('block %s %s' % (name, q.name))
        d, s = ins.dst, ins.srcs[0]
        ad, asrc = ins.addr[0], ins.addr[1]
        kind = a.get('kind')
        if kind in ('spill_save', 'spill_reload'):
            chip, ca = (s, asrc) if kind == 'spill_save' else (d, ad)
            hb = d if kind == 'spill_save' else s
            P = chip[3][0][1]
            hs = '%s[0:%d, %d:%d]' % (self.hbm_name(hb[0]), P, hb[2], hb[2] + a['spill_bytes'])
            cs = self.chip_side(chip, ca)
            if kind == 'spill_save':
                self.out.append('  desc %s -> %s' % (cs, hs))
            else:
                self.out.append('  desc %s -> %s' % (hs, cs))
        else:
            self.out.extend(self.descs(ins, d, ad, s, asrc))
        self.out.append('%s%s dma_trigger block=%s%s' % (L, eng, name, w))

    def descs(self, ins, d, ad, s, asrc):
        """Descriptor lines; a non-contiguous on-chip side is split into contiguous runs."""
        out = []
        chip_d = d[0].kind != 'hbm'
        chip_s = s[0].kind != 'hbm'
        tr = ' transpose' if ins.a.get('tr') else ''
        if tr:
            self.need_full('a DMA transpose')
        cast = ''
        if d[0].dtype is not s[0].dtype:
            self.need_full('a DMA with a dtype cast (%s to %s)' % (s[0].dtype.name,
                                                                   d[0].dtype.name))
        if chip_d and not chip_s and d[0].dtype is not s[0].dtype:
            cast = ':' + self.dt(d[0].dtype)
        if chip_s and not chip_d and d[0].dtype is not s[0].dtype and self.full:
            cast = ''
        pieces = self._pieces(d if chip_d else s, s if chip_d else d) \
            if (chip_d != chip_s) and not tr else [(d, s)]
        for dv, sv in pieces:
            if chip_d and chip_s:
                ds = self.chip_side(dv, ad)
                ss = self.chip_side(sv, asrc) + ':%s[%d]' % (self.dt(sv[0].dtype), free_elems(sv))
                if dv[0].dtype is not sv[0].dtype and self.full:
                    ds += ':' + self.dt(dv[0].dtype)
            else:
                ss = self.chip_side(sv, asrc) if chip_s else self.hbm_side(sv)
                ds = self.chip_side(dv, ad) + cast if chip_d else self.hbm_side(dv)
                if chip_s and not chip_d and sv[0].dtype is not dv[0].dtype and self.full:
                    ss += ':%s[%d]' % (self.dt(sv[0].dtype), free_elems(sv))
            out.append('  desc %s -> %s%s' % (ss, ds, tr))
        return out

    def _pieces(self, chip, other):
        """Splits a DMA so that each piece's on-chip side is contiguous per partition."""
        merged = self._free(chip[3])
        if len(merged) <= 1 and (not merged or merged[0][0] == 1):
            return [self._orient(chip, other)]
        # walk the outer free axes of the on-chip view; the HBM view has the same sizes
        inner = merged[0]
        if inner[0] != 1:
            inner = (1, 1)
        n_outer = 1
        for s, n in merged[1 if inner[1] > 1 else 0:]:
            n_outer *= n
        if n_outer > 512:
            _fail(self.cur_ins, 'a DMA to a strided on-chip view would need %d descriptors'
                  % n_outer)
        cs = _elems_axes(chip[3])
        os_ = _elems_axes(other[3])
        if [n for _, n in cs] != [n for _, n in os_]:
            # same total, different shapes: only contiguous-to-contiguous is supported
            _fail(self.cur_ins, 'a DMA whose two sides have different shapes %s and %s'
                  % ([n for _, n in cs], [n for _, n in os_]))
        out = []
        # iterate over all axes but the partition and the innermost contiguous one
        inner_n = inner[1]
        k_axes = [(i, n) for i, (s, n) in enumerate(cs) if i > 0]
        # find the innermost axis of the chip side that is contiguous with size inner_n
        last = len(cs) - 1
        while last > 0 and cs[last][1] == 1:
            last -= 1
        if cs[last][0] == 1 and cs[last][1] == inner_n:
            loop_axes = [i for i, _ in k_axes if i != last]
        else:
            loop_axes = [i for i, _ in k_axes]
            last = None
        idx = [0] * len(cs)

        def rec(j):
            if j == len(loop_axes):
                co = chip[2] + sum(cs[i][0] * idx[i] for i in loop_axes)
                oo = other[2] + sum(os_[i][0] * idx[i] for i in loop_axes)
                ca = ((cs[0][0], cs[0][1]),) + (((1, inner_n),) if last is not None else ())
                oa = ((os_[0][0], os_[0][1]),) + (((os_[last][0], inner_n),)
                                                   if last is not None else ())
                out.append(self._orient((chip[0], chip[1], co, ca), (other[0], other[1], oo, oa)))
                return
            i = loop_axes[j]
            for t in range(cs[i][1]):
                idx[i] = t
                rec(j + 1)
            idx[i] = 0
        rec(0)
        return out

    def _orient(self, chip, other):
        return (chip, other) if self.cur_ins.dst[0].kind != 'hbm' else (other, chip)

    def matmul(self, ins, L, w, sig, last_stat):
        a = ins.a
        o = self.out
        stat, mov = ins.srcs
        sa, ma = ins.addr[1], ins.addr[2]
        flags = ' transpose' if a.get('tr') else ''
        if a.get('ident'):
            # nc_transpose: the identity goes through ldweights, the data moves
            stat, mov = ins.srcs[1], ins.srcs[0]
            sa, ma = ins.addr[2], ins.addr[1]
        st = self.ap(stat, sa)
        key = (st, ins.a.get('gen'))
        sw = ['wait=S[%d]>=%d' % (S + 1, c * 16 if S >= 5 else c) for S, c in ins.swaits]
        if last_stat == key and self.prog.pol.stationary_reuse and not flags and not sw:
            pass
        else:
            for x in sw[:-1]:
                o.append('%sTensor event_semaphore %s' % (L, x))
            o.append('%sTensor ldweights src=%s%s%s' % (L, st, flags, (' ' + sw[-1]) if sw
                                                        else ''))
        o.append('%sTensor matmul src=%s dst=%s%s%s%s%s' % (
            L, self.ap(mov, ma), self.ap(ins.dst, ins.addr[0]), ' acc' if a.get('acc') else '',
            flags, w, sig))
        return key if not flags else None

    def compute(self, ins):
        op = ins.op
        a = ins.a
        A = ins.addr
        d = 'dst=%s' % self.ap(ins.dst, A[0])
        if op == 'copy':
            return 'tensor_copy src=%s %s' % (self.ap(ins.srcs[0], A[1]), d)
        if op == 'memset':
            return 'memset %s imm=%s' % (d, _num(a['value']))
        if op == 'tt':
            return 'tensor_tensor alu=%s src=%s src1=%s %s' % (
                self.alu(a['alu']), self.ap(ins.srcs[0], A[1]), self.ap(ins.srcs[1], A[2]), d)
        if op == 'ts':
            return self.tensor_scalar(ins, d)
        if op == 'tr':
            return self.reduce(ins, d)
        if op == 'act':
            return self.activate(ins, d)
        if op == 'recip':
            if self.full:
                return 'reciprocal src=%s %s' % (self.ap(ins.srcs[0], A[1]), d)
            return 'tensor_scalar alu=div imm=1 src=%s %s' % (self.ap(ins.srcs[0], A[1]), d)
        if op == 'iota':
            if not self.full:
                return 'iota %s' % d
            return 'iota dst=%s%s' % (self.ap(ins.dst, A[0], merge=False), self._pattern(ins, a))
        if op == 'dve_t':
            self.need_full('a Vector-engine transpose')
            return 'transpose src=%s %s' % (self.ap(ins.srcs[0], A[1]), d)
        if op == 'scan':
            self.need_full('tensor_tensor_scan')
            ini = a['initial']
            k = 3
            if ini is None:
                ini_s = self.ap(ins.srcs[2], A[3])
            else:
                ini_s = _num(ini)
            return 'tensor_tensor_scan src=%s src1=%s %s op0=%s op1=%s initial=%s' % (
                self.ap(ins.srcs[0], A[1]), self.ap(ins.srcs[1], A[2]), d, self.alu(a['op0']),
                self.alu(a['op1']), ini_s)
        if op in ('bn_stats', 'bn_aggr'):
            self.need_full(op)
            return '%s src=%s %s' % (op, self.ap(ins.srcs[0], A[1]), d)
        if op == 'select':
            self.need_full('affine_select')
            return 'affine_select src=%s dst=%s cmp_op=%s on_false_value=%s%s' % (
                self.ap(ins.srcs[0], A[1], merge=False), self.ap(ins.dst, A[0], merge=False),
                self.alu(a['cmp']), _num(a['false']), self._pattern(ins, a))
        if op == 'stt':
            self.need_full('scalar_tensor_tensor')
            o0 = _num(a['imm0']) if a['imm0'] is not None else self.ap(ins.srcs[2], A[3])
            return 'scalar_tensor_tensor src=%s src1=%s %s op0=%s operand0=%s op1=%s%s' % (
                self.ap(ins.srcs[0], A[1]), self.ap(ins.srcs[1], A[2]), d, self.alu(a['op0']),
                o0, self.alu(a['op1']), ' reverse0' if a.get('rev0') else '')
        if op == 'tsr':
            self.need_full('tensor_scalar_reduce')
            o0 = _num(a['imm0']) if a['imm0'] is not None else self.ap(ins.srcs[1], A[2])
            r = a['res_idx']
            return ('tensor_scalar_reduce src=%s %s op0=%s operand0=%s reduce_op=%s '
                    'reduce_res=%s%s') % (self.ap(ins.srcs[0], A[1]), d, self.alu(a['op0']), o0,
                                         self.alu(a['rop']), self.ap(ins.srcs[r], A[r + 1]),
                                         ' reverse0' if a.get('rev0') else '')
        _fail(ins, 'internal: no listing form for %s' % op)

    def need_full(self, what):
        if not self.full:
            _fail(self.cur_ins, '%s is not supported yet by this neuron-explorer (its kernel '
                  'listing lacks the operation)' % what)

    def alu(self, name):
        if not self.full and name not in _BASIC_ALU:
            _fail(self.cur_ins, 'ALU operation %s is not supported yet by this '
                  'neuron-explorer\'s kernel listing' % name)
        return ALU[name][1]

    def _pattern(self, ins, a):
        # iota / affine_select: value = const + channel_multiplier*p + sum pattern_i * j_i
        axes = ins.dst[3]
        rank = a['rank']
        coef = {}
        for p, n, c in a['terms']:
            coef[rank + p] = c
        cm = coef.get(0, 0)
        pat = [coef.get(i, 0) for i in range(1, len(axes)) if axes[i][1] != 1]
        pat.reverse()
        s = ' offset=%d channel_multiplier=%d' % (a['const'], cm)
        if pat:
            s += ' pattern={%s}' % ','.join(str(x) for x in pat)
        return s

    def tensor_scalar(self, ins, d):
        a = ins.a
        A = ins.addr
        src = self.ap(ins.srcs[0], A[1])
        if not self.full:
            if a['op1'] is not None:
                _fail(ins, 'a two-operation tensor_scalar is not supported yet by this '
                      'neuron-explorer\'s kernel listing')
            s = 'tensor_scalar alu=%s src=%s %s' % (self.alu(a['op0']), src, d)
            if a['imm0'] is not None and not a['rev0']:
                s += ' imm=%s' % _num(a['imm0'])
            elif a['imm0'] is not None:
                _fail(ins, 'a reversed tensor_scalar is not supported yet by this '
                      'neuron-explorer\'s kernel listing')
            return s
        k = 2
        if a['ap0']:
            o0 = self.ap(ins.srcs[1], A[2])
            k = 3
        else:
            o0 = _num(a['imm0'])
        s = 'tensor_scalar src=%s %s op0=%s operand0=%s%s' % (
            src, d, self.alu(a['op0']), o0, ' reverse0' if a['rev0'] else '')
        if a['op1'] is not None:
            o1 = self.ap(ins.srcs[k - 1], A[k]) if a['ap1'] else _num(a['imm1'])
            s += ' op1=%s operand1=%s%s' % (self.alu(a['op1']), o1,
                                            ' reverse1' if a['rev1'] else '')
        return s

    def reduce(self, ins, d):
        a = ins.a
        sv = ins.srcs[0]
        nred = a['naxes']
        kept = [n for _, n in sv[3][1:len(sv[3]) - nred] if n != 1]
        src = self.ap(sv, ins.addr[1], split=nred)
        if self.full:
            # the reduced axes are the innermost ones of src's pattern
            nr_axes = len(self._free(((1, 1),) + tuple(sv[3][len(sv[3]) - nred:]), True, 0))
            s = 'tensor_reduce alu=%s src=%s %s axes=%d' % (self.alu(a['alu']), src, d,
                                                          max(1, nr_axes))
            if a['negate']:
                s += ' negate'
            return s
        if kept:
            self.need_full('a reduction that keeps some free axes')
        s = 'tensor_reduce alu=%s src=%s %s' % (self.alu(a['alu']), src, d)
        if a['negate']:
            # the original listing has no negate flag: the project's own generators write
            # the negation as a multiply by -1 on the result, and so does this
            s += '\n%s%s tensor_scalar alu=mul imm=-1 src=%s %s' % (
                self.loc(ins.loc), ENGINE_NAMES[ins.eng], self.ap(ins.dst, ins.addr[0]), d)
        return s

    def activate(self, ins, d):
        a = ins.a
        A = ins.addr
        fn = a['fn']
        spell = ACT[fn][1]
        if not self.full and fn not in _BASIC_ACT:
            _fail(ins, 'activation %s is not supported yet by this neuron-explorer\'s kernel '
                  'listing' % fn)
        s = 'activate act=%s src=%s %s' % (spell, self.ap(ins.srcs[0], A[1]), d)
        k = 1
        if a['bias_ap']:
            if self.full:
                s += ' bias=%s' % self.ap(ins.srcs[k], A[k + 1])
            k += 1
        elif a['bias'] and self.full:
            s += ' bias=%s' % _num(a['bias'])
        if a['scale_ap']:
            if self.full:
                s += ' scale=%s' % self.ap(ins.srcs[k], A[k + 1])
            else:
                _fail(ins, 'an activation scale tile is not supported yet by this '
                      'neuron-explorer\'s kernel listing')
        elif a['scale'] is not None and a['scale'] != 1.0:
            s += (' scale=%s' if self.full else ' imm=%s') % _num(a['scale'])
        if a.get('reduce'):
            self.need_full('activation with a reduction')
            r = a['res_idx']
            s += ' reduce_op=%s reduce_res=%s' % (self.alu(a['reduce']),
                                                  self.ap(ins.srcs[r], A[r + 1]))
        return s

    def text(self):
        self.header()
        self.body()
        self.out.append('')
        self.pieces.append('\n'.join(self.out))
        self.out = []
        text = ''.join(self.pieces)      # (each piece ends with its newline)
        self.pieces = []
        return text


def _elems_axes(axes):
    return [(s, n) for s, n in axes if n != 1] or [(1, 1)]


def _num(x):
    x = float(x)
    if x == int(x) and abs(x) < 1e15:
        return '%d' % int(x)
    return repr(x)


_IDENTS = {}


def _ident(s):
    out = _IDENTS.get(s)
    if out is not None:
        return out
    out = ''.join(c if c.isalnum() or c == '_' else '_' for c in str(s))
    if not out or out[0].isdigit():
        out = 't' + out
    _IDENTS[s] = out
    return out


def _word(v):
    s = str(v)
    return ''.join(c if not c.isspace() and c != '#' else '_' for c in s) or '-'


def listing(prog, level, release=False):
    """The listing's text; with release, prog's instructions are freed as they are
    written (prog.ins is then empty)."""
    return Emitter(prog, level, release=release).text()


_WRITE_SLICE = 1 << 20


def write(f, text):
    """Writes a listing's text to text file f a slice at a time (one write would encode a
    copy of the whole text first)."""
    for k in range(0, len(text), _WRITE_SLICE):
        f.write(text[k:k + _WRITE_SLICE])
