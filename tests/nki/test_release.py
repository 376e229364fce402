"""test_release.py: the pipeline's lean forms change no output. A launch that does not keep
its program (as `nki run` does) frees the recording while its listing is written, and the
listing is the one a launch keeping it writes, byte for byte, also when it is built from
several pieces, and written to its file a slice at a time; a failing `kernel asm` still
names the user's line from the listing's text. Listings go through the real binary
(kernel asm).
"""
import os
import sys

import harness as H
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt
from nx_nki import api, driver, emit, errors, policy


@nki.jit
def k_tiles(a):
    # 1024 loads and 1024 stores of small tiles: a listing of several pieces
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        for j in nl.affine_range(a.shape[1] // 64):
            t = nl.load(a[i * 128:(i + 1) * 128, j * 64:(j + 1) * 64])
            nl.store(out[i * 128:(i + 1) * 128, j * 64:(j + 1) * 64], value=t)
    return out


def _compile(kernel, args, keep):
    pol = policy.make()
    pol.numerics = False
    return api.run(kernel.fn, list(args), {}, (), pol, 'compile', keep_program=keep)


def test_released_listing_is_the_kept_one():
    a = nt.tensor[[4096, 2048], nl.bfloat16]
    kept = _compile(k_tiles, [a], True)
    freed = _compile(k_tiles, [a], False)
    lines = kept.listing.split('\n')
    assert len(lines) > 2 * emit._PIECE_LINES, len(lines)
    assert freed.listing == kept.listing
    assert kept.listing.endswith('\n') and not kept.listing.endswith('\n\n')
    assert sum(1 for x in lines if x.startswith('block ')) == 2048
    # the kept program has its instructions; the freed one neither them nor the recording
    assert len(kept.prog.ins) >= 2048 and len(kept.prog.trace.ins) >= 2048
    assert freed.prog.ins == [] and freed.prog.trace.ins == []
    assert freed.ninstr == kept.ninstr == len(kept.prog.trace.ins)
    assert not any(b.temp and b.kind != 'hbm' for b in freed.prog.trace.bufs)


def test_listing_written_in_slices():
    text = ''.join('line %d %s\n' % (k, 'x' * (k % 97)) for k in range(40000))
    assert len(text) > 2 * emit._WRITE_SLICE
    path = os.path.join(H.tmpdir(), 'sliced.listing')
    with open(path, 'w') as f:
        emit.write(f, text)
    with open(path) as f:
        assert f.read() == text


def test_assemble_error_names_the_line():
    d = H.tmpdir()
    text = ('kernel k\nsource /work/k.py\n'
            '@7 Vector bogus_op src=sbuf[0:1]+0:fp32[1]\n')
    path = os.path.join(d, 'k.listing')
    with open(path, 'w') as f:
        f.write(text)
    try:
        driver.assemble(path, os.path.join(d, 'k.neff'), text)
    except errors.NkiError as e:
        assert e.where == '/work/k.py:7', (e.where, str(e))
        assert 'bogus_op' in str(e), str(e)
    else:
        raise AssertionError('kernel asm accepted an unknown opcode')


if __name__ == '__main__':
    sys.exit(H.run(sys.modules[__name__]))
