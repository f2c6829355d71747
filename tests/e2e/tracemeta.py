"""tracemeta.py IN OUT KEY=VALUE...: a copy of trace IN with metadata
changed, as docs/trace-format.md allows: the sections of IN up to its INDEX,
then one more META section holding KEY=VALUE (the last value read wins),
then an INDEX that lists it too, and the trailer.  For tests that need a
trace from another machine's clock (t421 shifts clock.wall_offset_ns).
Written from the format's text, not from the reader: a second reading of
the specification."""
import struct
import sys
import zlib

SYNC = b"ISEC"
META, INDEX = 1, 9
TRAILER_MAGIC = b"\x89IFTEND\n"


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_varint(buf, at):
    v = shift = 0
    while True:
        b = buf[at]
        at += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, at


def section(stype, payload):
    head = SYNC + struct.pack("<HHQI", stype, 0, len(payload), zlib.crc32(payload))
    return head + struct.pack("<I", zlib.crc32(head)) + payload


def main():
    src, dst, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
    data = open(src, "rb").read()
    if data[-8:] != TRAILER_MAGIC:
        sys.exit("%s: no trailer (not a finished trace)" % src)
    index_at = struct.unpack("<Q", data[-16:-8])[0]
    head = data[index_at:index_at + 24]
    if head[:4] != SYNC or struct.unpack("<H", head[4:6])[0] != INDEX:
        sys.exit("%s: the trailer does not point at an INDEX" % src)
    plen = struct.unpack("<Q", head[8:16])[0]
    payload = data[index_at + 24:index_at + 24 + plen]
    count, at = read_varint(payload, 0)
    entries = payload[at:]
    meta = varint(len(pairs))
    for p in pairs:
        k, v = p.split("=", 1)
        for s in (k.encode(), v.encode()):
            meta += varint(len(s)) + s
    out = bytearray(data[:index_at])
    meta_at = len(out)
    out += section(META, meta)
    new_index_at = len(out)
    out += section(INDEX, varint(count + 1) + entries + varint(meta_at) + varint(META))
    out += struct.pack("<Q", new_index_at) + TRAILER_MAGIC
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
