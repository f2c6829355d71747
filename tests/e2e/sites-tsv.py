# SPDX-License-Identifier: MIT
"""A trace with call sites (record --stack) as tsv2trace input, and what its
sites must be, computed here from the rows, not by ingero-ftrace.

  sites-tsv.py OUT.tsv EXPECT.json

Two processes: 100 (threads 101, 102) and 300.  cudaMemcpy is called from
7 sites, cudaLaunchKernel from 2 and, one call in 5, without a stack: more
sites than report shows per op (5), durations that differ, so the order,
the p99 tail and the shares are all tested.  EXPECT.json holds, for no pid
and for each pid and tid, every op's sites (all of them, ranked as
src/analyze/sites.c ranks them) without their frames."""
import json
import sys

T0 = 10**9
OPS = ["cudaMemcpy", "cudaLaunchKernel"]
TASKS = {101: 100, 102: 100, 300: 300}


def site_of(i, op):
    if op == "cudaMemcpy":
        return 1 + (i // 2 + i // 13) % 7 if i % 9 else 7
    return 0 if i % 5 == 0 else 8 + (i // 3) % 2


def dur_of(i):
    # a few long calls make the tail; the rest spread over 1-51 us
    return 90000 + i if i % 97 == 13 else 1000 + (i * 7919) % 50000


def main():
    out, exp = sys.argv[1], sys.argv[2]
    rows = []
    with open(out, "w") as f:
        print("meta\tcmdline\t./train --stacks", file=f)
        print("meta\tcpu.count\t2", file=f)
        print("op\tcudaMemcpy\t1\tdst,src,bytes,kind", file=f)
        print("op\tcudaLaunchKernel\t1\tfunc,grid,block,args,shmem,stream", file=f)
        for k in range(1, 10):
            fn = "cudaMemcpy" if k <= 7 else "cudaLaunchKernel"
            print("stack\t/lib/libcudart.so.12,0x1000,%s,0,0"
                  "\t/app/train,0x%x,_Z4stepi,0x%x,0\t/app/train,0x2000,main,0x40,0"
                  % (fn, 0x1100 + 16 * k, 16 * k), file=f)
        print("tasks\t%d\t0\t100\t100\t4\t0\t0\ttrain\t" % (T0 + 1000), file=f)
        print("tasks\t%d\t0\t100\t100\t2\t100\t101\ttrain\t" % (T0 + 1500), file=f)
        print("tasks\t%d\t0\t100\t100\t2\t100\t102\ttrain\t" % (T0 + 1600), file=f)
        print("tasks\t%d\t0\t100\t100\t1\t300\t300\ttrain\t" % (T0 + 1700), file=f)
        print("tasks\t%d\t1\t300\t300\t4\t0\t0\tworker\t" % (T0 + 1800), file=f)
        t = T0 + 100000
        for i in range(600):
            tid = [101, 102, 300][i % 3]
            op = OPS[0] if i % 4 != 3 else OPS[1]
            site, dur = site_of(i, op), dur_of(i)
            rows.append((op, TASKS[tid], tid, site, dur))
            print("calls\t%d\t%d\t%d\t%d\t%s\t%d\t0\t0\t0\t1\t2\t4096\t1\t0\t0\t%d"
                  % (t, i % 2, TASKS[tid], tid, op, dur, site), file=f)
            t += 100000
        print("meta\trecord.start_ns\t%d" % T0, file=f)
        print("meta\trecord.stop_ns\t%d" % (t + 100000), file=f)

    want = {}
    for pid in [0, 100, 300, 101, 102]:
        per = []
        for op in OPS:
            v = [r for r in rows if r[0] == op and r[3] and
                 (not pid or pid in (r[1], r[2]))]
            if not v:
                continue
            d = sorted(r[4] for r in v)
            p99 = d[(len(d) * 99 + 99) // 100 - 1]
            total = sum(d)
            tail = sum(x for x in d if x >= p99)
            sites = {}
            for r in v:
                s = sites.setdefault(r[3], [0, 0, 0, 0])
                s[0] += 1
                s[1] += r[4]
                if r[4] >= p99:
                    s[2] += 1
                    s[3] += r[4]
            ranked = sorted(sites.items(), key=lambda kv: (-kv[1][1], kv[0]))
            per.append({"op": op, "calls_with_stack": len(v), "sites": [
                {"op": op, "stack_id": k, "calls": s[0], "total_ns": s[1],
                 "tail_calls": s[2], "tail_ns": s[3],
                 "share_calls": s[0] / len(v), "share_time": s[1] / total,
                 "share_tail": s[3] / tail} for k, s in ranked]})
        want[str(pid)] = per
    json.dump(want, open(exp, "w"), indent=1)


if __name__ == "__main__":
    main()
