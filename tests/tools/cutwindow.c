// SPDX-License-Identifier: MIT
/*
 * cutwindow: a window of a trace as a trace of its own, as record
 * --keep-last writes a snapshot (ift_trace_copy(), with the window's start
 * and stop in its metadata), for the tests that hold a snapshot's report
 * to the report of the same window of the whole trace.
 *
 *   cutwindow IN OUT FROM_NS TO_NS     (offsets from IN's start, as report's)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ift-analyze.h"
#include "ift-trace.h"

static int die(const char *what, int err)
{
	fprintf(stderr, "cutwindow: %s: %s\n", what, ift_strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct ift_trace *t;
	struct ift_writer *w;
	uint64_t from, to, start, end;
	int ret;

	if (argc != 5) {
		fprintf(stderr, "usage: cutwindow IN OUT FROM_NS TO_NS\n");
		return 2;
	}
	if ((ret = ift_trace_open(argv[1], 0, &t)) < 0)
		return die(argv[1], ret);
	ift_analysis_bounds(t, &start, &end);
	from = start + strtoull(argv[3], NULL, 0);
	to = start + strtoull(argv[4], NULL, 0);
	if (!(w = ift_writer_create(argv[2], NULL)))
		return die(argv[2], -1);
	if ((ret = ift_trace_copy(t, w, from, to)) < 0 ||
	    (ret = ift_writer_metaf(w, "record.start_ns", "%" PRIu64, from)) < 0 ||
	    (ret = ift_writer_metaf(w, "record.stop_ns", "%" PRIu64, to)) < 0 ||
	    (ret = ift_writer_finish(w)) < 0)
		return die("copy", ret);
	ift_writer_free(w);
	ift_trace_close(t);
	printf("from %" PRIu64 " to %" PRIu64 "\n", from, to);
	return 0;
}
