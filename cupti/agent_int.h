/* SPDX-License-Identifier: MIT */
/*
 * Internal to the CUPTI agent (libgtrace-cupti.so): the state its files
 * share.  agent.c: start, CUPTI on and off, the writer thread's loop and the
 * program's exit; agent_write.c: what the writer writes (activity buffers
 * converted, graph nodes, counters, flush marks) into the spool file;
 * agent_graph.c: CUDA graphs' kernel nodes, kept from CUPTI's resource
 * callbacks for the writer.
 */
#ifndef GTRACE_CUPTI_AGENT_INT_H
#define GTRACE_CUPTI_AGENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cupti.h>

#include "agent_ctl.h"
#include "convert.h"
#include "gtrace_cupti.h"
#include "ring.h"

#define BUF_SIZE	(4u << 20)	/* bytes per CUPTI activity buffer */
#define BUF_COUNT	GT_POOL_MAX	/* buffers at most: CUPTI 13 holds one per thread
					 * with records, made as needed; their pages
					 * become memory only as CUPTI fills them */
#define OUT_SIZE	(1u << 20)	/* converted records are written in chunks of up to this */
#define IDLE_MS		50		/* writer's sleep between looks at the queue */
#define EXIT_WAIT_S	5		/* at exit, how long to wait for the writer */
#define NODES_MAX	(1u << 20)	/* graph node records waiting for the writer, at most */
#define FIN_WAIT_MS	2000		/* detach: how long the writer waits for a CUDA call to
					 * finalize CUPTI in; then it leaves it to the next one */
#define ADMIT_MS	30000		/* attached: how long to wait for the recorder to admit
					 * the process before detaching */

_Static_assert(BUF_COUNT <= GT_POOL_MAX && BUF_COUNT <= GT_RING_CAP, "pool larger than the queue");
_Static_assert(BUF_SIZE % 8 == 0, "CUPTI buffers are 8-byte aligned");
_Static_assert(OUT_SIZE >= 4 * GT_CUPTI_REC_MAX, "output chunk too small");

enum agent_state {
	ST_OFF = 0,	/* not recording: idle, armed (paused), or refused */
	ST_ON,		/* recording */
	ST_STOPPING,	/* the writer is switching CUPTI off (a pause or the end) */
	ST_DONE,	/* stopped for good: the spool file is complete and closed */
};

/* What starting to record came to. */
enum begin_result {
	BEGIN_OK,
	BEGIN_LATER,	/* not now (another CUPTI client holds the process): try again later */
	BEGIN_NEVER,	/* not in this process (said) */
};

struct agent {
	_Atomic int state;		/* enum agent_state */
	_Atomic int exiting;		/* the program is exiting: writer, finish */
	_Atomic int initialized;	/* InitializeInjection ran */
	pid_t pid;			/* process that records (a forked child is not it) */
	struct gt_ctl ctl;		/* where it spools, what the recorder wants */
	struct gt_spool spool;		/* the spool file */
	bool write_failed;		/* a write failed for good: nothing more is written */
	bool driver_all;		/* the DRIVER kind is on (GTRACE_CUPTI_API=all) */
	bool driver_ids;		/* the launch/copy/set calls' records are on */
	bool subscribed;		/* sub holds CUPTI's one subscriber slot */
	bool nvtx_cbs;			/* the NVTX capture callbacks are enabled */
	bool cupti_ready;		/* clock and buffer callbacks given to CUPTI (once) */
	bool conflict_said;		/* "another CUPTI client" said */
	bool full_said, backlog_said;	/* the spool's bounds said */
	bool create_said;		/* the spool file could not be made: said */
	CUpti_SubscriberHandle sub;
	struct gt_buf_pool pool;	/* activity buffers lent to CUPTI */
	struct gt_buf_ring ring;	/* completed buffers for the writer */
	struct gt_cupti_conv *conv;	/* converter (writer thread only) */
	uint8_t *out;			/* converted records not yet written */
	size_t out_len;			/* bytes in out */
	uint64_t out_recs;		/* records of the program's in out (not the agent's own) */
	_Atomic uint64_t buffers;	/* buffers completed */
	_Atomic uint64_t unqueued;	/* records in buffers the queue could not take */
	_Atomic uint64_t refused;	/* buffer requests with the pool empty */
	/* this stretch of recording (from its start or resumption): the
	 * counters above as they were then (the spool counts its losses) */
	uint64_t base_buffers, base_unqueued, base_dropped;
	uint64_t clock_offset_ns;	/* |CUPTI timestamp - CLOCK_MONOTONIC| at start */
	unsigned kinds_on;		/* bit i: kinds[i] enabled */
	pthread_t writer;		/* writer thread (joined at exit) */
	bool writer_started;
	pthread_mutex_t lock;		/* guards nothing but the wake-up below */
	pthread_cond_t wake;		/* at exit: wakes the writer at once */
	/* CUDA graphs' kernel nodes made and cloned (program threads, in
	 * CUPTI's resource callbacks) waiting for the writer */
	pthread_mutex_t nodes_mu;	/* guards the four below */
	struct gt_gpu_graph_node *nodes;
	size_t nnodes, nodes_cap;
	uint64_t nodes_lost;		/* not kept: out of memory or NODES_MAX waiting */
	bool node_cbs;			/* the graph node callbacks are enabled */
	/* loaded into the running process by a recorder (gt_agent_attach):
	 * when that recorder is done (or gone), the agent detaches */
	bool attached;
	bool attach_recorded;		/* it recorded since the attach */
	uint64_t attach_ns;		/* when it was attached (CLOCK_MONOTONIC) */
	bool atexit_set;		/* at_exit registered (once) */
	_Atomic int fin;		/* enum fin_state: CUPTI's detach */
	/* CUDA graphs ran or were built while CUPTI recorded: CUPTI's
	 * instrumentation of their kernels points into memory of its own that
	 * cuptiFinalize frees, so that the next replay of such a graph faults
	 * the GPU (Xid 31 seen on the H200 under JAX): no finalize then */
	_Atomic int graphs_seen;
	bool graphs_said;		/* that CUPTI was left unfinalized, said (once) */
	_Atomic int forked;		/* this is a fork child of the process that records */
};

/* CUPTI's detach (cuptiFinalize), done in the exit callback of the
 * program's next CUDA call: CUPTI's own advice, so that no call of another
 * thread is inside CUPTI while it is torn down. */
enum fin_state {
	FIN_NONE = 0,	/* not asked for */
	FIN_WANT,	/* asked for: the next API exit callback does it */
	FIN_DOING,	/* a callback is doing it */
	FIN_DONE,	/* done: CUPTI is gone from the process until the next attach */
};

/* The agent's one state (agent.c). */
extern struct agent g;

/* agent.c */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *cupti_err(CUptiResult r);
uint64_t mono_ns(void);

/* agent.c, for agent_attach.c */
bool is_conflict(CUptiResult r);
void setup_clock(void);
void unsubscribe(void);
void end_recording(uint64_t flags);
void start(void);
void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data);

/* agent_attach.c: an agent loaded into the running process (g.attached) */
/* CUPTI finalized here, in a driver or runtime call's exit callback, when a
 * detach asked for it. */
void finalize_here(const CUpti_CallbackData *cd);
/* Whether the agent detaches now (what the recorder wants: want), and the
 * detach itself (the writer's; the writer ends after it). */
bool detach_now(enum gt_want want);
void detach(void);

/* agent_write.c: the writer thread's output (out: converted records not
 * yet written, at most OUT_SIZE) */
/* Writes out's records as one chunk (last: the agent's final one). */
void out_flush_as(bool last);
void out_flush(void);
/* Makes room for one more record of any size in out; returns the bytes
 * free at g.out + g.out_len. */
size_t out_room(void);
/* n bytes of records put into out; data: one record of the program's. */
void out_put(size_t n, bool data);
/* Converts and writes every queued buffer (the graph nodes first); returns
 * how many buffers there were. */
unsigned drain(void);
/* The counters of this stretch of recording, after everything else. */
void write_stats(uint64_t flags);
/* Live spooling: what CUPTI has completed, then a flush mark. */
void live_flush(void);

/* agent_graph.c */
/* A kernel node made or cloned (CUPTI's resource callback, any thread). */
void on_graph_node(CUpti_CallbackId cbid, const CUpti_ResourceData *rd);
/* The graph node callbacks on or off (on: false when CUPTI refused them). */
bool graph_node_cbs(int on);

#endif
