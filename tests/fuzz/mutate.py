#!/usr/bin/env python3
"""mutate.py SEED_FILE OUT RNG_SEED: OUT is SEED_FILE with 1 to 4 mutations.

The mutations a damaged disk, a cut copy or a hostile hand makes: bits
flipped, bytes and integers overwritten with edge values, a range cut out,
repeated or moved, the file cut short.  Most outputs then have their
header's and sections' CRCs recomputed (the layout of docs/trace-format.md, as
tests/fuzz/fuzz-reader.c does), so the mutation reaches the parsers behind
the checksums instead of stopping at them.  Prints what it did, one line.
"""
import random
import struct
import sys
import zlib

MAGIC = b"\x89IFT\r\n\x1a\n"
EDGE_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff]
EDGE_INTS = [0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0xffff, 0x7fffffff,
             0x80000000, 0xffffffff, 0x7fffffffffffffff, 0x8000000000000000,
             0xffffffffffffffff]


def fix_checksums(p):
    """The header's CRC and each whole section's, walked by their lengths."""
    if len(p) < 64 or p[:8] != MAGIC:
        return
    p[60:64] = struct.pack("<I", zlib.crc32(bytes(p[:60])))
    off = 64
    while len(p) - off >= 24 and p[off:off + 4] == b"ISEC":
        n = struct.unpack_from("<Q", p, off + 8)[0]
        if n > len(p) - off - 24:
            break
        p[off + 16:off + 20] = struct.pack("<I", zlib.crc32(bytes(p[off + 24:off + 24 + n])))
        p[off + 20:off + 24] = struct.pack("<I", zlib.crc32(bytes(p[off:off + 20])))
        off += 24 + n


def sections(p):
    """Offsets of the section headers: most mutations land near one."""
    out, off = [], 64
    while len(p) - off >= 24 and p[off:off + 4] == b"ISEC":
        out.append(off)
        off += 24 + struct.unpack_from("<Q", p, off + 8)[0]
    return out


def mutate(p, r):
    secs = sections(p)

    def spot():
        # half of them in the first 64 bytes of a section: its header and
        # the start of its payload (a chunk's column directory)
        if secs and r.random() < 0.5:
            return min(len(p) - 1, r.choice(secs) + r.randrange(64))
        return r.randrange(len(p))

    kind = r.choice(["flip", "byte", "int", "cut", "repeat", "move", "truncate"])
    if kind == "flip":
        at = spot()
        p[at] ^= 1 << r.randrange(8)
    elif kind == "byte":
        at = spot()
        p[at] = r.choice(EDGE_BYTES)
    elif kind == "int":
        size = r.choice([1, 2, 4, 8])
        at = min(spot(), len(p) - size)
        v = r.choice(EDGE_INTS) & ((1 << (8 * size)) - 1)
        if r.random() < 0.3:
            v = int.from_bytes(p[at:at + size], "little") + r.choice([-1, 1])
            v &= (1 << (8 * size)) - 1
        p[at:at + size] = v.to_bytes(size, "little")
    elif kind in ("cut", "repeat", "move"):
        at = spot()
        n = min(len(p) - at, r.choice([1, 4, 8, 24, 64, 512]))
        piece = p[at:at + n]
        if kind == "cut":
            del p[at:at + n]
        elif kind == "repeat":
            p[at:at] = piece
        else:
            del p[at:at + n]
            to = r.randrange(len(p) + 1)
            p[to:to] = piece
    else:
        del p[r.randrange(len(p)):]
    return kind


def main():
    src, out, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    r = random.Random(seed)
    p = bytearray(open(src, "rb").read())
    done = []
    for _ in range(r.choice([1, 1, 2, 3, 4])):
        if len(p) < 2:
            break
        done.append(mutate(p, r))
    fixed = r.random() < 0.75
    if fixed:
        fix_checksums(p)
    open(out, "wb").write(p)
    print("%s%s" % ("+".join(done), " (CRCs recomputed)" if fixed else ""))


if __name__ == "__main__":
    main()
