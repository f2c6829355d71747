// SPDX-License-Identifier: MIT
/*
 * sample: CPU, task, load, memory and swap figures from /proc, about ten
 * times a second while a recording runs.
 *
 * Cost matters more here than anywhere else outside the ring reader, so each
 * file stays open and is re-read from offset 0 with pread() into one buffer
 * that lives as long as the sampler: no stdio, no open() per sample.  procps
 * reads /proc the same way.  A seq_file hands out at most a page per read()
 * for files made of many records (/proc/vmstat is about 4 KiB and grows with
 * each kernel), so we read until EOF rather than trusting one read(); for the
 * small files that is one read() that fills and one that returns 0.
 *
 * Parsing trusts nothing: a line is used only up to its '\n', a number must
 * be all digits and fit in 64 bits, and what is missing or malformed is
 * skipped rather than guessed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ift-sample.h"
#include "util/array.h"

/* The buffer starts large enough for /proc/stat of a small machine... */
#define BUF_INIT	(16 * 1024)
/*
 * ...and grows to this at most: /proc/stat has one number per IRQ on its
 * intr line, so thousands of IRQs make it hundreds of KiB.  Past this we
 * parse what we have.
 */
#define BUF_MAX		(64 * 1024 * 1024)

/* Above any NR_CPUS Linux supports; keeps a garbage cpuN from sizing memory. */
#define MAX_CPU		65535

/*
 * A counter that moved by more than this in one interval is garbage (2^40
 * jiffies is 348 years at USER_HZ 100).  The bound also keeps the sum of the
 * eight deltas times 1000 far from overflowing 64 bits.
 */
#define MAX_DELTA	(1ULL << 40)

enum proc_file { F_STAT, F_LOADAVG, F_MEMINFO, F_VMSTAT, F_COUNT };

static const char *const file_name[F_COUNT] = {
	[F_STAT] = "stat",
	[F_LOADAVG] = "loadavg",
	[F_MEMINFO] = "meminfo",
	[F_VMSTAT] = "vmstat",
};

/* The columns of a cpu line of /proc/stat, in order (guest is within user). */
enum { J_USER, J_NICE, J_SYSTEM, J_IDLE, J_IOWAIT, J_IRQ, J_SOFTIRQ, J_STEAL,
       J_COUNT };

/* Fewer columns than this and the line is no use: idle is the fourth. */
#define J_MIN		(J_IDLE + 1)

struct cpu_slot {
	uint64_t prev[J_COUNT];
	uint64_t cur[J_COUNT];
	bool have_prev;		/* seen in the previous read */
	bool have_cur;		/* seen in this read */
};

/* The system-wide values other than CPU time, in the order they are emitted. */
enum scalar {
	S_RUNNING, S_BLOCKED, S_LOAD1, S_MEM_TOTAL, S_MEM_AVAIL, S_SWAP_USED,
	S_SWAP_IN, S_SWAP_OUT, S_COUNT
};

static const char *const scalar_name[S_COUNT] = {
	[S_RUNNING] = "procs.running",
	[S_BLOCKED] = "procs.blocked",
	[S_LOAD1] = "load.1_milli",
	[S_MEM_TOTAL] = "mem.total_kb",
	[S_MEM_AVAIL] = "mem.available_kb",
	[S_SWAP_USED] = "swap.used_kb",
	[S_SWAP_IN] = "swap.in_pages",
	[S_SWAP_OUT] = "swap.out_pages",
};

struct scalars {
	int64_t v[S_COUNT];
	bool have[S_COUNT];
};

struct ift_sampler {
	int dirfd;
	int fd[F_COUNT];	/* -1 until opened */
	char *buf;
	size_t cap;
	struct cpu_slot total;
	struct cpu_slot *cpu;	/* indexed by CPU number */
	size_t ncpu;		/* slots allocated */
	/* vmstat counters at the previous read, for the swap deltas */
	uint64_t pswpin, pswpout;
	bool have_pswpin, have_pswpout;
};

/* ---- reading ---------------------------------------------------------- */

/*
 * Reads file F whole into s->buf.  Returns its length, -ENOENT when the file
 * does not exist (opening is retried on the next call), or -errno.
 */
static ssize_t load(struct ift_sampler *s, enum proc_file f)
{
	size_t len = 0;

	if (s->fd[f] < 0) {
		s->fd[f] = openat(s->dirfd, file_name[f], O_RDONLY | O_CLOEXEC);
		if (s->fd[f] < 0)
			return -errno;
	}
	for (;;) {
		ssize_t n;

		if (len == s->cap) {
			char *p;

			if (s->cap >= BUF_MAX)
				break;
			p = realloc(s->buf, s->cap * 2);
			if (!p)
				return -ENOMEM;
			s->buf = p;
			s->cap *= 2;
		}
		/*
		 * pread at 0 makes a seq_file generate afresh; continuing at
		 * LEN reads on from the same generation, so a file longer
		 * than one read is still one consistent snapshot.
		 */
		n = pread(s->fd[f], s->buf + len, s->cap - len, (off_t)len);
		if (n < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			/* open afresh next time: the file may have been replaced */
			close(s->fd[f]);
			s->fd[f] = -1;
			return -err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

/* ---- parsing ---------------------------------------------------------- */

/*
 * The next line of [*pos, end), from LINE to EOL (its '\n').  A last line
 * with no '\n' is dropped: every /proc file ends its lines, so the file was
 * cut short in it, and a number cut in half reads as a smaller one.
 */
static bool next_line(const char **pos, const char *end, const char **line,
		      const char **eol)
{
	const char *nl;

	if (*pos >= end)
		return false;
	nl = memchr(*pos, '\n', (size_t)(end - *pos));
	if (!nl)
		return false;
	*line = *pos;
	*eol = nl;
	*pos = nl + 1;
	return true;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The text after KEY when [line, eol) starts with it, else NULL. */
static const char *after_key(const char *line, const char *eol,
			     const char *key)
{
	size_t n = strlen(key);

	if ((size_t)(eol - line) < n || memcmp(line, key, n))
		return NULL;
	return line + n;
}

/*
 * A decimal number at *P after blanks, ending at a blank or EOL; *P moves
 * past it.  False (and *P unchanged) for no digits, trailing junk such as
 * "12ab", or a value past 64 bits.
 */
static bool parse_u64(const char **p, const char *eol, uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;

	while (q < eol && is_blank(*q))
		q++;
	if (q == eol || !is_digit(*q))
		return false;
	for (; q < eol && is_digit(*q); q++) {
		unsigned d = (unsigned)(*q - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (q < eol && !is_blank(*q))
		return false;
	*p = q;
	*out = v;
	return true;
}

/*
 * The one number of a "key value" line: nothing may follow but blanks and,
 * where UNIT is given, that unit.
 */
static bool parse_only(const char *p, const char *eol, const char *unit,
		       uint64_t *out)
{
	if (!parse_u64(&p, eol, out))
		return false;
	while (p < eol && is_blank(*p))
		p++;
	if (unit && (size_t)(eol - p) == strlen(unit) &&
	    !memcmp(p, unit, strlen(unit)))
		p = eol;
	return p == eol;
}

static int64_t clamp_i64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The slot for CPU N, growing the table; NULL when out of memory. */
static struct cpu_slot *cpu_slot(struct ift_sampler *s, size_t n)
{
	if (ift_array_grow((void **)&s->cpu, &s->ncpu, n + 1, sizeof(*s->cpu)) < 0)
		return NULL;
	return &s->cpu[n];
}

/* A "cpu" or "cpuN" line: the text after "cpu". */
static int parse_cpu_line(struct ift_sampler *s, const char *p,
			  const char *eol)
{
	uint64_t j[J_COUNT] = { 0 };
	struct cpu_slot *slot;
	unsigned n;

	if (p < eol && is_blank(*p)) {
		slot = &s->total;
	} else {
		uint64_t cpu;

		if (p == eol || !is_digit(*p) || !parse_u64(&p, eol, &cpu) ||
		    cpu > MAX_CPU)
			return 0;
		slot = cpu_slot(s, (size_t)cpu);
		if (!slot)
			return -ENOMEM;
	}
	for (n = 0; n < J_COUNT; n++)
		if (!parse_u64(&p, eol, &j[n]))
			break;
	/*
	 * Columns after idle came with later kernels (iowait, irq and
	 * softirq in 2.6, steal in 2.6.11): count what is missing as 0.  A
	 * second line for the same CPU is not the kernel's; keep the first.
	 */
	if (n < J_MIN || slot->have_cur)
		return 0;
	memcpy(slot->cur, j, sizeof(j));
	slot->have_cur = true;
	return 0;
}

static int read_stat(struct ift_sampler *s, struct scalars *sc)
{
	const char *pos, *end, *line, *eol, *p;
	ssize_t len;
	uint64_t v;
	size_t i;
	int ret;

	/*
	 * A CPU missing from this read (offline) loses its baseline: when it
	 * comes back, its first interval starts at the read that sees it.
	 */
	s->total.have_cur = false;
	for (i = 0; i < s->ncpu; i++)
		s->cpu[i].have_cur = false;

	len = load(s, F_STAT);
	if (len < 0)
		return (int)len;
	pos = s->buf;
	end = s->buf + len;
	while (next_line(&pos, end, &line, &eol)) {
		if ((p = after_key(line, eol, "cpu"))) {
			ret = parse_cpu_line(s, p, eol);
			if (ret < 0)
				return ret;
		} else if ((p = after_key(line, eol, "procs_running "))) {
			if (sc && parse_only(p, eol, NULL, &v)) {
				sc->v[S_RUNNING] = clamp_i64(v);
				sc->have[S_RUNNING] = true;
			}
		} else if ((p = after_key(line, eol, "procs_blocked "))) {
			if (sc && parse_only(p, eol, NULL, &v)) {
				sc->v[S_BLOCKED] = clamp_i64(v);
				sc->have[S_BLOCKED] = true;
			}
		}
	}
	return 0;
}

/* "1.62 1.27 0.64 3/103 9835": the first field, in thousandths. */
static int read_loadavg(struct ift_sampler *s, struct scalars *sc)
{
	const char *pos, *line, *eol, *p;
	uint64_t whole = 0, milli = 0;
	unsigned digits = 0;
	ssize_t len;

	len = load(s, F_LOADAVG);
	if (len < 0)
		return len == -ENOENT ? 0 : (int)len;
	pos = s->buf;
	if (!next_line(&pos, s->buf + len, &line, &eol))
		return 0;
	p = line;
	if (p == eol || !is_digit(*p))
		return 0;
	/* A load of 10^12 is garbage; the bound keeps the sum below in range. */
	for (; p < eol && is_digit(*p); p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 1000000000000ULL)
			return 0;
	}
	if (p < eol && *p == '.') {
		/* the kernel prints two decimals; truncate past three */
		for (p++; p < eol && is_digit(*p); p++)
			if (digits < 3) {
				milli = milli * 10 + (uint64_t)(*p - '0');
				digits++;
			}
	}
	if (p < eol && !is_blank(*p))
		return 0;
	for (; digits < 3; digits++)
		milli *= 10;
	sc->v[S_LOAD1] = (int64_t)(whole * 1000 + milli);
	sc->have[S_LOAD1] = true;
	return 0;
}

static int read_meminfo(struct ift_sampler *s, struct scalars *sc)
{
	const char *pos, *end, *line, *eol, *p;
	uint64_t swap_total = 0, swap_free = 0, v;
	bool have_st = false, have_sf = false;
	ssize_t len;

	len = load(s, F_MEMINFO);
	if (len < 0)
		return len == -ENOENT ? 0 : (int)len;
	pos = s->buf;
	end = s->buf + len;
	/* "MemTotal:       24684084 kB"; the unit is always kB */
	while (next_line(&pos, end, &line, &eol)) {
		if ((p = after_key(line, eol, "MemTotal:"))) {
			if (parse_only(p, eol, "kB", &v)) {
				sc->v[S_MEM_TOTAL] = clamp_i64(v);
				sc->have[S_MEM_TOTAL] = true;
			}
		} else if ((p = after_key(line, eol, "MemAvailable:"))) {
			/* absent before 3.14; not worth estimating */
			if (parse_only(p, eol, "kB", &v)) {
				sc->v[S_MEM_AVAIL] = clamp_i64(v);
				sc->have[S_MEM_AVAIL] = true;
			}
		} else if ((p = after_key(line, eol, "SwapTotal:"))) {
			have_st = parse_only(p, eol, "kB", &swap_total);
		} else if ((p = after_key(line, eol, "SwapFree:"))) {
			have_sf = parse_only(p, eol, "kB", &swap_free);
		}
	}
	if (have_st && have_sf && swap_free <= swap_total) {
		sc->v[S_SWAP_USED] = clamp_i64(swap_total - swap_free);
		sc->have[S_SWAP_USED] = true;
	}
	return 0;
}

/*
 * The change of a vmstat counter since the previous read.  None the first
 * time, after a read without it, or when it went backwards (which a kernel
 * counter does not, so the earlier value was wrong).
 */
static void swap_delta(struct scalars *sc, enum scalar which, bool found,
		       uint64_t now, uint64_t *prev, bool *have_prev)
{
	if (found && *have_prev && now >= *prev && sc) {
		sc->v[which] = clamp_i64(now - *prev);
		sc->have[which] = true;
	}
	*prev = now;
	*have_prev = found;
}

/* SC NULL: only take the baseline. */
static int read_vmstat(struct ift_sampler *s, struct scalars *sc)
{
	const char *pos, *end, *line, *eol, *p;
	uint64_t in = 0, out = 0;
	bool have_in = false, have_out = false;
	ssize_t len;

	len = load(s, F_VMSTAT);
	if (len < 0) {
		s->have_pswpin = s->have_pswpout = false;
		return len == -ENOENT ? 0 : (int)len;
	}
	pos = s->buf;
	end = s->buf + len;
	while (next_line(&pos, end, &line, &eol)) {
		if ((p = after_key(line, eol, "pswpin ")))
			have_in = parse_only(p, eol, NULL, &in);
		else if ((p = after_key(line, eol, "pswpout ")))
			have_out = parse_only(p, eol, NULL, &out);
	}
	swap_delta(sc, S_SWAP_IN, have_in, in, &s->pswpin, &s->have_pswpin);
	swap_delta(sc, S_SWAP_OUT, have_out, out, &s->pswpout,
		   &s->have_pswpout);
	return 0;
}

/* ---- figures ---------------------------------------------------------- */

static int64_t permille(uint64_t part, uint64_t whole)
{
	return (int64_t)((part * 1000 + whole / 2) / whole);
}

/*
 * The four CPU figures of SLOT over the interval, when it was seen in both
 * reads.  user counts nice too and system counts irq and softirq: the
 * question is how much CPU went to user code and how much to the kernel,
 * whatever the priority.  busy is everything but idle and iowait, so it
 * includes steal: time this CPU could not give us, also given alone (the
 * time a hypervisor ran something else on it).  An interval with no
 * ticks (two reads in one jiffy) has no figures.
 */
static int emit_cpu(const struct cpu_slot *slot, unsigned scope,
		    ift_sample_fn emit, void *ctx)
{
	uint64_t d[J_COUNT], total = 0, busy, user, sys;
	int ret;

	if (!slot->have_prev || !slot->have_cur)
		return 0;
	for (unsigned i = 0; i < J_COUNT; i++) {
		/*
		 * iowait and idle of a CPU can step back a little (NO_HZ
		 * accounting); count that as no time rather than wrapping.
		 */
		d[i] = slot->cur[i] >= slot->prev[i] ?
		       slot->cur[i] - slot->prev[i] : 0;
		if (d[i] > MAX_DELTA)
			return 0;
		total += d[i];
	}
	if (!total)
		return 0;
	busy = total - d[J_IDLE] - d[J_IOWAIT];
	user = d[J_USER] + d[J_NICE];
	sys = d[J_SYSTEM] + d[J_IRQ] + d[J_SOFTIRQ];

	ret = emit(ctx, "cpu.busy_permille", scope, permille(busy, total));
	if (ret >= 0)
		ret = emit(ctx, "cpu.user_permille", scope,
			   permille(user, total));
	if (ret >= 0)
		ret = emit(ctx, "cpu.system_permille", scope,
			   permille(sys, total));
	if (ret >= 0)
		ret = emit(ctx, "cpu.iowait_permille", scope,
			   permille(d[J_IOWAIT], total));
	/* the analyzer takes a CPU's steal out of the on-CPU time of the
	   threads that ran there (steal.c) */
	if (ret >= 0)
		ret = emit(ctx, "cpu.steal_permille", scope,
			   permille(d[J_STEAL], total));
	return ret < 0 ? ret : 0;
}

static int emit_all(struct ift_sampler *s, const struct scalars *sc,
		    ift_sample_fn emit, void *ctx)
{
	int ret;

	ret = emit_cpu(&s->total, 0, emit, ctx);
	for (size_t i = 0; ret >= 0 && i < s->ncpu; i++)
		ret = emit_cpu(&s->cpu[i], (unsigned)i + 1, emit, ctx);
	for (unsigned i = 0; ret >= 0 && i < S_COUNT; i++)
		if (sc->have[i])
			ret = emit(ctx, scalar_name[i], 0, sc->v[i]);
	return ret < 0 ? ret : 0;
}

/* This read becomes the start of the next interval. */
static void commit_cpus(struct ift_sampler *s)
{
	struct cpu_slot *slot;

	for (size_t i = 0; i <= s->ncpu; i++) {
		slot = i < s->ncpu ? &s->cpu[i] : &s->total;
		memcpy(slot->prev, slot->cur, sizeof(slot->prev));
		slot->have_prev = slot->have_cur;
	}
}

/* ---- the interface ---------------------------------------------------- */

/*
 * The files stay open from their first read, so a test that changes a
 * fixture must rewrite it in place (O_TRUNC), not rename a new one over it.
 */
struct ift_sampler *ift_sampler_new_at(const char *procdir)
{
	struct ift_sampler *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (unsigned f = 0; f < F_COUNT; f++)
		s->fd[f] = -1;
	s->dirfd = open(procdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		ret = -errno;
		goto fail;
	}
	s->cap = BUF_INIT;
	s->buf = malloc(s->cap);
	if (!s->buf) {
		ret = -ENOMEM;
		goto fail;
	}
	/*
	 * /proc/stat must be there: without it there is no CPU figure.  The
	 * other files may be missing (a container's /proc) and are skipped.
	 */
	ret = read_stat(s, NULL);
	if (ret < 0)
		goto fail;
	commit_cpus(s);
	read_vmstat(s, NULL);
	return s;
fail:
	ift_sampler_free(s);
	errno = -ret;
	return NULL;
}

struct ift_sampler *ift_sampler_new(void)
{
	return ift_sampler_new_at("/proc");
}

void ift_sampler_free(struct ift_sampler *s)
{
	if (!s)
		return;
	for (unsigned f = 0; f < F_COUNT; f++)
		if (s->fd[f] >= 0)
			close(s->fd[f]);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->cpu);
	free(s->buf);
	free(s);
}

/*
 * Every file is read and the state moves on before EMIT sees anything, so an
 * error from one file or from EMIT never stretches the next interval: each
 * read is the baseline of the one after it.
 */
int ift_sampler_read(struct ift_sampler *s, ift_sample_fn emit, void *ctx)
{
	struct scalars sc = { 0 };
	int err, ret;

	err = read_stat(s, &sc);
	ret = read_loadavg(s, &sc);
	if (!err)
		err = ret;
	ret = read_meminfo(s, &sc);
	if (!err)
		err = ret;
	ret = read_vmstat(s, &sc);
	if (!err)
		err = ret;

	/* no EMIT: only move the baseline on */
	ret = emit ? emit_all(s, &sc, emit, ctx) : 0;
	commit_cpus(s);
	return ret < 0 ? ret : err;
}
