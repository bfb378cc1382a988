// SPDX-License-Identifier: MIT
/*
 * libgtrace-cupti.so: the CUPTI agent.  The CUDA driver loads it into an
 * unmodified program (CUDA_INJECTION64_PATH) and calls InitializeInjection()
 * during cuInit.  When a recording wants it (cupti/gtrace_cupti.h) it records
 * what only the GPU knows -- when each kernel, copy and set ran -- plus
 * CUPTI's record of the driver calls that caused them (their correlation ids
 * join GPU work to threads) and NVTX ranges, and spools them as gtrace
 * records into <dir>/gtrace-cupti.<pid>.spool for the recorder to merge.
 *
 * Threads:
 *   program threads  CUPTI's buffer requests (pool, lock-free; CUPTI 13
 *                    keeps one buffer per thread that has records)
 *   any thread       completed buffers -> queue (lock-free, no I/O): CUPTI's
 *                    own, the program's, the one calling a flush
 *   writer thread    queue -> convert.c -> write(); looks for the stop signal
 * Idle (no recording): InitializeInjection returns after a getenv and a
 * stat(), subscribing to nothing, so CUPTI never starts.
 *
 * NVTX capture ranges (GTRACE_NVTX_CAPTURE, nvtx_capture.c): only then are
 * NVTX callbacks enabled, and the agent starts at NVTX's initialization if
 * that comes before cuInit, so that no range of the program goes unseen.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* RTLD_NEXT, dladdr, pthread_timedjoin_np, pthread_setname_np */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "convert.h"
#include "gtrace_cupti.h"
#include "nvtx_capture.h"
#include "ring.h"

#define GT_EXPORT __attribute__((visibility("default")))

#define BUF_SIZE	(4u << 20)	/* bytes per CUPTI activity buffer */
#define BUF_COUNT	GT_POOL_MAX	/* buffers at most: CUPTI 13 holds one per thread
					 * with records, made as needed; their pages
					 * become memory only as CUPTI fills them */
#define OUT_SIZE	(1u << 20)	/* converted records are written in chunks of up to this */
#define IDLE_MS		50		/* writer's sleep between looks at the queue */
#define EXIT_WAIT_S	5		/* at exit, how long to wait for the writer */

_Static_assert(BUF_COUNT <= GT_POOL_MAX && BUF_COUNT <= GT_RING_CAP, "pool larger than the queue");
_Static_assert(BUF_SIZE % 8 == 0, "CUPTI buffers are 8-byte aligned");
_Static_assert(OUT_SIZE >= 4 * GT_CUPTI_REC_MAX, "output chunk too small");

enum agent_state {
	ST_OFF = 0,	/* not recording (idle, refused, or failed to start) */
	ST_ON,		/* recording */
	ST_STOPPING,	/* the writer is switching CUPTI off */
	ST_DONE,	/* the spool file is complete and closed */
};

static struct agent {
	_Atomic int state;		/* enum agent_state */
	_Atomic int exiting;		/* the program is exiting: writer, finish */
	_Atomic int initialized;	/* InitializeInjection ran */
	pid_t pid;			/* process that recorded (a forked child is not it) */
	int fd;				/* spool file */
	bool write_failed;		/* a write failed: nothing more is written */
	bool driver_all;		/* the DRIVER kind is on (GTRACE_CUPTI_API=all) */
	bool driver_ids;		/* the launch/copy/set calls' records are on */
	bool subscribed;		/* sub holds CUPTI's one subscriber slot */
	bool nvtx_cbs;			/* the NVTX capture callbacks are enabled */
	CUpti_SubscriberHandle sub;
	char dir[PATH_MAX];		/* spool directory */
	char stop[PATH_MAX];		/* its stop signal file */
	char live[PATH_MAX];		/* its live spooling file (GT_CUPTI_LIVE_FILE) */
	bool live_on;			/* the live file was there at the last look */
	char path[PATH_MAX];		/* spool file */
	struct gt_buf_pool pool;	/* activity buffers lent to CUPTI */
	struct gt_buf_ring ring;	/* completed buffers for the writer */
	struct gt_cupti_conv *conv;	/* converter (writer thread only) */
	uint8_t *out;			/* converted records not yet written */
	size_t out_len;			/* bytes in out */
	_Atomic uint64_t buffers;	/* buffers completed */
	_Atomic uint64_t unqueued;	/* records in buffers the queue could not take */
	_Atomic uint64_t refused;	/* buffer requests with the pool empty */
	uint64_t clock_offset_ns;	/* |CUPTI timestamp - CLOCK_MONOTONIC| at start */
	unsigned kinds_on;		/* bit i: kinds[i] enabled */
	pthread_t writer;		/* writer thread (joined at exit) */
	bool writer_started;
	pthread_mutex_t lock;		/* guards nothing but the wake-up below */
	pthread_cond_t wake;		/* at exit: wakes the writer at once */
} g = {
	.fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Activity kinds enabled, in order; only the first is required. */
static const struct {
	CUpti_ActivityKind kind;
	const char *what;
} kinds[] = {
	/* never KIND_KERNEL: it serializes kernels */
	{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel records" },
	{ CUPTI_ACTIVITY_KIND_MEMCPY, "copy records" },
	{ CUPTI_ACTIVITY_KIND_MEMCPY2, "peer copy records" },
	{ CUPTI_ACTIVITY_KIND_MEMSET, "set records" },
	/* NVTX: records come only when NVTX injects CUPTI (gtrace_cupti.h) */
	{ CUPTI_ACTIVITY_KIND_MARKER, "NVTX records" },
};

/* ------------------------------------------------------------ helpers */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "gtrace-cupti: ");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", msg);
}

static const char *cupti_err(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CUPTI's timestamps: the clock of bpf_ktime_get_ns, so that the merger
 * needs no conversion. */
static uint64_t CUPTIAPI cupti_clock(void)
{
	return mono_ns();
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Errors that mean another CUPTI client (nsys, ncu, torch.profiler/Kineto,
 * a debugger) holds the process. */
static bool is_conflict(CUptiResult r)
{
	return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
	       r == CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED;
}

static void say_conflict(void)
{
	say("another CUPTI client (nsys, torch.profiler?) is active; GPU-side recording off for pid %d",
	    (int)getpid());
}

/*
 * Whether a recording wants this process: GTRACE_CUPTI_DIR, else the run
 * directory of a running recorder, and no stop signal in it.  Fills dir and
 * stop (PATH_MAX bytes each).
 */
static bool wanted(char *dir, char *stop)
{
	const char *env = getenv(GT_CUPTI_ENV_DIR);
	struct stat st;

	if (env && *env) {
		if (strlen(env) >= PATH_MAX)
			return false;
		strcpy(dir, env);
	} else {
		if (!is_dir(GTRACE_CUPTI_RUN_DIR))
			return false;
		strcpy(dir, GTRACE_CUPTI_RUN_DIR);
	}
	if (strlen(dir) + 1 + strlen(GT_CUPTI_STOP_FILE) >= PATH_MAX)
		return false;
	stpcpy(stpcpy(stpcpy(stop, dir), "/"), GT_CUPTI_STOP_FILE);
	return stat(stop, &st) != 0;	/* a recording that is ending wants nothing new */
}

/* ------------------------------------------------------------ CUPTI callbacks */

/* A buffer for the pool, made once per slot: its own mapping (not the
 * program's heap), pages becoming memory only as CUPTI writes them. */
static void *buffer_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = gt_buf_pool__get(&g.pool);

	*max_records = 0;	/* as many as fit */
	*buffer = b;
	*size = b ? BUF_SIZE : 0;
	if (!b)	/* CUPTI drops records and counts them (cuptiActivityGetNumDroppedRecords) */
		atomic_fetch_add_explicit(&g.refused, 1, memory_order_relaxed);
}

/* No I/O, no lock: queue the buffer for the writer. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	if (!buffer)
		return;
	int state = atomic_load_explicit(&g.state, memory_order_acquire);

	atomic_fetch_add_explicit(&g.buffers, 1, memory_order_relaxed);
	/* a buffer that comes after the writer's last look (ST_DONE) is lost
	 * uncounted: only CUPTI's own teardown could hand one over then */
	if (valid && (state == ST_ON || state == ST_STOPPING) && gt_buf_ring__push(&g.ring, buffer, valid))
		return;
	if (valid) {	/* lost: count what it held */
		CUpti_Activity *rec = NULL;
		uint64_t n = 0;

		while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
			n++;
		atomic_fetch_add_explicit(&g.unqueued, n, memory_order_relaxed);
	}
	gt_buf_pool__put(&g.pool, buffer);
}

/* cudaDeviceReset / cuCtxDestroy: hand over what the context's buffers
 * hold while CUPTI still knows the context.  NVTX: capture ranges. */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_NVTX)
		gt_nvtx_capture__callback(cbid, data);
	else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING &&
		 atomic_load(&g.state) == ST_ON)
		cuptiActivityFlushAll(0);
}

/* ------------------------------------------------------------ CUPTI on/off */

/* Driver API records (GTRACE_CUPTI_API): of the launch/copy/set calls only
 * (unset or "calls"), of every call ("all"), or none ("none": the merger
 * then links GPU work to calls by launch order).  The fine-grained call
 * needs the DRIVER kind off: enabling the kind later would override it.
 * Returns false when records were asked for and none could be enabled. */
static bool enable_driver_api(void)
{
	const char *all = getenv(GT_CUPTI_ENV_ALL_API), *mode = getenv(GT_CUPTI_ENV_API);
	CUptiResult r = CUPTI_SUCCESS;
	size_t ok = 0;

	if ((all && strcmp(all, "1") == 0) || (mode && strcmp(mode, "all") == 0)) {
		r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
		if (r == CUPTI_SUCCESS) {
			g.driver_all = true;
			return true;
		}
		say("failed to enable all driver API records: %s; trying launch/copy/set calls only",
		    cupti_err(r));
	} else if (mode && strcmp(mode, "none") == 0) {
		return true;
	} else if (mode && *mode && strcmp(mode, "calls") != 0) {
		say("unknown " GT_CUPTI_ENV_API "='%s' (calls, all or none): recording the calls'",
		    mode);
	}
	g.driver_ids = true;
	for (size_t i = 0; i < gt_cupti_driver_cbids_len; i++) {
		CUptiResult e = cuptiActivityEnableDriverApi(gt_cupti_driver_cbids[i], 1);

		if (e == CUPTI_SUCCESS)
			ok++;
		else
			r = e;
	}
	if (ok)
		return true;
	g.driver_ids = false;
	say("failed to enable driver API records: %s; GPU work will be joined to calls by launch "
	    "order (set " GT_CUPTI_ENV_API "=all to record all driver API calls instead)",
	    cupti_err(r));
	return false;
}

static void disable_activity(void)
{
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (g.kinds_on & (1u << i))
			cuptiActivityDisable(kinds[i].kind);
	g.kinds_on = 0;
	if (g.driver_all) {
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
		g.driver_all = false;
	} else if (g.driver_ids) {
		for (size_t i = 0; i < gt_cupti_driver_cbids_len; i++)
			cuptiActivityEnableDriverApi(gt_cupti_driver_cbids[i], 0);
		g.driver_ids = false;
	}
}

/* Gives the subscriber slot back, so that a profiler started later in the
 * program's life (torch.profiler) can have it. */
static void unsubscribe(void)
{
	if (!g.subscribed)
		return;
	cuptiEnableCallback(0, g.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	if (g.nvtx_cbs)
		for (size_t i = 0; i < gt_nvtx_capture_cbids_len; i++)
			cuptiEnableCallback(0, g.sub, CUPTI_CB_DOMAIN_NVTX, gt_nvtx_capture_cbids[i]);
	g.nvtx_cbs = false;
	cuptiUnsubscribe(g.sub);
	g.subscribed = false;
}

/* ------------------------------------------------------------ writer */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void out_flush(void)
{
	int err;

	if (!g.out_len || g.write_failed) {
		g.out_len = 0;
		return;
	}
	err = write_all(g.fd, g.out, g.out_len);
	g.out_len = 0;
	if (err) {
		g.write_failed = true;
		say("failed to write %s: %s; GPU-side recording off for pid %d", g.path, strerror(-err),
		    (int)g.pid);
	}
}

/* Makes room for one more record of any size in out; returns the bytes free
 * at g.out + g.out_len. */
static size_t out_room(void)
{
	if (OUT_SIZE - g.out_len < GT_CUPTI_REC_MAX)
		out_flush();
	return OUT_SIZE - g.out_len;
}

static void convert_buffer(uint8_t *buf, size_t valid)
{
	CUpti_Activity *rec = NULL;

	/* stops at the end (MAX_LIMIT_REACHED) or at a record CUPTI left
	 * incomplete (INVALID_KIND) */
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
		size_t room = out_room();
		int n = gt_cupti_conv__record(g.conv, rec, g.out + g.out_len, room);

		if (n > 0)
			g.out_len += (size_t)n;
	}
}

/* Converts and writes every queued buffer; returns how many there were. */
static unsigned drain(void)
{
	unsigned n = 0;
	uint8_t *buf;
	size_t valid;

	while (gt_buf_ring__pop(&g.ring, &buf, &valid)) {
		if (!g.write_failed)
			convert_buffer(buf, valid);
		gt_buf_pool__put(&g.pool, buf);
		n++;
	}
	out_flush();
	return n;
}

static bool stop_signalled(void)
{
	struct stat st;

	if (stat(g.dir, &st) != 0 && errno == ENOENT)
		return true;
	return stat(g.stop, &st) == 0;
}

/* The recording stopped: CUPTI off, everything it holds handed over. */
static void stop_cupti(void)
{
	int on = ST_ON;

	if (!atomic_compare_exchange_strong(&g.state, &on, ST_STOPPING))
		return;
	disable_activity();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	unsubscribe();
}

/* Last records, the stats record, fsync, close. */
static void finish(void)
{
	struct gt_cupti_conv_extra x = { .clock_offset_ns = g.clock_offset_ns };
	size_t dropped = 0;
	int n;

	drain();
	for (;;) {
		size_t room = out_room();

		n = gt_cupti_conv__drain_open(g.conv, g.out + g.out_len, room);
		if (n <= 0)
			break;
		g.out_len += (size_t)n;
	}
	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) != CUPTI_SUCCESS)
		dropped = 0;
	x.dropped = dropped + atomic_load(&g.unqueued);
	x.buffers = atomic_load(&g.buffers);
	out_room();
	g.out_len += gt_cupti_conv__stats(g.conv, mono_ns(), &x, g.out + g.out_len);
	out_flush();
	if (!g.write_failed && fsync(g.fd) != 0)
		say("failed to sync %s: %s", g.path, strerror(errno));
	close(g.fd);
	g.fd = -1;
	if (x.dropped)
		say("%llu GPU records lost in pid %d (CUPTI found no free buffer %llu times)",
		    (unsigned long long)x.dropped, (int)g.pid, (unsigned long long)atomic_load(&g.refused));
	atomic_store(&g.state, ST_DONE);
}

/* Live spooling: what CUPTI has completed, handed over now, then the mark
 * that says so (its ts: before the flush began). */
static void live_flush(void)
{
	uint64_t t0 = mono_ns();

	if (atomic_load(&g.state) != ST_ON)
		return;
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	drain();
	if (g.write_failed)
		return;
	out_room();
	g.out_len += gt_cupti_conv__mark(g.conv, t0, mono_ns() - t0, g.out + g.out_len);
	out_flush();
}

static void *writer_main(void *arg)
{
	uint64_t next_poll = mono_ns() + GT_CUPTI_POLL_STOP_MS * 1000000ull, next_live = 0;
	struct timespec until;
	struct stat st;

	(void)arg;
	for (;;) {
		/* read before draining: everything queued before the exit
		 * handler set it is drained below */
		bool exiting = atomic_load(&g.exiting);
		unsigned n = drain();
		uint64_t now;

		if (exiting || g.write_failed)
			break;
		now = mono_ns();
		if (now >= next_poll) {
			next_poll = now + GT_CUPTI_POLL_STOP_MS * 1000000ull;
			if (stop_signalled())
				break;
			g.live_on = stat(g.live, &st) == 0;
		}
		if (g.live_on && now >= next_live) {
			next_live = now + GT_CUPTI_LIVE_FLUSH_MS * 1000000ull;
			live_flush();
			continue;
		}
		if (n)	/* CUPTI is handing buffers over: give them back at once */
			continue;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += IDLE_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&g.lock);
		if (!atomic_load(&g.exiting))
			pthread_cond_timedwait(&g.wake, &g.lock, &until);
		pthread_mutex_unlock(&g.lock);
	}
	/* at exit the handler already flushed and CUPTI ends with the program:
	 * touch it no more; else switch it off for the rest of the program */
	if (!atomic_load(&g.exiting))
		stop_cupti();
	finish();
	return NULL;
}

static int writer_start(void)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&g.wake, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return -err;
	/* signals stay with the program's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&g.writer, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	pthread_setname_np(g.writer, "gtrace-cupti");
	g.writer_started = true;
	return 0;
}

/* exit(): hand over CUPTI's last buffers and wait (bounded) for the writer,
 * so that the file is complete; a program that calls _exit or is killed
 * loses what was not yet written. */
static void at_exit(void)
{
	struct timespec until;

	if (getpid() != g.pid || !g.writer_started)
		return;
	if (atomic_load(&g.state) == ST_ON)
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&g.lock);
	atomic_store(&g.exiting, 1);
	pthread_cond_signal(&g.wake);
	pthread_mutex_unlock(&g.lock);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += EXIT_WAIT_S;
	if (pthread_timedjoin_np(g.writer, NULL, &until) != 0)
		say("writer did not finish in %d s; %s may be incomplete", EXIT_WAIT_S, g.path);
	g.writer_started = false;
}

/* ------------------------------------------------------------ start */

static int spool_open(void)
{
	int fd, err;

	if ((size_t)snprintf(g.path, sizeof(g.path), "%s/" GT_CUPTI_SPOOL_FMT, g.dir, (int)g.pid) >=
	    sizeof(g.path) ||
	    (size_t)snprintf(g.live, sizeof(g.live), "%s/" GT_CUPTI_LIVE_FILE, g.dir) >= sizeof(g.live))
		return -ENAMETOOLONG;
	/* O_EXCL|O_NOFOLLOW: the directory may be world-writable */
	fd = open(g.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, GT_CUPTI_MAGIC, GT_CUPTI_MAGIC_LEN);
	if (err) {
		close(fd);
		unlink(g.path);
		return err;
	}
	g.fd = fd;
	return 0;
}

static void spool_discard(void)
{
	if (g.fd < 0)
		return;
	close(g.fd);
	g.fd = -1;
	unlink(g.path);
}

/* Clocks: CUPTI's timestamps come from cupti_clock; what cuptiGetTimestamp
 * says against CLOCK_MONOTONIC goes into the stats record. */
static void setup_clock(void)
{
	uint64_t before, after, cupti = 0, mid;
	CUptiResult r;

	r = cuptiActivityRegisterTimestampCallback(cupti_clock);
	if (r != CUPTI_SUCCESS)
		say("failed to register the timestamp callback: %s; GPU times are CUPTI's clock",
		    cupti_err(r));
	r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	if (r != CUPTI_SUCCESS)
		say("failed to set system thread ids: %s", cupti_err(r));
	before = mono_ns();
	r = cuptiGetTimestamp(&cupti);
	after = mono_ns();
	if (r != CUPTI_SUCCESS) {
		g.clock_offset_ns = UINT64_MAX;	/* unknown */
		return;
	}
	mid = before + (after - before) / 2;
	g.clock_offset_ns = cupti > mid ? cupti - mid : mid - cupti;
}

/* NVTX capture ranges: the callbacks of the range calls, only when asked
 * for; all or none (a pop unseen would hold a capture open). */
static void enable_nvtx_capture(void)
{
	CUptiResult r = CUPTI_SUCCESS;

	if (!gt_nvtx_capture__on())
		return;
	g.nvtx_cbs = true;
	for (size_t i = 0; i < gt_nvtx_capture_cbids_len && r == CUPTI_SUCCESS; i++)
		r = cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_NVTX, gt_nvtx_capture_cbids[i]);
	if (r == CUPTI_SUCCESS)
		return;
	for (size_t i = 0; i < gt_nvtx_capture_cbids_len; i++)
		cuptiEnableCallback(0, g.sub, CUPTI_CB_DOMAIN_NVTX, gt_nvtx_capture_cbids[i]);
	g.nvtx_cbs = false;
	say("failed to watch NVTX ranges: %s; no " GT_CUPTI_ENV_NVTX_CAPTURE " range can open in pid %d",
	    cupti_err(r), (int)g.pid);
}

/* Everything CUPTI records, in the order CUPTI needs: timestamp callback
 * before any kind.  Returns false (message said) when recording is off. */
static bool enable_recording(void)
{
	CUptiResult r;

	setup_clock();
	r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS) {
		say("failed to register activity buffers: %s; GPU-side recording off for pid %d",
		    cupti_err(r), (int)g.pid);
		return false;
	}
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		r = cuptiActivityEnable(kinds[i].kind);
		if (r == CUPTI_SUCCESS) {
			g.kinds_on |= 1u << i;
			continue;
		}
		if (is_conflict(r)) {
			say_conflict();
			return false;
		}
		if (i == 0) {
			say("failed to enable %s: %s; GPU-side recording off for pid %d",
			    kinds[0].what, cupti_err(r), (int)g.pid);
			return false;
		}
		say("failed to enable %s: %s", kinds[i].what, cupti_err(r));
	}
	enable_driver_api();
	r = cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	if (r != CUPTI_SUCCESS)
		say("failed to watch context destruction: %s (records of reset devices may be lost)",
		    cupti_err(r));
	enable_nvtx_capture();
	return true;
}

/* GTRACE_NVTX_CAPTURE, NULL when unset or empty. */
static const char *capture_spec(void)
{
	const char *s = getenv(GT_CUPTI_ENV_NVTX_CAPTURE);

	return s && *s ? s : NULL;
}

static void say_str(const char *msg)
{
	say("%s", msg);
}

static void setup_capture(void)
{
	const char *spec = capture_spec(), *why = NULL;

	if (spec && gt_nvtx_capture__init(spec, say_str, &why))
		say(GT_CUPTI_ENV_NVTX_CAPTURE "='%s': %s; no capture range can open in pid %d", spec, why,
		    (int)g.pid);
}

static void start(void)
{
	CUptiResult r;
	int err;

	g.pid = getpid();
	setup_capture();
	/* before CUPTI starts: a directory this user cannot write to (a
	 * recorder's run directory is root's) costs the program nothing more */
	if (access(g.dir, W_OK | X_OK) != 0) {
		say("cannot create files in %s: %s; GPU-side recording off for pid %d", g.dir,
		    strerror(errno), (int)g.pid);
		return;
	}
	r = cuptiSubscribe(&g.sub, on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		if (is_conflict(r))
			say_conflict();
		else
			say("failed to subscribe to CUPTI: %s; GPU-side recording off for pid %d",
			    cupti_err(r), (int)g.pid);
		return;
	}
	g.subscribed = true;

	g.out = malloc(OUT_SIZE);
	g.conv = gt_cupti_conv__new((__u32)g.pid);
	if (!g.out || !g.conv) {
		say("failed to allocate buffers: %s; GPU-side recording off for pid %d", strerror(ENOMEM),
		    (int)g.pid);
		goto cleanup;
	}
	gt_buf_pool__init(&g.pool, BUF_SIZE, BUF_COUNT, buffer_alloc);
	gt_buf_ring__init(&g.ring);

	err = spool_open();
	if (err) {
		say("failed to create %s: %s; GPU-side recording off for pid %d", g.path, strerror(-err),
		    (int)g.pid);
		goto cleanup;
	}
	atomic_store(&g.state, ST_ON);
	if (!enable_recording())
		goto off;
	err = writer_start();
	if (err) {
		say("failed to start the writer thread: %s; GPU-side recording off for pid %d",
		    strerror(-err), (int)g.pid);
		goto off;
	}
	atexit(at_exit);
	return;

off:
	/* CUPTI may hold buffers of the pool: they stay, and buffers still
	 * completed go straight back to it */
	atomic_store(&g.state, ST_OFF);
	disable_activity();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	atomic_store(&g.state, ST_DONE);
	unsubscribe();
	spool_discard();
	return;
cleanup:
	unsubscribe();
	free(g.out);
	g.out = NULL;
	gt_cupti_conv__free(g.conv);
	g.conv = NULL;
}

/* Starts recording, once, when a recording wants this process. */
static void init_once(void)
{
	if (atomic_exchange(&g.initialized, 1))
		return;
	if (!wanted(g.dir, g.stop))
		return;
	start();
	if (gt_nvtx_capture__on() && atomic_load(&g.state) != ST_ON)
		say(GT_CUPTI_ENV_NVTX_CAPTURE " is set but GPU-side recording is off: no capture range "
		    "can open in pid %d", (int)g.pid);
}

/* Called by the CUDA driver in cuInit when CUDA_INJECTION64_PATH names this
 * library.  Returns 1 in every case: the agent never fails the program. */
GT_EXPORT int InitializeInjection(void)
{
	init_once();
	return 1;
}

/*
 * NVTX injection (NVTX_INJECTION64_PATH may name this library too): forwards
 * to CUPTI's only while a recording wants this process, so that NVTX calls
 * stay no-ops otherwise.  NVTX calls this at the first NVTX call, which may
 * come before cuInit: with capture ranges asked for, recording starts here
 * then, so that CUPTI reports that first range.  Returning 0 tells NVTX that
 * no tool is attached.
 */
typedef const void *(*gt_nvtx_export_table_fn)(uint32_t id);

GT_EXPORT int InitializeInjectionNvtx2(gt_nvtx_export_table_fn get_export_table);
/* this library's own definition: the exported name may bind to libcupti's
 * when libcupti is in the program's global scope */
extern __typeof__(InitializeInjectionNvtx2) nvtx_init_self
	__attribute__((alias("InitializeInjectionNvtx2"), visibility("hidden")));

int InitializeInjectionNvtx2(gt_nvtx_export_table_fn get_export_table)
{
	int (*cupti_init)(gt_nvtx_export_table_fn);
	char dir[PATH_MAX], stop[PATH_MAX];

	if (!wanted(dir, stop))
		return 0;
	if (capture_spec())
		init_once();
	/* the next definition after this library's own: libcupti's */
	*(void **)&cupti_init = dlsym(RTLD_NEXT, "InitializeInjectionNvtx2");
	if (!cupti_init) {	/* the libcupti this library is linked to, by its path */
		Dl_info info;
		void *h;

		if (dladdr((void *)cuptiGetTimestamp, &info) && info.dli_fname &&
		    (h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
			*(void **)&cupti_init = dlsym(h, "InitializeInjectionNvtx2");
			dlclose(h);	/* drops the reference NOLOAD took; libcupti stays */
		}
	}
	if (!cupti_init || cupti_init == nvtx_init_self)
		return 0;
	return cupti_init(get_export_table);
}
