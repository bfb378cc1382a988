/* SPDX-License-Identifier: MIT */
/*
 * Internal to `export -f json`: the state its two files share.  json.c
 * frames the document, writes the calls, processes, threads, NCCL calls
 * and the GPU side and the metadata, and drives the export;
 * json_capture.c writes capture control, the daemon's triggers, overhead
 * and GPU metric records, and the findings.
 */
#ifndef GTRACE_EXPORT_JSON_INT_H
#define GTRACE_EXPORT_JSON_INT_H

#include <stdbool.h>
#include <stdint.h>
#include "export/fields.h"
#include "lib/hmap.h"
#include "lib/obuf.h"
#include "lib/u64map.h"

/* Synthetic tids of the GPU and NVTX lanes start here: above PID_MAX_LIMIT
 * (2^22), so they never meet a kernel tid. */
#define LANE_BASE 0x40000000u

struct jx {
	struct obuf ob;
	struct gt_decoder *d;
	/* processes and threads seen so far, with the hash of the name last
	 * written for them (0: none yet): a name is written again only when it
	 * changed (exec, a name learned late) */
	struct u64map procs;	/* pid + 1 -> name hash */
	struct u64map threads;	/* THREAD_KEY -> name hash */
	uint64_t last_thread;	/* THREAD_KEY of the latest event: calls come in runs per thread */
	bool first;		/* no event written yet: no comma before the next */
	struct hmap gpu_lanes;	/* (context << 32 | stream, pid) -> struct lane */
	struct hmap nvtx_lanes;	/* (tid, pid) -> struct lane */
	uint32_t next_lane;	/* the next synthetic tid */
	struct hmap flows;	/* (launch_ts, launch tid) -> struct jflow */
	uint64_t next_flow;	/* the next flow id */
	/* the latest launch recorded at entry only, written already: the
	 * GPU records after it are its own (see the top) */
	struct {
		bool set;	/* one was written */
		uint32_t pid, tid;
		uint64_t ts;	/* its entry */
	} held;
	struct capture_spans *cap;	/* capture ranges and windows, written at the end */
	bool recorder_named;	/* the process_name of RECORDER_PID is written */
	struct u64map comms;	/* uid, or (pid, comm) key, -> synthetic pid of its communicator */
	uint32_t ncomms;	/* communicators' processes written */
};

static inline void ev_open(struct jx *j)
{
	if (j->first)
		OBUF_LIT(&j->ob, "\n");
	else
		OBUF_LIT(&j->ob, ",\n");
	j->first = false;
}

/* ns as microseconds with three decimals: 1234567 -> 1234.567 */
static inline void put_us(struct obuf *o, uint64_t ns)
{
	uint64_t frac = ns % 1000;
	char *p;

	obuf__u64(o, ns / 1000);
	p = obuf__room(o, 4);
	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	p[2] = (char)('0' + frac / 10 % 10);
	p[3] = (char)('0' + frac % 10);
	o->len += 4;
}

#define KEY_STR(o, key, s) do { OBUF_LIT(o, key); obuf__json_str(o, (s) ? (s) : ""); } while (0)
#define KEY_U64(o, key, v) do { OBUF_LIT(o, key); obuf__u64(o, v); } while (0)

/* json.c */

void jx__put_pid_tid(struct obuf *o, uint32_t pid, uint32_t tid);
void jx__put_meta_name(struct jx *j, const char *what, uint32_t pid, uint32_t tid,
		       const char *name);
void jx__put_meta_sort(struct jx *j, const char *what, uint32_t pid, uint32_t tid,
		       uint64_t index);
/* Before the first event of a process: its metadata. */
int jx__proc_seen(struct jx *j, uint32_t pid);
/* Opens an event with its name: {"name":NAME — the caller writes the rest. */
void jx__put_named(struct jx *j, const char *name);
/* The rest of an instant event at ts after its name: category cat, scope
 * ("t" thread, "p" process, "g" global), pid, tid, and the fields v as
 * args, those of skip left out. */
int jx__put_instant_at(struct jx *j, uint64_t ts, uint32_t pid, uint32_t tid, const char *cat,
		       const char *scope, const struct cf_val *v, unsigned n, uint64_t skip);
/* The same for rec's own time, pid and tid, which its args leave out. */
int jx__put_instant_rest(struct jx *j, const struct gt_hdr *rec, const char *cat,
			 const char *scope, const struct cf_val *v, unsigned n);

/* json_capture.c */

/* A flight-recorder trigger: an instant of global scope (it marks the whole
 * timeline, and a signal's has no process), named as in Perfetto. */
int jx__put_trigger(struct jx *j, const struct gt_hdr *rec);
/* An overhead record of the daemon: counter events of the recorder's
 * process named as the Perfetto export's counter tracks, and for a change
 * (not the periodic estimate) an instant of that process, named as in
 * Perfetto, args dump's fields (pid and tid: the thread that paid most). */
int jx__put_overhead(struct jx *j, const struct gt_hdr *rec);
/* A GPU metric sample: a counter event of the recorder's process named as
 * the Perfetto export's track with its GPU, "GPU 0 sm_active (%)", one
 * series "value", exact, from ts on; a process' memory (proc_mem_used) a
 * counter of that process, "GPU 0 memory (B)". */
int jx__put_gpu_metric(struct jx *j, const struct gt_hdr *rec);
/* The capture lanes: per process with ranges "Capture ranges", and the
 * recorder's "Light-mode windows" with the windows and hot-probe changes. */
int jx__put_captures(struct jx *j, uint64_t end_ts);
/* What the metadata says of capture control, when the trace says anything. */
void jx__put_capture_meta(struct jx *j);
/* The findings of export__set_findings (export.h): per (pid, rule) a lane
 * "Findings: RULE" in the process, a complete event per example (an instant
 * when it has no length or would overlap the one before). */
int jx__put_findings(struct jx *j);

#endif
