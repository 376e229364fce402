"""served.py: loads served from SBUF (redundant-load elimination).

A load whose HBM bytes an earlier load already put into an SBUF buffer that still holds
them is not issued: the new tile takes that buffer and its readers read it there. A buffer
still holds a load's bytes while no other tile has been given it, nothing has written the
tile since, and nothing has written to that HBM tensor since (docs/nki.md, "Compiler
decisions", served loads). The allocation (compiler.py, _assign) asks this record as it
hands out buffers; only a buffer whose tile is dead (back on its site's free list) serves.
Which free buffer a new tile takes is the policy `serve_reuse`: `turn` (the one freed
longest ago), `furthest` (Reuse below: the one whose held bytes are loaded again furthest
ahead, or never: optimal replacement among the buffers a site has), or `auto` (the default:
furthest at the sites the served-loads budget (`serve_sbuf`) took buffers from, in turn at
the others, whose buffers rotate for the overlap of loads and compute).
"""
import bisect

from . import remat


def load_key(ins):
    """What a load brings into SBUF, as a key equal for loads of the same bytes into tiles of
    the same shape and type: None for anything but a plain whole-tile load (the compiler's
    own re-loads, remat.py, included: those are re-issued on purpose)."""
    if ins.op != 'dma' or ins.a.get('reload'):
        return None
    r = remat.loaded_whole(ins)
    if r is None:
        return None
    src = r[0]
    b = ins.dst[0]
    return (src[0], src[2], src[3], b.dtype, b.P, b.F)


def load_keys(ins_list):
    """load_key of every instruction of ins_list, in order."""
    return [load_key(ins) if ins.op == 'dma' else None for ins in ins_list]


def loaded_again(ins_list, keys, site_of):
    """The allocation sites (site_of: (buf, blk) -> site) of tiles whose loaded bytes a later
    whole-tile load asks for again: the sites whose extra buffers would serve it. keys: the
    instructions' load keys (load_keys)."""
    last = {}
    again = set()
    for ins, key in zip(ins_list, keys):
        if key is None:
            continue
        if key in last:
            again.add(last[key])
        last[key] = site_of(ins.dst)
    return again


class Held:
    """The SBUF buffers (slot ids) that still hold the bytes of a whole-tile load."""

    __slots__ = ('by_key', 'of_slot')

    def __init__(self):
        self.by_key = {}          # load key -> slot id
        self.of_slot = {}         # slot id -> load key

    def find(self, key):
        return self.by_key.get(key) if key is not None else None

    def forget(self, slot):
        """Slot `slot` was written or given to another tile."""
        key = self.of_slot.pop(slot, None)
        if key is not None and self.by_key.get(key) == slot:
            del self.by_key[key]

    def fill(self, slot, key):
        self.forget(slot)
        if key is None:
            return
        old = self.by_key.get(key)
        if old is not None:
            del self.of_slot[old]
        self.by_key[key] = slot
        self.of_slot[slot] = key

    def hbm_written(self, buf):
        """A store (or any write) to HBM tensor `buf`: no buffer holds its bytes any more."""
        gone = [k for k in self.by_key if k[0] is buf]
        for k in gone:
            del self.of_slot[self.by_key.pop(k)]


class Reuse:
    """Furthest next use: a site's free buffer for a new tile is the one whose held bytes
    the program loads again furthest ahead (a buffer holding nothing a later load asks for
    first, in turn), so the buffers a loop keeps hold the tiles needed soonest."""

    __slots__ = ('at',)
    NEVER = 1 << 60

    def __init__(self, keys):
        """keys: the instructions' load keys (load_keys)."""
        self.at = {}              # load key -> indices of the loads asking for those bytes
        for k, key in enumerate(keys):
            if key is not None:
                self.at.setdefault(key, []).append(k)

    def next_load(self, key, k):
        """The first instruction after k loading the bytes of `key` (NEVER: none)."""
        ks = self.at.get(key) if key is not None else None
        if not ks:
            return self.NEVER
        j = bisect.bisect_right(ks, k)
        return ks[j] if j < len(ks) else self.NEVER

    def take(self, free, held, k):
        """Removes from deque `free` (slot id, addr) pairs and returns the buffer a tile
        allocated at instruction k takes."""
        best, bnext = None, -1
        for a in free:
            nxt = self.next_load(held.of_slot.get(a[0]), k)
            if nxt > bnext:
                best, bnext = a, nxt
                if nxt == self.NEVER:
                    break
        free.remove(best)
        return best
