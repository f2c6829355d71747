#!/usr/bin/env python3
"""Turns `trace-cmd report -t -R` output into tsv2trace rows, so the same events
can be stored in both formats and their sizes compared.

Uprobe pairs (NAME / NAME_ret, as created by contrib/bench) become one `calls` row
each; sched and kmem events map one to one. trace-cmd's report has no tgid, so
pid = tid here (the dictionary of values is the same size either way)."""
import re
import sys

LINE = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(\w+):\s*(.*)$')
FIELD = re.compile(r'(\w+)=(\S*)')

WAKE = {'sched_waking': 1, 'sched_wakeup': 2, 'sched_wakeup_new': 3}
ARGS = {}           # op -> arg names, in the order seen
pending = {}        # (tid, op) -> entry
rows = {}           # table -> list of (ts, line)


def emit(table, ts, values):
    rows.setdefault(table, []).append((ts, table + '\t' + '\t'.join(str(v) for v in values)))


for line in sys.stdin:
    m = LINE.match(line)
    if not m:
        continue
    comm, tid, cpu, sec, frac, ev, rest = m.groups()
    tid, cpu = int(tid), int(cpu)
    ts = int(sec) * 1000000000 + int(frac.ljust(9, '0')[:9])
    f = dict(FIELD.findall(rest))
    if ev == 'sched_switch':
        state = int(f['prev_state'], 0) if f['prev_state'].lstrip('-').isdigit() or f['prev_state'].startswith('0x') else 0
        emit('switches', ts, [ts, cpu, f['prev_pid'], f['prev_pid'], state, f['prev_prio'],
                              f['next_pid'], f['next_pid'], f['next_prio']])
    elif ev in WAKE:
        emit('wakeups', ts, [ts, cpu, f['pid'], f['pid'], WAKE[ev], f['prio'], int(f['target_cpu']), tid, tid])
    elif ev == 'mm_page_alloc':
        emit('page_allocs', ts, [ts, cpu, tid, tid, f['order'], f['gfp_flags'], f['migratetype']])
    elif ev == 'sched_process_fork':
        emit('tasks', ts, [ts, cpu, tid, tid, 1, f['child_pid'], f['child_pid'], f['child_comm'], ''])
    elif ev == 'sched_process_exec':
        emit('tasks', ts, [ts, cpu, tid, tid, 3, 0, 0, comm, f.get('filename', '')])
    elif ev == 'sched_process_exit':
        emit('tasks', ts, [ts, cpu, f['pid'], f['pid'], 5, 0, 0, '', ''])
    elif ev.endswith('_ret'):
        op = ev[:-4]
        e = pending.pop((tid, op), None)
        if e is None:
            continue
        ets, ecpu, args = e
        emit('calls', ets, [ets, ecpu, tid, tid, op, ts - ets, int(f.get('ret', 0)), 0, 0] + args)
    elif '__probe_ip' in f:
        names = [k for k in f if not k.startswith('__')]
        ARGS.setdefault(ev, names)
        pending[(tid, ev)] = (ts, cpu, [f[k] for k in names])

for op, names in ARGS.items():
    print('op\t%s\t1\t%s' % (op, ','.join(names)))
for table, lst in rows.items():
    lst.sort(key=lambda r: r[0])
    for _, text in lst:
        print(text)
