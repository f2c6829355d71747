// SPDX-License-Identifier: MIT
/*
 * simnccl: a stand-in NCCL, built as libnccl.so.2 beside simcuda's runtime,
 * so that multi-rank jobs (one process per rank, as DDP runs them) can be
 * traced on machines without GPUs or an interconnect.
 *
 * What matters to the tracer is NCCL's host-side shape: a collective does
 * not complete on any rank before every rank of the communicator entered
 * it, so one rank late into it makes all the others wait.  Here every
 * collective (ncclAllReduce, ncclBroadcast, ncclReduce, ncclAllGather,
 * ncclReduceScatter) blocks in the calling thread until every rank of its
 * communicator has entered its collective of the same sequence number,
 * then takes the modelled transfer time (SIMNCCL_GBPS, none by default) and
 * returns; ncclSend and ncclRecv meet their peer the same way, deferred to
 * ncclGroupEnd inside a group, as NCCL defers them.  The waiting is a
 * futex on a shared-memory word: the waiting ranks are blocked, off CPU, as
 * a rank waiting in NCCL's proxy or in cudaStreamSynchronize is.
 *
 * The communicator lives in POSIX shared memory named by the ncclUniqueId
 * (ncclGetUniqueId makes "/simnccl-PID-N"), which rank 0 hands to the other
 * ranks as a real job does (a file, an environment variable, a store);
 * ncclCommDestroy of the last rank removes it.  Buffers are device memory
 * and never touched.  Every exported function is the API itself, never
 * called from inside the library, so a uprobe on it fires once per call.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

#define MAX_RANKS	64
#define MAX_PENDING	MAX_RANKS

typedef enum {
	ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2,
	ncclInternalError = 3, ncclInvalidArgument = 4, ncclInvalidUsage = 5,
} ncclResult_t;

typedef struct { char internal[128]; } ncclUniqueId;

/* A generation barrier of N parties on one shared word pair. */
struct barrier {
	atomic_uint arrived;
	atomic_uint gen;
};

struct shared {
	atomic_uint refs;		/* ranks that joined and did not leave */
	int nranks;
	struct barrier all;		/* init and the collectives */
	struct barrier pair[MAX_RANKS][MAX_RANKS];	/* [low][high] rank */
};

struct ncclComm {
	struct shared *sh;
	int rank, nranks;
	char name[sizeof(ncclUniqueId)];
};
typedef struct ncclComm *ncclComm_t;

/* The API, with NCCL's signatures (no NCCL headers: enums are int). */
API ncclResult_t ncclGetVersion(int *version);
API const char *ncclGetErrorString(ncclResult_t result);
API ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
API ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank);
API ncclResult_t ncclCommDestroy(ncclComm_t comm);
API ncclResult_t ncclCommAbort(ncclComm_t comm);
API ncclResult_t ncclCommCount(const ncclComm_t comm, int *count);
API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank);
API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			       int datatype, int op, ncclComm_t comm, void *stream);
API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
			       int datatype, int root, ncclComm_t comm, void *stream);
API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
			    int datatype, int op, int root, ncclComm_t comm, void *stream);
API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
			       int datatype, ncclComm_t comm, void *stream);
API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
				   int datatype, int op, ncclComm_t comm, void *stream);
API ncclResult_t ncclSend(const void *sendbuff, size_t count, int datatype, int peer,
			  ncclComm_t comm, void *stream);
API ncclResult_t ncclRecv(void *recvbuff, size_t count, int datatype, int peer,
			  ncclComm_t comm, void *stream);
API ncclResult_t ncclGroupStart(void);
API ncclResult_t ncclGroupEnd(void);

/* ncclSend/ncclRecv inside ncclGroupStart..End: the peers met at the end */
static __thread int group_depth;
struct peer_meeting {
	ncclComm_t comm;
	int peer;
};
static __thread struct peer_meeting pending[MAX_PENDING];
static __thread int npending;

static atomic_uint ids;

static long futex(atomic_uint *w, int op, unsigned val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

/* Blocks until N parties (this one included) have reached B. */
static void barrier_wait(struct barrier *b, unsigned n)
{
	unsigned g = atomic_load(&b->gen);

	if (atomic_fetch_add(&b->arrived, 1) + 1 == n) {
		/* the count is reset before the generation moves: a party
		   leaving for the next round counts from zero */
		atomic_store(&b->arrived, 0);
		atomic_fetch_add(&b->gen, 1);
		futex(&b->gen, FUTEX_WAKE, INT_MAX);
		return;
	}
	while (atomic_load(&b->gen) == g)
		futex(&b->gen, FUTEX_WAIT, g);
}

static double env_double(const char *name, double dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtod(s, NULL) : dflt;
}

/* The modelled time of moving BYTES: SIMNCCL_GBPS (GB/s), 0 = none. */
static void transfer(uint64_t bytes)
{
	double gbps = env_double("SIMNCCL_GBPS", 0);
	struct timespec ts;
	uint64_t ns;

	if (gbps <= 0 || !bytes)
		return;
	ns = (uint64_t)((double)bytes / gbps);
	ts.tv_sec = (time_t)(ns / 1000000000ULL);
	ts.tv_nsec = (long)(ns % 1000000000ULL);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t dtype_size(int datatype)
{
	static const uint8_t size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2 };

	return datatype >= 0 && datatype < (int)sizeof(size) ? size[datatype] : 1;
}

static ncclResult_t collective(ncclComm_t comm, uint64_t bytes)
{
	if (!comm || !comm->sh)
		return ncclInvalidArgument;
	barrier_wait(&comm->sh->all, (unsigned)comm->nranks);
	transfer(bytes);
	return ncclSuccess;
}

static ncclResult_t meet(ncclComm_t comm, int peer)
{
	int lo, hi;

	if (!comm || !comm->sh || peer < 0 || peer >= comm->nranks || peer == comm->rank)
		return ncclInvalidArgument;
	lo = comm->rank < peer ? comm->rank : peer;
	hi = comm->rank < peer ? peer : comm->rank;
	barrier_wait(&comm->sh->pair[lo][hi], 2);
	return ncclSuccess;
}

static ncclResult_t point_to_point(ncclComm_t comm, int peer, uint64_t bytes)
{
	if (group_depth) {
		if (npending == MAX_PENDING)
			return ncclInvalidUsage;
		pending[npending].comm = comm;
		pending[npending++].peer = peer;
		return ncclSuccess;
	}
	if (meet(comm, peer) != ncclSuccess)
		return ncclInvalidArgument;
	transfer(bytes);
	return ncclSuccess;
}

API ncclResult_t ncclGetVersion(int *version)
{
	if (!version)
		return ncclInvalidArgument;
	*version = 21803;	/* 2.18.3, the shape of the calls modelled */
	return ncclSuccess;
}

API const char *ncclGetErrorString(ncclResult_t result)
{
	switch (result) {
	case ncclSuccess: return "no error";
	case ncclSystemError: return "unhandled system error";
	case ncclInvalidArgument: return "invalid argument";
	case ncclInvalidUsage: return "invalid usage";
	default: return "internal error";
	}
}

API ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	if (!id)
		return ncclInvalidArgument;
	memset(id, 0, sizeof(*id));
	snprintf(id->internal, sizeof(id->internal), "/simnccl-%d-%u", (int)getpid(),
		 atomic_fetch_add(&ids, 1));
	return ncclSuccess;
}

API ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank)
{
	struct ncclComm *c;
	int fd;

	if (!out || nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks ||
	    id.internal[0] != '/' || !memchr(id.internal, 0, sizeof(id.internal)))
		return ncclInvalidArgument;
	if (!(c = calloc(1, sizeof(*c))))
		return ncclSystemError;
	snprintf(c->name, sizeof(c->name), "%s", id.internal);
	fd = shm_open(c->name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(struct shared)) < 0) {
		if (fd >= 0)
			close(fd);
		free(c);
		return ncclSystemError;
	}
	c->sh = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c->sh == MAP_FAILED) {
		free(c);
		return ncclSystemError;
	}
	c->rank = rank;
	c->nranks = nranks;
	c->sh->nranks = nranks;
	atomic_fetch_add(&c->sh->refs, 1);
	/* initialisation is collective: every rank returns once all joined */
	barrier_wait(&c->sh->all, (unsigned)nranks);
	*out = c;
	return ncclSuccess;
}

API ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (!comm)
		return ncclInvalidArgument;
	if (atomic_fetch_sub(&comm->sh->refs, 1) == 1)
		shm_unlink(comm->name);
	munmap(comm->sh, sizeof(struct shared));
	free(comm);
	return ncclSuccess;
}

API ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	return ncclCommDestroy(comm);
}

API ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
	if (!comm || !count)
		return ncclInvalidArgument;
	*count = comm->nranks;
	return ncclSuccess;
}

API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
	if (!comm || !rank)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}

API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			       int datatype, int op, ncclComm_t comm, void *stream)
{
	(void)sendbuff; (void)recvbuff; (void)op; (void)stream;
	/* a ring all-reduce moves 2 (n - 1) / n of the buffer */
	return collective(comm, comm ? 2 * (uint64_t)(comm->nranks - 1) * count *
			  dtype_size(datatype) / (uint64_t)comm->nranks : 0);
}

API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
			       int datatype, int root, ncclComm_t comm, void *stream)
{
	(void)sendbuff; (void)recvbuff; (void)root; (void)stream;
	return collective(comm, count * dtype_size(datatype));
}

API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
			    int datatype, int op, int root, ncclComm_t comm, void *stream)
{
	(void)sendbuff; (void)recvbuff; (void)op; (void)root; (void)stream;
	return collective(comm, count * dtype_size(datatype));
}

API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
			       int datatype, ncclComm_t comm, void *stream)
{
	(void)sendbuff; (void)recvbuff; (void)stream;
	return collective(comm, comm ? (uint64_t)(comm->nranks - 1) * sendcount *
			  dtype_size(datatype) : 0);
}

API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
				   int datatype, int op, ncclComm_t comm, void *stream)
{
	(void)sendbuff; (void)recvbuff; (void)op; (void)stream;
	return collective(comm, comm ? (uint64_t)(comm->nranks - 1) * recvcount *
			  dtype_size(datatype) : 0);
}

API ncclResult_t ncclSend(const void *sendbuff, size_t count, int datatype, int peer,
			  ncclComm_t comm, void *stream)
{
	(void)sendbuff; (void)stream;
	return point_to_point(comm, peer, count * dtype_size(datatype));
}

API ncclResult_t ncclRecv(void *recvbuff, size_t count, int datatype, int peer,
			  ncclComm_t comm, void *stream)
{
	(void)recvbuff; (void)stream;
	return point_to_point(comm, peer, count * dtype_size(datatype));
}

API ncclResult_t ncclGroupStart(void)
{
	group_depth++;
	return ncclSuccess;
}

static int by_peer(const void *x, const void *y)
{
	const struct peer_meeting *a = x, *b = y;

	if (a->peer != b->peer)
		return a->peer < b->peer ? -1 : 1;
	return strcmp(a->comm->name, b->comm->name);
}

/*
 * The outermost ncclGroupEnd meets the group's peers, each once (a send and
 * a receive with one peer are one meeting), by ascending peer: for every
 * rank that is the order of the pairs (lower rank, higher rank) it belongs
 * to, one order all ranks share, so no cycle of waits can form.
 */
API ncclResult_t ncclGroupEnd(void)
{
	ncclResult_t ret = ncclSuccess;
	int n = 0;

	if (group_depth <= 0)
		return ncclInvalidUsage;
	if (--group_depth)
		return ncclSuccess;
	for (int i = 0; i < npending; i++)
		if (!pending[i].comm)
			ret = ncclInvalidArgument;
	if (ret == ncclSuccess && npending > 1)
		qsort(pending, (size_t)npending, sizeof(pending[0]), by_peer);
	for (int i = 0; ret == ncclSuccess && i < npending; i++)
		if (!n || pending[i].peer != pending[n - 1].peer ||
		    pending[i].comm != pending[n - 1].comm)
			pending[n++] = pending[i];
	for (int i = 0; ret == ncclSuccess && i < n; i++)
		ret = meet(pending[i].comm, pending[i].peer);
	npending = 0;
	return ret;
}
