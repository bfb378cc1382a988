/* SPDX-License-Identifier: MIT */
/*
 * The contract between the CUPTI agent (cupti/, libgtrace-cupti.so) and the
 * recorder that collects its spool files.  Plain constants: the recorder
 * includes this without the CUDA toolkit.
 *
 * How a program gets the agent:
 *   CUDA_INJECTION64_PATH=<prefix>/lib/gtrace-bpf/libgtrace-cupti.so
 *     the CUDA driver loads the agent in cuInit and calls InitializeInjection.
 *   NVTX_INJECTION64_PATH=<the agent, as above>  (optional; or libcupti.so)
 *     NVTX ranges and marks reach CUPTI only when NVTX loads an injection
 *     library at the program's first NVTX call, from this variable, so it
 *     must be in the environment when the program starts.  Naming the agent
 *     is the cheaper choice: it hands NVTX to libcupti only while a recording
 *     wants the process and otherwise declines, leaving NVTX calls no-ops;
 *     naming libcupti itself makes NVTX go through CUPTI for the whole life
 *     of the program.  Without it: kernels, copies, sets, no GT_REC_NVTX.
 *
 * When the agent records (else it returns at once, subscribing to nothing):
 *   GTRACE_CUPTI_DIR=<dir>   spool into <dir>; or, when unset,
 *   GTRACE_CUPTI_RUN_DIR exists  (a running `gtrace-bpf --all`, or `daemon
 *                             --cupti`, creates it; its mode decides whose
 *                             programs can join: the agent only needs to
 *                             create its file there).
 *   GTRACE_CUPTI_ALL_API=1   record every driver API call (the DRIVER activity
 *                             kind) instead of only the launch/copy/set ones.
 *   GTRACE_NVTX_CAPTURE=NAME[@DOMAIN]  capture ranges (record -c nvtx): the
 *                             agent calls its function gtrace_capture_open()
 *                             when the first NVTX range with message NAME (in
 *                             DOMAIN, else NVTX's default domain) opens in the
 *                             process and gtrace_capture_close() when the last
 *                             one ends; the recorder puts uprobes on the two
 *                             symbols in the agent file.  "\@" is an '@' of
 *                             NAME or DOMAIN.  Needs NVTX_INJECTION64_PATH =
 *                             the agent.  Details: cupti/nvtx_capture.h.
 *
 * Spool file: <dir>/gtrace-cupti.<pid>.spool, created O_EXCL, mode 0600,
 * owned by the program's user: GT_CUPTI_MAGIC (8 bytes) then records of
 * bpf/gtrace_events.h back to back (each hdr.size bytes, a multiple of 8),
 * written in large chunks as CUPTI hands buffers over, so a reader may see a
 * last record cut short while the program runs; it ends with one
 * GT_REC_CUPTI_STATS once the agent stopped, and is fsync'ed then.
 *
 * Live spooling (gtrace-bpf daemon --cupti reads the files as they grow):
 * while <dir>/GT_CUPTI_LIVE_FILE exists the agent also hands CUPTI's records
 * over every GT_CUPTI_LIVE_FLUSH_MS (a forced flush: what has completed) and
 * then writes one GT_REC_CUPTI_MARK, so that every kernel, copy and set that
 * ended before the mark's ts is in the file before it.  The reader may punch
 * holes in what it has read (the file's size stays, its blocks go back).
 *
 * Stopping: the agent stops (flushes CUPTI, writes its stats record, closes
 * the file) at the program's exit, or within ~GT_CUPTI_POLL_STOP_MS after the
 * recorder creates <dir>/GT_CUPTI_STOP_FILE or removes <dir>.  A stopped
 * agent does not start again in that process.
 */
#ifndef GTRACE_CUPTI_H
#define GTRACE_CUPTI_H

/* directory whose existence asks every agent to record (no env needed) */
#define GTRACE_CUPTI_RUN_DIR	"/run/gtrace-bpf/cupti"

/* environment of the traced program */
#define GT_CUPTI_ENV_DIR	"GTRACE_CUPTI_DIR"
#define GT_CUPTI_ENV_ALL_API	"GTRACE_CUPTI_ALL_API"
/* driver API records: unset or "calls" (the launch/copy/set calls: the
 * merger's exact links), "all" (every driver call, like
 * GTRACE_CUPTI_ALL_API=1), "none" (the merger links by launch order:
 * right for programs that launch from one thread at a time) */
#define GT_CUPTI_ENV_API	"GTRACE_CUPTI_API"
/* capture ranges: NAME or NAME@DOMAIN (above) */
#define GT_CUPTI_ENV_NVTX_CAPTURE	"GTRACE_NVTX_CAPTURE"

/* the agent's functions called at a capture range's open and close: each
 * call is one hit of a uprobe on the symbol's address */
#define GT_CUPTI_CAPTURE_OPEN_SYM	"gtrace_capture_open"
#define GT_CUPTI_CAPTURE_CLOSE_SYM	"gtrace_capture_close"

/* spool file name in the directory, printf format taking the pid */
#define GT_CUPTI_SPOOL_FMT	"gtrace-cupti.%d.spool"
#define GT_CUPTI_SPOOL_PREFIX	"gtrace-cupti."
#define GT_CUPTI_SPOOL_SUFFIX	".spool"

/* first bytes of a spool file (not NUL-terminated in the file) */
#define GT_CUPTI_MAGIC		"GTCUPTI1"
#define GT_CUPTI_MAGIC_LEN	8

/* a file of this name in the directory asks the agents to stop */
#define GT_CUPTI_STOP_FILE	"stop"

/* how often an agent looks for the stop signal (and the live file) */
#define GT_CUPTI_POLL_STOP_MS	200

/* a file of this name in the directory asks for live spooling (above) */
#define GT_CUPTI_LIVE_FILE	"live"
/* how often an agent flushes while spooling live */
#define GT_CUPTI_LIVE_FLUSH_MS	500

#endif /* GTRACE_CUPTI_H */
