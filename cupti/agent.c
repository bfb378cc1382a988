// SPDX-License-Identifier: MIT
/*
 * libgtrace-cupti.so: the CUPTI agent.  The CUDA driver loads it into an
 * unmodified program (CUDA_INJECTION64_PATH) and calls InitializeInjection()
 * during cuInit.  When a recording wants it (cupti/gtrace_cupti.h) it records
 * what only the GPU knows -- when each kernel, copy and set ran -- plus
 * CUPTI's record of the driver calls that caused them (their correlation ids
 * join GPU work to threads) and NVTX ranges, and spools them as gtrace
 * records into <dir>/gtrace-cupti.<pid>.spool for the recorder to read.
 *
 * Threads:
 *   program threads  CUPTI's buffer requests (pool, lock-free; CUPTI 13
 *                    keeps one buffer per thread that has records)
 *   any thread       completed buffers -> queue (lock-free, no I/O): CUPTI's
 *                    own, the program's, the one calling a flush
 *   writer thread    queue -> convert.c -> write(); asks agent_ctl.c what the
 *                    recorder wants and switches CUPTI on and off for it
 * Idle (nothing asks for a recording): InitializeInjection returns after a
 * getenv and a stat(), subscribing to nothing, so CUPTI never starts.  Armed
 * (the run directory exists, no recorder wants the process now): the writer
 * thread looks every GT_CUPTI_POLL_STOP_MS, CUPTI records nothing.
 *
 * Files: this one starts the agent, switches CUPTI on and off and runs the
 * writer's loop; agent_attach.c is its life in a process it was loaded into
 * (gt_agent_attach, the detach, a later attach); agent_write.c writes what
 * the writer takes into the spool file; agent_graph.c keeps CUDA graphs'
 * kernel nodes (agent_int.h).
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

#include "agent_ctl.h"
#include "convert.h"
#include "gtrace_cupti.h"
#include "nvtx_capture.h"
#include "ring.h"

#define GT_EXPORT __attribute__((visibility("default")))

#include "agent_int.h"

struct agent g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.nodes_mu = PTHREAD_MUTEX_INITIALIZER,
	.spool = { .fd = -1 },
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

void say(const char *fmt, ...)
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

const char *cupti_err(CUptiResult r)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		return "unknown CUPTI error";
	return s;
}

uint64_t mono_ns(void)
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

/* Errors that mean another CUPTI client (nsys, ncu, torch.profiler/Kineto,
 * a debugger) holds the process. */
bool is_conflict(CUptiResult r)
{
	return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
	       r == CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED;
}

/* Said once: an armed agent tries again at its next chance. */
static void say_conflict(void)
{
	if (g.conflict_said)
		return;
	g.conflict_said = true;
	say("another CUPTI client (nsys, torch.profiler?) is active; GPU-side recording off for pid %d%s",
	    (int)getpid(), g.ctl.mode == GT_CTL_RUN ? " while it is" : "");
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

/* A free buffer's pages given back (after a detach): the job's memory as
 * before the attach until CUPTI writes there again. */
static void buffer_drop(uint8_t *buf, size_t size)
{
	madvise(buf, size, MADV_DONTNEED);
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
	/* a buffer that comes while the agent does not record (paused, done)
	 * is lost, counted: only CUPTI's own teardown hands one over then */
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
 * hold while CUPTI still knows the context.  NVTX: capture ranges.  CUDA
 * graphs: their kernel nodes.  The driver and runtime calls: the detach. */
void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			  const void *data)
{
	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		finalize_here(data);
	else if (domain == CUPTI_CB_DOMAIN_NVTX)
		gt_nvtx_capture__callback(cbid, data);
	else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING &&
		 atomic_load(&g.state) == ST_ON)
		cuptiActivityFlushAll(0);
	else if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
		 (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED || cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) &&
		 atomic_load(&g.state) == ST_ON)
		on_graph_node(cbid, data);
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
	} else if (mode && *mode && strcmp(mode, "calls") != 0 && !g.cupti_ready) {
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

/* The subscriber's callbacks of a recording off (the subscription stays). */
static void callbacks_off(void)
{
	if (!g.subscribed)
		return;
	cuptiEnableCallback(0, g.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	if (g.node_cbs)
		graph_node_cbs(0);
	if (g.nvtx_cbs)
		for (size_t i = 0; i < gt_nvtx_capture_cbids_len; i++)
			cuptiEnableCallback(0, g.sub, CUPTI_CB_DOMAIN_NVTX, gt_nvtx_capture_cbids[i]);
	g.nvtx_cbs = false;
}

/* Gives the subscriber slot back, so that a profiler started later in the
 * program's life (torch.profiler) can have it. */
void unsubscribe(void)
{
	if (!g.subscribed)
		return;
	callbacks_off();
	cuptiUnsubscribe(g.sub);
	g.subscribed = false;
}

/* ------------------------------------------------------------ recording on and off */

/* Clocks: CUPTI's timestamps come from cupti_clock; what cuptiGetTimestamp
 * says against CLOCK_MONOTONIC goes into the stats record. */
void setup_clock(void)
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

/* The agent's own memory, made once: the output chunk, the converter, the
 * buffer pool and queue. */
static bool prepare(void)
{
	if (g.out)
		return true;
	g.out = malloc(OUT_SIZE);
	g.conv = gt_cupti_conv__new((__u32)g.pid);
	if (!g.out || !g.conv) {
		say("failed to allocate buffers: %s; GPU-side recording off for pid %d", strerror(ENOMEM),
		    (int)g.pid);
		free(g.out);
		g.out = NULL;
		gt_cupti_conv__free(g.conv);
		g.conv = NULL;
		return false;
	}
	gt_buf_pool__init(&g.pool, BUF_SIZE, BUF_COUNT, buffer_alloc);
	gt_buf_ring__init(&g.ring);
	return true;
}

/* Switches CUPTI on, in the order it needs (timestamp callback before any
 * kind), for a new stretch of recording into the open spool file. */
static enum begin_result begin_recording(void)
{
	CUptiResult r = CUPTI_SUCCESS;

	/* attached: CUPTI starts here, in a process with contexts and modules;
	 * its clock is ours before it starts */
	if (g.attached && !g.cupti_ready)
		setup_clock();
	/* a detach that had not happened yet was called off: CUPTI still has
	 * the subscriber */
	if (!g.subscribed)
		r = cuptiSubscribe(&g.sub, on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		if (is_conflict(r)) {
			say_conflict();
			return g.ctl.mode == GT_CTL_RUN ? BEGIN_LATER : BEGIN_NEVER;
		}
		say("failed to subscribe to CUPTI: %s; GPU-side recording off for pid %d", cupti_err(r),
		    (int)g.pid);
		return BEGIN_NEVER;
	}
	g.subscribed = true;
	if (!g.cupti_ready) {
		setup_clock();
		r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
		if (r != CUPTI_SUCCESS) {
			say("failed to register activity buffers: %s; GPU-side recording off for pid %d",
			    cupti_err(r), (int)g.pid);
			unsubscribe();
			return BEGIN_NEVER;
		}
	}
	/* this stretch's counters start now */
	{
		size_t dropped = 0;

		if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) != CUPTI_SUCCESS)
			dropped = 0;
		g.base_dropped = dropped;
	}
	g.base_buffers = atomic_load(&g.buffers);
	g.base_unqueued = atomic_load(&g.unqueued);
	gt_spool__recount(&g.spool);
	g.full_said = g.backlog_said = false;
	gt_cupti_conv__reset_counts(g.conv);
	atomic_store(&g.state, ST_ON);
	for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		r = cuptiActivityEnable(kinds[i].kind);
		if (r == CUPTI_SUCCESS) {
			g.kinds_on |= 1u << i;
			continue;
		}
		if (is_conflict(r) || i == 0) {
			if (is_conflict(r))
				say_conflict();
			else
				say("failed to enable %s: %s; GPU-side recording off for pid %d",
				    kinds[0].what, cupti_err(r), (int)g.pid);
			atomic_store(&g.state, ST_OFF);
			disable_activity();
			cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
			unsubscribe();
			return is_conflict(r) && g.ctl.mode == GT_CTL_RUN ? BEGIN_LATER : BEGIN_NEVER;
		}
		if (!g.cupti_ready)
			say("failed to enable %s: %s", kinds[i].what, cupti_err(r));
	}
	enable_driver_api();
	r = cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	if (r != CUPTI_SUCCESS && !g.cupti_ready)
		say("failed to watch context destruction: %s (records of reset devices may be lost)",
		    cupti_err(r));
	if (!graph_node_cbs(1) && !g.cupti_ready)
		say("failed to watch CUDA graph nodes: kernels that graphs run will not be traced back "
		    "to the launches that captured them");
	enable_nvtx_capture();
	g.cupti_ready = true;
	g.conflict_said = false;
	if (g.attached)
		g.attach_recorded = true;
	return BEGIN_OK;
}

/* CUPTI off, everything it held written, then this stretch's counters:
 * flags GT_CUPTI_ST_PAUSED (the spool file stays open for the next) or
 * GT_CUPTI_ST_FINAL. */
void end_recording(uint64_t flags)
{
	int on = ST_ON;

	if (!atomic_compare_exchange_strong(&g.state, &on, ST_STOPPING))
		return;
	disable_activity();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	/* a detach finalizes CUPTI through the subscriber's callback */
	if (flags & GT_CUPTI_ST_DETACHED)
		callbacks_off();
	else
		unsubscribe();
	write_stats(flags);
	atomic_store(&g.state, ST_OFF);
}

/* The spool file, made when a recorder first wants this process; made anew
 * when a recorder removed it (what went into the old one is lost to it). */
static bool have_spool(void)
{
	int err;

	if (g.spool.fd >= 0 && !gt_spool__unlinked(&g.spool))
		return true;
	gt_spool__close(&g.spool, false);
	err = gt_spool__open(&g.spool, &g.ctl);
	if (!err) {
		g.create_said = false;
		return true;
	}
	/* an armed agent tries again at the next look: said once */
	if (g.create_said)
		return false;
	g.create_said = true;
	if (err == -ENOSPC || err == -EDQUOT)
		say("cannot create %s: the file system is full; GPU-side recording off for pid %d for now",
		    g.spool.path, (int)g.pid);
	else
		say("failed to create %s: %s; GPU-side recording off for pid %d", g.spool.path,
		    strerror(-err), (int)g.pid);
	return false;
}

/* The last of the file: stops for good. */
static void finish(void)
{
	if (atomic_load(&g.state) == ST_ON) {
		/* at exit the handler already flushed and CUPTI ends with the
		 * program: touch it no more */
		if (!atomic_load(&g.exiting)) {
			end_recording(GT_CUPTI_ST_FINAL);
		} else {
			atomic_store(&g.state, ST_STOPPING);
			write_stats(GT_CUPTI_ST_FINAL);
		}
	}
	gt_spool__close(&g.spool, !g.write_failed);
	atomic_store(&g.state, ST_DONE);
}

/* ------------------------------------------------------------ the writer's loop */

/* Acts on what the recorder wants; false when the agent is done. */
static bool follow(enum gt_want want)
{
	int state = atomic_load(&g.state);

	if (detach_now(want)) {
		detach();
		/* CUPTI's activity is off and what it held written: the job's
		 * memory as before the attach, less the buffers' pages */
		gt_buf_pool__trim(&g.pool, buffer_drop);
		return false;
	}
	switch (want) {
	case GT_WANT_END:
		return false;
	case GT_WANT_PAUSE:
		if (state == ST_ON)
			end_recording(GT_CUPTI_ST_PAUSED);
		return true;
	case GT_WANT_WAIT:
		/* the file says the process is there, for the recorder to list it */
		if (state == ST_ON)
			end_recording(GT_CUPTI_ST_PAUSED);
		have_spool();
		return true;
	case GT_WANT_RECORD:
		if (state == ST_ON && gt_spool__unlinked(&g.spool))
			end_recording(GT_CUPTI_ST_PAUSED);	/* into a file no one reads */
		if (atomic_load(&g.state) == ST_ON || !have_spool())
			return true;
		if (begin_recording() == BEGIN_NEVER) {
			gt_spool__discard(&g.spool);
			return false;
		}
		return true;
	}
	return true;
}

static void *writer_main(void *arg)
{
	uint64_t now = mono_ns(), next_poll = now, next_live = now;
	struct timespec until;

	(void)arg;
	for (;;) {
		/* read before draining: everything queued before the exit
		 * handler set it is drained below */
		bool exiting = atomic_load(&g.exiting);
		unsigned n = drain();
		bool on = atomic_load(&g.state) == ST_ON;
		uint64_t wake;

		if (exiting || g.write_failed)
			break;
		now = mono_ns();
		/* recording: whether the recorder still wants it, every
		 * GT_CUPTI_POLL_STOP_MS (it may have died: no file changes then);
		 * not recording: whenever the session file changed (a recorder
		 * that begins, or lists this process, makes it anew), seen within
		 * GT_CUPTI_POLL_GO_MS by one stat, and every GT_CUPTI_POLL_IDLE_MS
		 * in any case */
		if (now >= next_poll || (!on && gt_ctl__changed(&g.ctl))) {
			bool was_on = on;

			if (!follow(gt_ctl__want(&g.ctl)))
				break;
			on = atomic_load(&g.state) == ST_ON;
			/* a mark at once: the spool grows when recording begins,
			 * which a starting recorder waits for */
			if (on && !was_on)
				next_live = now;
			next_poll = now + (on || g.ctl.mode != GT_CTL_RUN ? GT_CUPTI_POLL_STOP_MS :
					   GT_CUPTI_POLL_IDLE_MS) * 1000000ull;
		}
		if (on && now >= next_live) {
			next_live = now + GT_CUPTI_LIVE_FLUSH_MS * 1000000ull;
			live_flush();
			continue;
		}
		if (n)	/* CUPTI is handing buffers over: give them back at once */
			continue;
		wake = now + (on || g.ctl.mode != GT_CTL_RUN ? IDLE_MS : GT_CUPTI_POLL_GO_MS) * 1000000ull;
		if (next_poll < wake)
			wake = next_poll;
		until.tv_sec = (time_t)(wake / 1000000000ull);
		until.tv_nsec = (long)(wake % 1000000000ull);
		pthread_mutex_lock(&g.lock);
		if (!atomic_load(&g.exiting))
			pthread_cond_timedwait(&g.wake, &g.lock, &until);
		pthread_mutex_unlock(&g.lock);
	}
	finish();
	return NULL;
}

static int writer_start(void)
{
	static bool cond_made;
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!cond_made) {	/* once: a later attach starts a writer again */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		err = pthread_cond_init(&g.wake, &ca);
		pthread_condattr_destroy(&ca);
		if (err)
			return -err;
		cond_made = true;
	}
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
		say("writer did not finish in %d s; %s may be incomplete", EXIT_WAIT_S, g.spool.path);
	g.writer_started = false;
}

/* A fork child of the process that records: it has no writer, and what
 * CUPTI would hand it is not its to write (the spool is the parent's). */
static void on_fork_child(void)
{
	atomic_store(&g.forked, 1);
	atomic_store(&g.state, ST_DONE);
	g.writer_started = false;
}

/* ------------------------------------------------------------ start */

/* GTRACE_NVTX_CAPTURE, NULL when unset or empty. */
const char *gt_agent__capture_spec(void)
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
	const char *spec = gt_agent__capture_spec(), *why = NULL;

	if (spec && gt_nvtx_capture__init(spec, say_str, &why))
		say(GT_CUPTI_ENV_NVTX_CAPTURE "='%s': %s; no capture range can open in pid %d", spec, why,
		    (int)g.pid);
}

void start(void)
{
	enum gt_want want;
	int err;

	g.pid = getpid();
	setup_capture();
	/* before CUPTI starts: a directory this user cannot write to costs the
	 * program nothing more */
	if (access(g.ctl.dir, W_OK | X_OK) != 0) {
		say("cannot create files in %s: %s; GPU-side recording off for pid %d", g.ctl.dir,
		    strerror(errno), (int)g.pid);
		return;
	}
	want = gt_ctl__want(&g.ctl);
	/* a private recording that already ended wants nothing new */
	if (want == GT_WANT_END || !prepare())
		return;
	if (want == GT_WANT_RECORD || want == GT_WANT_WAIT) {
		if (!have_spool()) {
			if (g.ctl.mode == GT_CTL_PRIVATE)
				return;
		} else if (want == GT_WANT_RECORD && begin_recording() == BEGIN_NEVER) {
			gt_spool__discard(&g.spool);
			return;
		}
	}
	err = writer_start();
	if (err) {
		say("failed to start the writer thread: %s; GPU-side recording off for pid %d",
		    strerror(-err), (int)g.pid);
		/* CUPTI may hold buffers of the pool: they stay, and buffers
		 * still completed go straight back to it */
		if (atomic_load(&g.state) == ST_ON) {
			atomic_store(&g.state, ST_OFF);
			disable_activity();
			cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
			unsubscribe();
		}
		atomic_store(&g.state, ST_DONE);
		gt_spool__discard(&g.spool);
		return;
	}
	if (!g.atexit_set) {
		g.atexit_set = true;
		atexit(at_exit);
		pthread_atfork(NULL, NULL, on_fork_child);
	}
}

/* Starts the agent, once, when a recording may want this process. */
void gt_agent__init_once(void)
{
	if (atomic_exchange(&g.initialized, 1))
		return;
	if (gt_ctl__init(&g.ctl, getpid()) == GT_CTL_NONE)
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
	gt_agent__init_once();
	return 1;
}
