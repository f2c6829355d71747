// SPDX-License-Identifier: MIT
/*
 * gentrace: writes a synthetic but realistic trace through the writer API.
 *
 * It models the DataLoader-starvation workload on 2 CPUs: a training process
 * whose launch thread copies batches and synchronizes, N forked worker
 * processes (renamed pt_data_worker) that allocate pages and preempt it, and
 * an unrelated noisy task.  Used by tests, the fuzzer's seed corpus and the
 * demo until `record` writes real traces.  Deterministic for a given seed.
 *
 *   gentrace [-o FILE] [-n EVENTS] [-s SEED] [-w WORKERS] [--chunk-rows N]
 *            [--unfinished] [--level N] [--rotate EVENTS]
 *
 * --unfinished flushes and exits without finishing, as a killed recorder
 * would, leaving FILE.part.  --rotate writes the same events as pieces, as
 * record --rotate does: FILE.1.trace, FILE.2.trace, ... (FILE less its
 * .trace), a new one every EVENTS events.  On stdout: one line "events N
 * bytes B" (B: the last file's).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ift-trace.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64: fast, and the same stream everywhere */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "gentrace: %s: %s\n", what, ift_strerror(err));
	exit(1);
}

static void add(struct ift_writer *w, unsigned table, const uint64_t *row)
{
	int ret = ift_writer_append(w, table, row);

	if (ret < 0)
		die("append", ret);
}

static uint64_t str(struct ift_writer *w, const char *s)
{
	int64_t id = ift_writer_string(w, s);

	if (id < 0)
		die("string", (int)id);
	return (uint64_t)id;
}

/* The generator's state: the writer, the clock, the tasks and the ops. */
struct gen {
	struct ift_writer *w;
	uint64_t ts, pid, noisy, nworkers, worker_tid[64], n;
	uint64_t m_busy, m_run;
	int op_memcpy, op_launch, op_sync, op_culaunch;
};

/* META, the library, the ops and the metrics' names. */
static void gen_header(struct gen *g)
{
	ift_writer_meta(g->w, "tool.version", "gentrace");
	ift_writer_meta(g->w, "cmdline", "python3 train.py --workers 4 (synthetic)");
	ift_writer_meta(g->w, "host.name", "synthetic");
	ift_writer_meta(g->w, "kernel.release", "6.18.0-synthetic");
	ift_writer_meta(g->w, "cpu.count", "2");
	ift_writer_meta(g->w, "clock.source", "mono");
	ift_writer_meta(g->w, "clock.wall_offset_ns", "1764000000000000000");
	ift_writer_metaf(g->w, "record.start_ns", "%" PRIu64, g->ts);

	{
		static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
		struct ift_library lib = {
			.path = "/usr/local/cuda-13.0/lib/libcudart.so.13",
			.build_id = bid, .build_id_len = sizeof(bid),
			.dev = 2049, .ino = 123456, .functions = 42, .kind = "cudart",
		};
		struct ift_op o1 = { "cudaMemcpyAsync", IFT_API_RUNTIME, 5,
				     { "dst", "src", "bytes", "kind", "stream" } };
		struct ift_op o2 = { "cudaLaunchKernel", IFT_API_RUNTIME, 2,
				     { "func", "stream" } };
		struct ift_op o3 = { "cudaStreamSynchronize", IFT_API_RUNTIME, 1,
				     { "stream" } };
		struct ift_op o4 = { "cuLaunchKernel", IFT_API_DRIVER, 2,
				     { "func", "stream" } };

		ift_writer_library(g->w, &lib);
		g->op_memcpy = ift_writer_op(g->w, &o1);
		g->op_launch = ift_writer_op(g->w, &o2);
		g->op_sync = ift_writer_op(g->w, &o3);
		g->op_culaunch = ift_writer_op(g->w, &o4);
		if (g->op_memcpy < 0 || g->op_launch < 0 || g->op_sync < 0 || g->op_culaunch < 0)
			die("op", -1);
	}
	g->m_busy = str(g->w, "cpu.busy_permille");
	g->m_run = str(g->w, "procs.running");
}

/* The process tree: python3 -> launch thread, workers; a noisy task. */
static void gen_tasks(struct gen *g)
{
	{
		uint64_t r[IFT_TK_NR] = { g->ts, 0, g->pid, g->pid, IFT_TASK_COMM, 0, 0,
					  str(g->w, "python3"), 0 };

		add(g->w, IFT_T_TASKS, r);
		/* the launch thread, which makes the CUDA calls */
		r[IFT_C_TS] = ++g->ts;
		r[IFT_TK_KIND] = IFT_TASK_CLONE;
		r[IFT_TK_CHILD_PID] = g->pid;
		r[IFT_TK_CHILD_TID] = g->pid + 1;
		add(g->w, IFT_T_TASKS, r);
		r[IFT_C_TS] = ++g->ts;
		r[IFT_TK_KIND] = IFT_TASK_COMM;
		r[IFT_TK_CHILD_PID] = r[IFT_TK_CHILD_TID] = 0;
		r[IFT_C_PID] = r[IFT_C_TID] = g->noisy;
		r[IFT_TK_COMM] = str(g->w, "stress-ng-cpu");
		add(g->w, IFT_T_TASKS, r);
		for (uint64_t k = 0; k < g->nworkers; k++) {
			g->worker_tid[k] = g->pid + 10 + k;
			r[IFT_C_TS] = ++g->ts;
			r[IFT_C_PID] = r[IFT_C_TID] = g->pid;
			r[IFT_TK_KIND] = IFT_TASK_FORK;
			r[IFT_TK_CHILD_PID] = r[IFT_TK_CHILD_TID] = g->worker_tid[k];
			r[IFT_TK_COMM] = str(g->w, "python3");
			add(g->w, IFT_T_TASKS, r);
			r[IFT_C_TS] = ++g->ts;
			r[IFT_C_PID] = r[IFT_C_TID] = g->worker_tid[k];
			r[IFT_TK_KIND] = IFT_TASK_COMM;
			r[IFT_TK_CHILD_PID] = r[IFT_TK_CHILD_TID] = 0;
			r[IFT_TK_COMM] = str(g->w, "pt_data_worker");
			add(g->w, IFT_T_TASKS, r);
		}
		g->n += 3 + 2 * g->nworkers;
	}
}

/* One event (two for a launch with its driver call, or a sample pair). */
static void gen_event(struct gen *g)
{
	uint64_t cpu = below(2), x = below(1000);

	g->ts += 200 + below(3000);
	if (x < 550) {	/* page allocations dominate a DataLoader */
		uint64_t k = below(g->nworkers);
		uint64_t r[IFT_PG_NR] = { g->ts, cpu, g->worker_tid[k], g->worker_tid[k],
					  below(10) < 9 ? 0 : below(4),
					  0x100cca, 1 };
		add(g->w, IFT_T_PAGE_ALLOCS, r);
	} else if (x < 800) {
		uint64_t k = below(g->nworkers + 1);
		uint64_t prev = k < g->nworkers ? g->worker_tid[k] : g->pid;
		uint64_t next = below(5) ? (below(2) ? g->pid : g->worker_tid[below(g->nworkers)]) :
			        below(2) ? 0 : g->noisy;
		uint64_t r[IFT_SW_NR] = { g->ts, cpu, prev, prev, below(3) ? 0 : 1, 120,
					  next == g->worker_tid[0] || next == g->pid ? next : next,
					  next, next ? 120 : 120 };

		if (next == g->noisy)
			r[IFT_SW_NEXT_PID] = g->noisy;
		add(g->w, IFT_T_SWITCHES, r);
	} else if (x < 930) {
		uint64_t k = below(g->nworkers + 1);
		uint64_t t = k < g->nworkers ? g->worker_tid[k] : g->pid;
		uint64_t waker = below(2) ? g->pid : 0;
		uint64_t r[IFT_WK_NR] = { g->ts, cpu, t, t, 1 + below(2), 120, below(2),
					  waker, waker };
		add(g->w, IFT_T_WAKEUPS, r);
	} else if (x < 995) {
		uint64_t kind = below(3), dur = kind == 2 ? 40000 + below(4000000) :
						3000 + below(20000);
		uint64_t r[IFT_CALL_NR] = { g->ts, cpu, g->pid, g->pid + 1 };

		r[IFT_CALL_DUR] = dur;
		r[IFT_CALL_RET] = below(50) ? 0 : (uint64_t)(int64_t)-1 + 2;
		if (kind == 0) {
			r[IFT_CALL_OP] = (uint64_t)g->op_memcpy;
			r[IFT_CALL_A0] = 0x7f0000000000ULL + below(1 << 20) * 4096;
			r[IFT_CALL_A1] = 0x560000000000ULL + below(1 << 20) * 4096;
			r[IFT_CALL_A2] = 4 << 20;
			r[IFT_CALL_A3] = 1;
			r[IFT_CALL_A4] = 0x5555deadb000ULL;
		} else if (kind == 1) {
			r[IFT_CALL_OP] = (uint64_t)g->op_launch;
			r[IFT_CALL_A0] = 0x7f12340000ULL + below(8) * 0x100;
			r[IFT_CALL_A1] = 0x5555deadb000ULL;
			add(g->w, IFT_T_CALLS, r);
			g->n++;
			/* the driver call nested inside it */
			r[IFT_C_TS] = g->ts + 300;
			r[IFT_CALL_OP] = (uint64_t)g->op_culaunch;
			r[IFT_CALL_DUR] = dur - 600;
			r[IFT_CALL_FLAGS] = IFT_CALL_F_NESTED;
			r[IFT_CALL_DEPTH] = 1;
		} else {
			r[IFT_CALL_OP] = (uint64_t)g->op_sync;
			r[IFT_CALL_A0] = 0x5555deadb000ULL;
		}
		add(g->w, IFT_T_CALLS, r);
		/* one thread: its next call starts after this one returns */
		g->ts += dur + 400;
	} else {
		uint64_t r[IFT_SM_NR] = { g->ts, 0, 0, 0, g->m_busy, below(3),
					  (uint64_t)(800 + below(200)) };
		add(g->w, IFT_T_SAMPLES, r);
		r[IFT_SM_METRIC] = g->m_run;
		r[IFT_SM_SCOPE] = 0;
		r[IFT_SM_VALUE] = g->nworkers + 1 + below(2);
		add(g->w, IFT_T_SAMPLES, r);
		g->n++;
	}
	g->n++;
}

/* The workers' exits, the losses, and the end: finished, or left as a
   killed recorder leaves it.  The exit code. */
static int gen_end(struct gen *g, bool unfinished)
{
	int c;

	/* workers exit */
	for (uint64_t k = 0; k < g->nworkers; k++) {
		uint64_t r[IFT_TK_NR] = { ++g->ts, 0, g->worker_tid[k], g->worker_tid[k],
					  IFT_TASK_EXIT };
		add(g->w, IFT_T_TASKS, r);
		g->n++;
	}
	ift_writer_metaf(g->w, "record.stop_ns", "%" PRIu64, g->ts);
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		struct ift_loss l = { cpu, 0, 0, 0, g->n / 2 };

		ift_writer_loss(g->w, &l);
	}
	if (unfinished) {
		c = ift_writer_flush(g->w);
		if (c < 0)
			die("flush", c);
		printf("events %" PRIu64 " bytes %" PRIu64 "\n", g->n, ift_writer_bytes(g->w));
		ift_writer_free(g->w);
		return 0;
	}
	c = ift_writer_finish(g->w);
	if (c < 0)
		die("finish", c);
	printf("events %" PRIu64 " bytes %" PRIu64 "\n", g->n, ift_writer_bytes(g->w));
	ift_writer_free(g->w);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "chunk-rows", required_argument, NULL, 'c' },
		{ "unfinished", no_argument, NULL, 'u' },
		{ "level", required_argument, NULL, 'l' },
		{ "rotate", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct ift_writer_opts opts = { 0 };
	const char *path = "ingero.trace";
	uint64_t target = 100000, seed = 1;
	struct gen g = { .ts = 1000000000ULL, .pid = 4242, .noisy = 9999, .nworkers = 4 };
	bool unfinished = false;
	uint64_t rotate = 0, next = 0;
	unsigned piece = 1;
	char base[4096], piece_path[4200];
	int c;

	while ((c = getopt_long(argc, argv, "o:n:s:w:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': path = optarg; break;
		case 'n': target = strtoull(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'w': g.nworkers = strtoull(optarg, NULL, 0); break;
		case 'c': opts.chunk_rows = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'l': opts.zstd_level = atoi(optarg); break;
		case 'u': unfinished = true; break;
		case 'r': rotate = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: gentrace [-o FILE] [-n EVENTS] [-s SEED] [-w WORKERS] [--chunk-rows N] [--level N] [--unfinished]\n");
			return 2;
		}
	}
	if (g.nworkers < 1 || g.nworkers > 64)
		g.nworkers = 4;
	rng_state = seed;
	snprintf(base, sizeof(base), "%s", path);
	if (strlen(base) > 6 && !strcmp(base + strlen(base) - 6, ".trace"))
		base[strlen(base) - 6] = 0;
	if (rotate) {
		snprintf(piece_path, sizeof(piece_path), "%s.1.trace", base);
		path = piece_path;
		next = rotate;
	}

	g.w = ift_writer_create(path, &opts);
	if (!g.w) {
		perror("gentrace: create");
		return 1;
	}
	gen_header(&g);
	if (rotate) {
		ift_writer_meta(g.w, "record.run_id", "gentrace-run");
		ift_writer_meta(g.w, "record.piece", "1");
	}
	gen_tasks(&g);
	while (g.n < target) {
		gen_event(&g);
		if (rotate && g.n >= next && g.n < target) {
			next += rotate;
			ift_writer_metaf(g.w, "record.stop_ns", "%" PRIu64, g.ts);
			snprintf(piece_path, sizeof(piece_path), "%s.%u.trace", base, ++piece);
			if ((c = ift_writer_rotate(g.w, piece_path)) < 0)
				die("rotate", c);
			ift_writer_metaf(g.w, "record.piece", "%u", piece);
			ift_writer_metaf(g.w, "record.start_ns", "%" PRIu64, g.ts);
		}
	}
	return gen_end(&g, unfinished);
}
