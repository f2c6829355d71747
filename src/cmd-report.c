// SPDX-License-Identifier: MIT
/*
 * ingero-ftrace report: what the CUDA calls cost and what the scheduler did
 * to every process and thread, from the trace file alone (never tracefs, so
 * any user who can read the file can run it).  docs/report.md documents
 * every figure and JSON key.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ift-analyze.h"
#include "ift-chains.h"
#include "ift-job.h"
#include "ift-render.h"
#include "util/outfile.h"

static const char usage[] =
	"report [-i FILE|DIR]... [--json] [--per-process] [--threads] [--pid PID]...\n"
	"       [--op NAME]... [--from T] [--to T] [--tail-ratio X] [--tail-floor DUR]\n"
	"       [--diff BASELINE]... [--html OUT.html]";

#define MAX_FILTERS	256
#define MAX_INPUTS	1024	/* traces of one job */

/* What a report reads: a trace, or the pieces of one recording (--rotate). */
struct input {
	const char *const *paths;	/* the first names it */
	size_t n;
};

/* One trace, analyzed, with its chains. */
struct report {
	const char *path;
	struct ift_trace *t;
	struct ift_report m;
};

/* ---- the command -------------------------------------------------- */

static void report_release(struct report *r)
{
	ift_report_release(&r->m);
	if (r->t)
		ift_trace_close(r->t);
	memset(r, 0, sizeof(*r));
}

/* The pieces of IN joined; prints a one-line error and returns NULL on failure. */
static struct ift_trace *open_run(const struct input *in)
{
	struct ift_trace *t;
	size_t bad;
	int ret = ift_trace_open_run(in->paths, in->n, &t, &bad);

	if (ret == -IFT_E_PIECES)
		error("cannot join '%s' and the %zu other pieces of its recording: %s",
		      in->paths[0], in->n - 1, ift_strerror(ret));
	else if (ret < 0)
		error("cannot open '%s': %s", in->paths[bad], ift_strerror(ret));
	else if (ift_trace_recovery(t)->damaged)
		warning("a piece of '%s''s recording is cut short or damaged (%s): "
			"what it held before is read", in->paths[0],
			ift_strerror(ift_trace_recovery(t)->reason));
	return ret < 0 ? NULL : t;
}

/* Opens and analyzes IN; prints a one-line error and returns -1 on failure. */
static int report_load(struct report *r, const struct input *in,
		       const struct ift_analyze_opts *aopts,
		       const struct ift_chain_opts *copts)
{
	struct ift_analyze_opts opts = *aopts;
	const char *path = in->paths[0];
	int ret;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->t = in->n > 1 ? open_run(in) : cli_open_trace(path, 0);
	if (!r->t)
		return -1;
	for (size_t i = 0; i < opts.nops; i++) {
		bool found = false;

		for (size_t id = 1; id <= ift_trace_op_count(r->t) && !found; id++)
			found = ift_trace_op(r->t, id) &&
				!strcmp(ift_trace_op(r->t, id)->name, opts.ops[i]);
		if (!found)
			warning("'%s' has no op '%s'", path, opts.ops[i]);
	}
	ret = ift_report_run(r->t, &opts, copts, &r->m);
	if (ret < 0) {
		error("cannot analyze '%s': %s", path, ift_strerror(ret));
		report_release(r);
		return -1;
	}
	return 0;
}

/* The page of R into PATH ("-": stdout).  Returns 0 or a negative error. */
static int write_html(const struct report *r, const char *path)
{
	struct ift_html_opts o = { .title = r->path };
	bool std = !strcmp(path, "-");
	struct ift_outfile of;
	FILE *f = std ? stdout : cli_output_open(&of, path);
	int ret;

	if (!f)
		return -errno;
	ret = ift_out_html(f, r->t, &r->m, &o);
	if (!std)
		ret = cli_output_close(&of, f, ret);
	return ret;
}

/* Which output the options chose. */
struct report_out {
	const char *html;		/* the page into this file, or NULL */
	bool json;
	struct ift_text_opts text;
};

/* The report of CUR, or its diff against BASE (BASE->path set), on stdout. */
static int write_stdout(const struct report *cur, const struct report *base,
			const struct report_out *out)
{
	struct ift_diff_side c = { cur->path, cur->t, &cur->m };
	struct ift_diff_side b = { base->path, base->t, &base->m };

	if (base->path)
		return out->json ? ift_out_json_diff(stdout, &c, &b) :
		       ift_out_text_diff(stdout, &c, &b, &out->text);
	return out->json ? ift_out_json(stdout, cur->t, &cur->m) :
	       ift_out_text(stdout, cur->t, &cur->m, &out->text);
}

/*
 * The job of the N traces IN (their NCCL ranks) into *J; NULL when they
 * hold none.  Prints a one-line error and returns -1 on failure.
 */
static int job_load(const struct ift_job_input *in, size_t n, struct ift_job **j)
{
	int ret = ift_job_run(in, n, j);

	if (ret < 0) {
		error("cannot join %s: %s", n > 1 ? "the traces" : in[0].path, ift_strerror(ret));
		return -1;
	}
	return 0;
}

/*
 * Analyzes PATH, and BASE_PATH when not NULL, and writes what OUT asks for;
 * returns the command's exit code (stdout is checked in main()).
 */
static int report_write(const struct input *path, const struct input *base_path,
			const struct report_out *out, const struct ift_analyze_opts *opts,
			const struct ift_chain_opts *copts)
{
	struct report cur, base = { 0 };
	struct ift_job_input in;
	struct ift_job *job = NULL;
	int ret;

	if (report_load(&cur, path, opts, copts) < 0)
		return EXIT_RUNTIME;
	in = (struct ift_job_input){ cur.path, cur.t, &cur.m };
	if (job_load(&in, 1, &job) < 0 ||
	    (base_path && report_load(&base, base_path, opts, copts) < 0)) {
		report_release(&cur);
		ift_job_free(job);
		return EXIT_RUNTIME;
	}
	cur.m.job = job;
	ret = out->html ? write_html(&cur, out->html) : write_stdout(&cur, &base, out);
	if (ret < 0)
		error("cannot write the report%s%s%s%s: %s", out->html ? " '" : "",
		      out->html ? out->html : "",
		      out->html && ret == -EEXIST ? IFT_PART_SUFFIX : "", out->html ? "'" : "",
		      ift_strerror(ret));
	report_release(&base);
	report_release(&cur);
	ift_job_free(job);
	return ret < 0 ? EXIT_RUNTIME : EXIT_OK;
}

/* The traces of a job, each analyzed, and their job. */
struct side {
	struct report *r;
	struct ift_job_input *in;
	struct ift_job *job;
	size_t n, loaded;
};

static void side_release(struct side *s)
{
	ift_job_free(s->job);
	for (size_t i = 0; i < s->loaded; i++)
		report_release(&s->r[i]);
	free(s->r);
	free(s->in);
	memset(s, 0, sizeof(*s));
}

/* The N inputs of PATHS into S; prints a one-line error and returns -1 on failure. */
static int side_load(struct side *s, const struct input *paths, size_t n,
		     const struct ift_analyze_opts *opts, const struct ift_chain_opts *copts)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	if (!(s->r = calloc(n, sizeof(*s->r))) || !(s->in = calloc(n, sizeof(*s->in)))) {
		error("cannot join the traces: %s", ift_strerror(-ENOMEM));
		return -1;
	}
	for (; s->loaded < n; s->loaded++) {
		struct report *r = &s->r[s->loaded];

		if (report_load(r, &paths[s->loaded], opts, copts) < 0)
			return -1;
		s->in[s->loaded] = (struct ift_job_input){ r->path, r->t, &r->m };
	}
	return job_load(s->in, n, &s->job);
}

/*
 * The N traces of PATHS analyzed and joined into their job, written as OUT
 * asks (text or JSON), or against the NB traces of BASES when NB; returns
 * the command's exit code.
 */
static int report_write_job(const struct input *paths, size_t n, const struct input *bases,
			    size_t nb, const struct report_out *out,
			    const struct ift_analyze_opts *opts,
			    const struct ift_chain_opts *copts)
{
	struct side cur, base = { 0 };
	int ret = -1;

	if (side_load(&cur, paths, n, opts, copts) < 0 ||
	    (nb && side_load(&base, bases, nb, opts, copts) < 0))
		goto out;
	if (nb) {
		struct ift_job_side c = { cur.job, cur.in, cur.n }, b = { base.job, base.in, base.n };

		ret = out->json ? ift_out_job_json_diff(stdout, &c, &b) :
		      ift_out_job_text_diff(stdout, &c, &b, &out->text);
	} else {
		ret = out->json ? ift_out_job_json(stdout, cur.job, cur.in, n) :
		      ift_out_job_text(stdout, cur.job, cur.in, n, &out->text);
	}
	if (ret < 0)
		error("cannot write the report: %s", ift_strerror(ret));
out:
	side_release(&base);
	side_release(&cur);
	return ret < 0 ? EXIT_RUNTIME : EXIT_OK;
}

/* Whether NAME is "*.trace" with something before the suffix. */
static bool trace_name(const char *name)
{
	size_t n = strlen(name);

	return n > 6 && !strcmp(name + n - 6, ".trace");
}

/* A trace file's name: "*.trace". */
static int is_trace(const struct dirent *d)
{
	return d->d_name[0] != '.' && trace_name(d->d_name);
}

/* A hidden one: ".*.trace", which a directory's inputs leave out. */
static int is_hidden_trace(const struct dirent *d)
{
	return d->d_name[0] == '.' && trace_name(d->d_name + 1);
}

/* Says which hidden traces of the directory PATH are left out, if any. */
static void warn_hidden(const char *path)
{
	struct dirent **d;
	int m = scandir(path, &d, is_hidden_trace, alphasort);

	if (m > 0)
		warning("'%s': %d hidden trace%s left out (%s%s): give its path to read one",
			path, m, m > 1 ? "s" : "", d[0]->d_name, m > 1 ? ", ..." : "");
	for (int i = 0; i < m; i++)
		free(d[i]);
	if (m >= 0)
		free(d);
}

/*
 * PATH into the inputs V (N of them, CAP at most): a directory as its
 * *.trace files in name order, anything else as itself.  Returns 0, or a
 * usage error's exit code (after saying why).
 */
static int add_input(const char *path, const char **v, size_t *n, char ***owned,
		     size_t *nowned)
{
	struct dirent **d;
	struct stat st;
	bool full = false, nomem = false;
	int m;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		if (*n == MAX_INPUTS)
			return usage_error(usage, "more than %d traces", MAX_INPUTS);
		v[(*n)++] = path;
		return 0;
	}
	if ((m = scandir(path, &d, is_trace, alphasort)) < 0) {
		error("cannot read the directory '%s': %s", path, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (!m)
		warning("'%s' holds no *.trace file", path);
	warn_hidden(path);
	for (int i = 0; i < m; i++) {
		char *p = NULL, **o = NULL;

		if (*n == MAX_INPUTS)
			full = true;
		else if (!full && !nomem && asprintf(&p, "%s/%s", path, d[i]->d_name) < 0)
			nomem = !(p = NULL);
		else if (p && !(o = realloc(*owned, (*nowned + 1) * sizeof(*o))))
			nomem = true;
		if (o) {
			*owned = o;
			o[(*nowned)++] = p;
			v[(*n)++] = p;
		} else {
			free(p);
		}
		free(d[i]);
	}
	free(d);
	if (full)
		return usage_error(usage, "more than %d traces", MAX_INPUTS);
	if (nomem) {
		error("cannot list '%s': %s", path, strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	return 0;
}

/* PATH's record.run_id when it is a piece of a rotated recording, else NULL. */
static char *run_of(const char *path)
{
	struct ift_trace *t;
	char *id = NULL;

	if (ift_trace_open(path, 0, &t) < 0)
		return NULL;	/* said when it is read */
	if (ift_trace_is_piece(t))
		id = strdup(ift_trace_meta(t, "record.run_id"));
	ift_trace_close(t);
	return id;
}

/*
 * The N paths of V as inputs into IN (*NIN of them): the pieces of one
 * recording (one run id) are one input, in the place of the first of them,
 * and every other trace one of its own.  V is reordered so that each
 * input's paths lie together.  Returns 0, or -1 after saying why.
 */
static int group_runs(const char **v, size_t n, struct input *in, size_t *nin)
{
	char **ids = calloc(n ? n : 1, sizeof(*ids));
	const char **sorted = calloc(n ? n : 1, sizeof(*sorted));
	size_t k = 0;

	*nin = 0;
	if (!ids || !sorted) {
		free(ids);
		free(sorted);
		return error("cannot read the traces: %s", ift_strerror(-ENOMEM));
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = run_of(v[i]);
	for (size_t i = 0; i < n; i++) {
		if (!v[i])
			continue;
		in[*nin] = (struct input){ sorted + k, 0 };
		for (size_t j = i; j < n; j++) {
			if (j != i && (!ids[i] || !ids[j] || strcmp(ids[i], ids[j]) || !v[j]))
				continue;
			sorted[k++] = v[j];
			in[*nin].n++;
			v[j] = NULL;
		}
		(*nin)++;
	}
	memcpy(v, sorted, n * sizeof(*v));
	for (size_t i = 0; i < *nin; i++)
		in[i].paths = v + (in[i].paths - sorted);
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	free(sorted);
	return 0;
}

/* A ratio such as 3 or 2.5, at least 1. */
static int parse_ratio(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 1.0) || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

/* The command, the directories' trace names it made in *OWNED (*NOWNED). */
/* What report's options asked for. */
struct report_args {
	struct ift_analyze_opts opts;
	struct ift_chain_opts copts;
	uint32_t *pids;			/* opts.pids, writable */
	const char **ops;		/* opts.ops */
	const char **inputs, **bases;
	size_t ninputs, nbases;
	const char *html;
	bool json, per_process, threads;
};

/* One option C of getopt_long(), its argument in optarg: 0, or the exit
   code of a usage error. */
static int report_option(struct report_args *a, int c, char ***owned, size_t *nowned)
{
	struct ift_analyze_opts *o = &a->opts;
	pid_t pid;

	switch (c) {
	case 'i':
		return add_input(optarg, a->inputs, &a->ninputs, owned, nowned);
	case 'd':
		return add_input(optarg, a->bases, &a->nbases, owned, nowned);
	case 'j':
		a->json = true;
		break;
	case 'P':
		a->per_process = true;
		break;
	case 'T':
		a->threads = true;
		break;
	case 'H':
		a->html = optarg;
		break;
	case 'p':
		if (cli_parse_pid(optarg, &pid) < 0)
			return usage_error(usage, "bad pid '%s'", optarg);
		if (o->npids == MAX_FILTERS)
			return usage_error(usage, "more than %d --pid", MAX_FILTERS);
		a->pids[o->npids++] = (uint32_t)pid;
		break;
	case 'o':
		if (o->nops == MAX_FILTERS)
			return usage_error(usage, "more than %d --op", MAX_FILTERS);
		a->ops[o->nops++] = optarg;
		break;
	case 'f':
	case 't':
		if (cli_parse_duration(optarg, c == 'f' ? &o->from_ns : &o->to_ns) < 0)
			return usage_error(usage, "bad time '%s' (like 12s, 20.5s, 300ms)",
					   optarg);
		o->has_to |= c == 't';
		break;
	case 'r':
		if (parse_ratio(optarg, &a->copts.tail_ratio) < 0)
			return usage_error(usage, "bad ratio '%s' (a number, at least 1)", optarg);
		break;
	case 'F':
		if (cli_parse_duration(optarg, &a->copts.tail_floor_ns) < 0)
			return usage_error(usage, "bad duration '%s' (like 1ms, 500us)", optarg);
		break;
	}
	return 0;
}

static int report_cmd(int argc, char **argv, char ***owned, size_t *nowned)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "per-process", no_argument, NULL, 'P' },
		{ "threads", no_argument, NULL, 'T' },
		{ "pid", required_argument, NULL, 'p' },
		{ "op", required_argument, NULL, 'o' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "tail-ratio", required_argument, NULL, 'r' },
		{ "tail-floor", required_argument, NULL, 'F' },
		{ "diff", required_argument, NULL, 'd' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static uint32_t pids[MAX_FILTERS];
	static const char *ops[MAX_FILTERS];
	static const char *inputs[MAX_INPUTS], *bases[MAX_INPUTS];
	static struct input in[MAX_INPUTS], bin[MAX_INPUTS];
	size_t nin, nbin;
	struct report_args a = {
		.opts = { .pids = pids, .ops = ops },
		.copts = { .tail_ratio = IFT_TAIL_RATIO_DEFAULT,
			   .tail_floor_ns = IFT_TAIL_FLOOR_DEFAULT },
		.pids = pids, .ops = ops, .inputs = inputs, .bases = bases,
	};
	struct cli_options co = {
		.usage = usage, .shortopts = "+i:h", .longopts = longopts,
	};
	struct report_out out;
	int c, ret;

	while ((c = cli_option_next(&co, argc, argv)) > 0)
		if ((ret = report_option(&a, c, owned, nowned)))
			return ret;
	if (c < 0)
		return co.status;
	if (a.opts.has_to && a.opts.to_ns <= a.opts.from_ns)
		return usage_error(usage, "--to must be after --from");
	if (a.html && (a.json || a.nbases))
		return usage_error(usage, "--html does not go with %s",
				   a.json ? "--json" : "--diff");
	if (!a.ninputs)
		inputs[a.ninputs++] = IFT_DEFAULT_TRACE;
	if (group_runs(inputs, a.ninputs, in, &nin) < 0 ||
	    group_runs(bases, a.nbases, bin, &nbin) < 0)
		return EXIT_RUNTIME;
	if (nin > 1 && a.html)
		return usage_error(usage, "--html takes one trace, not a job's %zu", nin);

	/* the HTML draws the calls one by one */
	a.opts.keep_calls = a.html != NULL;
	out = (struct report_out){
		.html = a.html, .json = a.json,
		.text = { cli_terminal_width(), a.per_process, a.threads },
	};
	if (nin > 1 || nbin > 1)
		return report_write_job(in, nin, bin, nbin, &out, &a.opts, &a.copts);
	return report_write(&in[0], nbin ? &bin[0] : NULL, &out, &a.opts, &a.copts);
}

int cmd_report(int argc, char **argv)
{
	char **owned = NULL;
	size_t nowned = 0;
	int ret = report_cmd(argc, argv, &owned, &nowned);

	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	return ret;
}
