#!/usr/bin/env python3
"""initramfs.py - the initramfs of a guest: guest-init as /init and, for a
distribution kernel, the modules it needs to mount the host's root over 9p.

    initramfs.py --init GUEST_INIT [--modules /lib/modules/RELEASE] -o OUT [MODULE...]

Each MODULE not built into the kernel (modules.builtin) is loaded after the modules it depends on (the `depends=` of its
.modinfo section; no depmod needed), from /modules/NAME.ko in the order
/modules/order lists; a .ko.xz (what Debian 12's 6.12 ships) is stored
uncompressed, so the kernel needs no module decompressor.  OUT is a gzip'd
newc cpio archive with /dev/console, which the kernel opens for init.
"""
import argparse, gzip, io, lzma, os, stat, sys


def modinfo_depends(data):
    """The depends= of a module's .modinfo strings (a NUL-separated list)."""
    i = data.find(b"\0depends=")
    if i < 0:
        return []
    j = data.index(b"\0", i + 1)
    v = data[i + len(b"\0depends="):j].decode()
    return [m for m in v.split(",") if m]


def find_modules(root):
    """name (with '_') -> path, for every module under ROOT."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            for ext in (".ko", ".ko.xz"):
                if f.endswith(ext):
                    out[f[:-len(ext)].replace("-", "_")] = os.path.join(d, f)
    return out


def builtin_modules(root):
    """The modules built into the kernel (modules.builtin): nothing to load."""
    try:
        with open(os.path.join(root, "modules.builtin")) as f:
            return {os.path.basename(l.strip()).split(".ko")[0].replace("-", "_") for l in f}
    except FileNotFoundError:
        return set()


def read_module(path):
    with open(path, "rb") as f:
        data = f.read()
    return lzma.decompress(data) if path.endswith(".xz") else data


def order(wanted, mods, builtin):
    """WANTED and what they need, dependencies first, less what BUILTIN has."""
    done, seq, blobs = set(builtin), [], {}

    def visit(name, chain):
        key = name.replace("-", "_")
        if key in done:
            return
        if key in chain:
            sys.exit("initramfs.py: module dependency loop: %s" % " -> ".join(chain + [key]))
        if key not in mods:
            sys.exit("initramfs.py: no module %s under the modules directory" % name)
        blobs[key] = read_module(mods[key])
        for dep in modinfo_depends(blobs[key]):
            visit(dep, chain + [key])
        done.add(key)
        seq.append(key)

    for w in wanted:
        visit(w, [])
    return seq, blobs


class Cpio:
    def __init__(self):
        self.buf = io.BytesIO()
        self.ino = 1

    def add(self, name, mode, data=b"", rdev=(0, 0)):
        name = name.encode() + b"\0"
        hdr = "070701" + "".join("%08X" % v for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name), 0))
        self.ino += 1
        self.buf.write(hdr.encode() + name)
        self.buf.write(b"\0" * (-(110 + len(name)) % 4))
        self.buf.write(data)
        self.buf.write(b"\0" * (-len(data) % 4))

    def finish(self):
        self.add("TRAILER!!!", 0)
        return self.buf.getvalue()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--init", required=True)
    ap.add_argument("--modules")
    ap.add_argument("-o", required=True)
    ap.add_argument("module", nargs="*")
    a = ap.parse_args()
    if a.module and not a.modules:
        sys.exit("initramfs.py: modules named without --modules DIR")
    c = Cpio()
    for d in ("dev", "proc", "sys", "newroot", "modules"):
        c.add(d, stat.S_IFDIR | 0o755)
    c.add("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1))
    with open(a.init, "rb") as f:
        c.add("init", stat.S_IFREG | 0o755, f.read())
    if a.module:
        seq, blobs = order(a.module, find_modules(a.modules), builtin_modules(a.modules))
        for m in seq:
            c.add("modules/%s.ko" % m, stat.S_IFREG | 0o644, blobs[m])
        c.add("modules/order", stat.S_IFREG | 0o644, "".join(m + "\n" for m in seq).encode())
    with open(a.o, "wb") as f:
        f.write(gzip.compress(c.finish(), 6))


if __name__ == "__main__":
    main()
