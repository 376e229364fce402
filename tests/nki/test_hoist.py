"""test_hoist.py: the compiler rules that load less than the kernel source asks for:
loop-invariant work done once (invariant.py, `hoist`) and loads served from a buffer that
still holds their bytes (served.py, `serve_loads`). Each kernel runs through the real
binary (listing -> NEFF); numerics are checked against numpy with the rules on and off,
and the HBM bytes the compiled program loads are counted from its DMAs.
"""
import sys

import numpy as np

import harness as H
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

rng = np.random.default_rng(43)


def rnd(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def count(prog, op):
    return sum(1 for ins in prog.ins if ins.op == op)


def line_of(text):
    return H.line_of(__file__, text)


def decisions(prog, kind):
    return [d for d in prog.decisions if d[0] == kind]


@nki.jit
def k_invariant(x, w):
    # out[i, :, j] = exp(x[i]) + exp(w[:, j]): x[i] is loaded and exp'd again in every
    # iteration of j, and w[:, j] in every iteration of i, though neither depends on it
    out = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        for j in nl.affine_range(4):
            ex = nl.exp(nl.load(x[i]))
            ew = nl.exp(nl.load(w[:, j * 128:(j + 1) * 128]))
            nl.store(out[i, :, j * 128:(j + 1) * 128], value=nl.add(ex, ew))
    return out


def _invariant_want(x, w):
    return np.exp(x)[:, :, None, :].repeat(4, 2).reshape(4, 128, 512) + np.exp(w)[None]


def test_invariant_work_done_once():
    x, w = rnd(4, 128, 128), rnd(128, 512)
    want = _invariant_want(x, w)
    k = nki.baremetal(k_invariant, nx_policy='serve_loads=off')
    H.close(k(x, w), want, 1e-4, 1e-4, 'hoisted')
    prog = k.last.prog
    # each exp once per tile it reads, each x and w tile loaded once (the loads that fed
    # only the dropped exps are gone with them)
    assert count(prog, 'act') == 8, count(prog, 'act')
    assert H.loaded_bytes(prog) == x.nbytes + w.nbytes, H.loaded_bytes(prog)
    hoisted = [d[1][1] for d in decisions(prog, 'hoist')]
    assert hoisted == [line_of('ex = nl.exp('), line_of('ew = nl.exp(')], hoisted
    assert 'decision hoist' in k.last.listing
    # as the source says, without the rules: 16 loads of each and 32 exps
    k2 = nki.baremetal(k_invariant, nx_policy='hoist=off,serve_loads=off')
    H.close(k2(x, w), want, 1e-4, 1e-4, 'not hoisted')
    assert H.loaded_bytes(k2.last.prog) == 4 * (x.nbytes + w.nbytes), H.loaded_bytes(k2.last.prog)
    assert count(k2.last.prog, 'act') == 32
    assert not decisions(k2.last.prog, 'hoist')


def test_hoisting_refused_when_the_kept_tiles_do_not_fit():
    # with 3 KiB of SBUF per partition (five sites of 512 B tiles, one live each): keeping
    # exp(x[i]) over the loop of j costs no more space, keeping the four exp(w[:, j]) over
    # the loop of i would (1.5 KiB more): the x side is done once, the w side 16 times
    x, w = rnd(4, 128, 128), rnd(128, 512)
    k = nki.baremetal(k_invariant, nx_policy='sbuf=3072,serve_loads=off')
    H.close(k(x, w), _invariant_want(x, w), 1e-4, 1e-4, 'small SBUF')
    prog = k.last.prog
    hoisted = [d[1][1] for d in decisions(prog, 'hoist')]
    assert hoisted == [line_of('ex = nl.exp(')], hoisted
    assert count(prog, 'act') == 4 + 16, count(prog, 'act')
    assert H.loaded_bytes(prog) == x.nbytes + 4 * w.nbytes, H.loaded_bytes(prog)
    assert prog.spill_save == 0 and prog.spill_reload == 0


@nki.jit
def k_plain(x, w):
    # plain loads read as they are (the Tiled matmul tutorial's pattern): not hoisted
    out = nl.ndarray((4, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        acc = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(8):
            acc = nl.add(acc, nl.multiply(nl.load(x[i]), nl.load(w[j])))
        nl.store(out[i], value=acc)
    return out


def test_plain_loads_not_hoisted():
    x, w = rnd(4, 128, 128), rnd(8, 128, 128)
    want = x * w.sum(0)[None]
    k = nki.baremetal(k_plain, nx_policy='serve_loads=off')
    H.close(k(x, w), want, 1e-3, 1e-3, 'plain loads')
    assert not decisions(k.last.prog, 'hoist')
    assert H.loaded_bytes(k.last.prog) == 8 * x.nbytes + 4 * w.nbytes, H.loaded_bytes(k.last.prog)


@nki.jit
def k_twice(x):
    # rmsnorm's pattern: the same rows loaded again after a first pass over them
    out = nl.ndarray((4, 128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.load(x[i])
        s = nl.sum(nl.multiply(t, t), axis=[1])
        t2 = nl.load(x[i])
        nl.store(out[i], value=nl.multiply(t2, s))
    return out


def test_repeated_load_served_from_the_buffer_holding_it():
    x = rnd(4, 128, 256)
    want = x * (x * x).sum(2, keepdims=True)
    # with hoisting off: the second load finds the first one's buffer still holding x[i]
    k = nki.baremetal(k_twice, nx_policy='hoist=off')
    H.close(k(x), want, 1e-3, 1e-3, 'served')
    prog = k.last.prog
    assert H.loaded_bytes(prog) == x.nbytes, H.loaded_bytes(prog)
    sv = decisions(prog, 'served')
    assert len(sv) == 1 and sv[0][2]['loads'] == 4 and sv[0][2]['bytes'] == x.nbytes, sv
    assert 'decision served' in k.last.listing
    k2 = nki.baremetal(k_twice, nx_policy='hoist=off,serve_loads=off')
    H.close(k2(x), want, 1e-3, 1e-3, 'not served')
    assert H.loaded_bytes(k2.last.prog) == 2 * x.nbytes
    # hoisting leaves plain loads alone
    k3 = nki.baremetal(k_twice, nx_policy='serve_loads=off')
    H.close(k3(x), want, 1e-3, 1e-3, 'hoisting only')
    assert H.loaded_bytes(k3.last.prog) == 2 * x.nbytes


@nki.jit
def k_cycle(x, w):
    # rmsnorm_matmul's weight pattern: the same six w tiles read again for every row block,
    # one live at a time, at a site given fewer buffers than tiles
    out = nl.ndarray((4, 6, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        a = nl.load(x[i])
        for j in nl.affine_range(6):
            t = nl.load(w[j])  # the weight site
            nl.store(out[i, j], value=nl.multiply(a, t))
    return out


def belady_misses(seq, n):
    """Misses of optimal replacement (evict what is needed furthest ahead) with n slots."""
    held, miss = set(), 0
    for i, x in enumerate(seq):
        if x in held:
            continue
        miss += 1
        if len(held) == n:
            ahead = lambda y: seq.index(y, i + 1) if y in seq[i + 1:] else len(seq)
            held.remove(max(held, key=ahead))
        held.add(x)
    return miss


def test_served_buffers_keep_the_tiles_loaded_again_soonest():
    x, w = rnd(4, 128, 128), rnd(6, 128, 128)
    want = x[:, None] * w[None]
    line = line_of('t = nl.load(w[j])')
    tile = w[0].nbytes
    loaded = {}
    for reuse in ('auto', 'turn', 'furthest'):
        for n in (3, 6):
            pol = 'bufs@%d=%d,serve_reuse=%s' % (line, n, reuse)
            k = nki.baremetal(k_cycle, nx_policy=pol)
            H.close(k(x, w), want, 1e-5, 1e-5, pol)
            loaded[reuse, n] = (H.loaded_bytes(k.last.prog) - x.nbytes) // tile
    # a site given the buffers it asks for (bufs@) rotates them: auto is turn there
    assert loaded['auto', 3] == loaded['turn', 3]
    # buffers taken in turn keep nothing of a cycle longer than the site's buffers: every
    # weight load is issued; furthest next use issues what optimal replacement with three
    # buffers misses (16: all 6, then 10 over the three later blocks)
    assert loaded['turn', 3] == 24, loaded
    assert loaded['furthest', 3] == belady_misses(list(range(6)) * 4, 3) == 16, loaded
    # with a buffer per tile both read w once
    assert loaded['turn', 6] == loaded['furthest', 6] == 6, loaded


def test_serve_budget_takes_back_only_the_buffers_keeping_loads():
    x, w = rnd(4, 128, 128), rnd(6, 128, 128)
    want = x[:, None] * w[None]
    line = line_of('t = nl.load(w[j])')
    tile = w[0].nbytes

    def run(pol):
        k = nki.baremetal(k_cycle, nx_policy='target=trn1,bufs@%d=6%s' % (line, pol))
        H.close(k(x, w), want, 1e-5, 1e-5, pol)
        assert not decisions(k.last.prog, 'pool'), pol
        bufs = {d[1][1]: d[2]['bufs'] for d in decisions(k.last.prog, 'alloc')}
        return bufs, (H.loaded_bytes(k.last.prog) - x.nbytes) // tile

    # the kernel's buffers fit trn1's budget (152 KiB): a buffer per weight tile, read once
    bufs, reads = run('')
    assert bufs[line] == 6 and reads == 6, (bufs, reads)
    # a budget smaller than the buffers: the weight site (its loads asked for again) is cut
    # to its live tile and reads every weight again; the sites streaming x and the products
    # (nothing loaded again) keep theirs; the whole SBUF still holds them (no pool)
    bufs, reads = run(',serve_sbuf=1')
    assert bufs[line] == 1 and reads == 24, (bufs, reads)
    assert bufs[line_of('a = nl.load(x[i])')] == 4, bufs
    # room for three weight buffers beside the others (4 x 512 B for x, 4 x 512 B for the
    # products): a site the budget took buffers from keeps the tiles loaded again soonest
    # (serve_reuse=auto), the 16 loads of optimal replacement; in turn, all 24
    bufs, reads = run(',serve_sbuf=%d' % (8 * 512 + 3 * 512))
    assert bufs[line] == 3 and reads == belady_misses(list(range(6)) * 4, 3), (bufs, reads)
    bufs, reads = run(',serve_sbuf=%d,serve_reuse=turn' % (8 * 512 + 3 * 512))
    assert bufs[line] == 3 and reads == 24, (bufs, reads)
    # serve_loads=off: nothing is served, so no buffer is taken back for it
    bufs, reads = run(',serve_sbuf=1,serve_loads=off')
    assert bufs[line] == 6 and reads == 24, (bufs, reads)


@nki.jit
def k_rewritten(x):
    # the same HBM rows loaded again after a store changed them: never served from SBUF
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    a = nl.load(out)
    nl.store(out, value=nl.add(a, 1.0))
    b = nl.load(out)
    nl.store(out, value=nl.multiply(b, 2.0))
    return out


def test_load_after_a_store_to_its_bytes_is_issued():
    x = rnd(128, 256)
    for pol in ('', 'hoist=off', 'serve_loads=off'):
        k = nki.baremetal(k_rewritten, nx_policy=pol or None)
        H.close(k(x), (x + 1.0) * 2.0, 1e-5, 1e-5, 'rewritten ' + pol)
        assert H.loaded_bytes(k.last.prog) == 3 * x.nbytes, (pol, H.loaded_bytes(k.last.prog))
        assert not decisions(k.last.prog, 'served') and not decisions(k.last.prog, 'hoist')


def test_bad_policy_values():
    x = rnd(4, 128, 256)
    H.raises(lambda: nki.baremetal(k_twice, nx_policy='hoist')(x), 'expected key=value')
    try:
        nki.baremetal(k_twice, nx_policy='serve_load=on')(x)
    except Exception as e:
        assert 'serve_loads' in str(e), str(e)
    else:
        raise AssertionError('an unknown policy was accepted')
    H.raises(lambda: nki.baremetal(k_twice, nx_policy='serve_reuse=belady')(x),
             "bad value 'belady' for serve_reuse")


if __name__ == '__main__':
    sys.exit(H.run(sys.modules[__name__]))
