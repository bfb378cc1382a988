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
 * Where the agent spools, and when it records:
 *   GTRACE_CUPTI_DIR=<dir>   a private directory (gtrace-bpf --cupti -- CMD, or
 *                             one the user made and merges by hand later): the
 *                             agent records from its start until the recording
 *                             ends -- <dir>/GT_CUPTI_STOP_FILE appears, <dir>
 *                             goes, or the recorder that holds <dir>/
 *                             GT_CUPTI_RECORDER_FILE locked is gone (no such
 *                             file: no such check) -- and then stops for good.
 *   else the run directory   $GTRACE_RUN_DIR/cupti, by default
 *                             GTRACE_CUPTI_RUN_DIR (root's, mode 1733: anyone
 *                             may create a file in it, nobody but root lists or
 *                             removes what is not theirs).  When it exists at
 *                             cuInit the agent stays in the process, armed, and
 *                             records while a recorder is live: one holds an
 *                             OFD write lock (fcntl F_OFD_SETLK) on
 *                             <dir>/GT_CUPTI_RECORDER_FILE and wants this
 *                             process: <dir>/GT_CUPTI_SESSION_FILE says
 *                             "scope all", or "scope listed" and
 *                             <dir>/go.<pid> exists.  Otherwise (no session
 *                             file, or one that says "pause") it pauses:
 *                             CUPTI's activity off, its subscriber slot given
 *                             back, its spool file kept open; it records into
 *                             the same file again for the next recorder.  Only
 *                             files owned by root or by the directory's owner
 *                             count.  The agent looks at them every
 *                             GT_CUPTI_POLL_STOP_MS while it records; while it
 *                             does not, it looks at the session file's inode,
 *                             mtime and size every GT_CUPTI_POLL_GO_MS (the
 *                             recorder replaces the file whenever it says
 *                             something new: a new recorder, a pause, a
 *                             process listed), and at everything when that
 *                             changed, so that it starts recording within
 *                             that of a recorder's start.
 *   GTRACE_CUPTI_ALL_API=1   record every driver API call (the DRIVER activity
 *                             kind) instead of only the launch/copy/set ones.
 *   GTRACE_CUPTI_SPOOL_MAX=<bytes>  the most unread bytes the spool may hold
 *                             on disk (default GT_CUPTI_SPOOL_MAX_DEFAULT)
 *                             before the agent drops what it converts (counted).
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
 * Spool file: <dir>/gtrace-cupti.<pid>.spool (or gtrace-cupti.<pid>.<n>.spool
 * when that name is taken), created O_EXCL, mode 0600, owned by the program's
 * user: GT_CUPTI_MAGIC (8 bytes) then records of bpf/gtrace_events.h back to
 * back (each hdr.size bytes, a multiple of 8), written in large chunks of
 * whole records as CUPTI hands buffers over, so a reader may see a last
 * record cut short while the program runs.  While recording the agent hands
 * CUPTI's records over every GT_CUPTI_LIVE_FLUSH_MS (a forced flush: what has
 * completed) and then writes one GT_REC_CUPTI_MARK, so that every kernel, copy
 * and set that ended before the mark's ts is in the file before it.  At a pause
 * or a stop it writes one GT_REC_CUPTI_STATS (flags say which) after
 * everything CUPTI held.
 *
 * Reading: the recorder reads the file as it grows and gives what it read back
 * to the file system by punching a hole from the start up to exactly the end
 * of the last record it took (the file keeps its size; the bytes read become
 * zeros).  So the first non-zero bytes of a spool are where its unread records
 * begin: a recorder that comes after one that was killed finds its place
 * there (no record starts with 16 zero bytes: every record names its pid).
 *
 * Bounds: the agent keeps GT_CUPTI_RESERVE bytes allocated past the end of the
 * file (fallocate, FALLOC_FL_KEEP_SIZE) for its last records; a chunk that
 * does not fit on the file system, or that would make the unread part exceed
 * its bound, is not written: its records are counted as lost (lost_disk,
 * lost_backlog in GT_REC_CUPTI_STATS) and the agent goes on with the next.
 */
#ifndef GTRACE_CUPTI_H
#define GTRACE_CUPTI_H

/* the run directory, whose existence at cuInit arms the agent (no env
 * needed); GTRACE_RUN_DIR=<d> moves it to <d>/cupti (tests) */
#define GTRACE_CUPTI_RUN_DIR	"/run/gtrace-bpf/cupti"
#define GT_RUN_DIR_ENV		"GTRACE_RUN_DIR"
#define GT_CUPTI_RUN_SUBDIR	"cupti"

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

/* a file of this name in a private directory asks the agents to stop */
#define GT_CUPTI_STOP_FILE	"stop"
/* the file a live recorder holds an OFD write lock on */
#define GT_CUPTI_RECORDER_FILE	"recorder"
/* the run directory's session: "scope all", "scope listed" or "pause" */
#define GT_CUPTI_SESSION_FILE	"session"
#define GT_CUPTI_SCOPE_ALL	"scope all"
#define GT_CUPTI_SCOPE_LISTED	"scope listed"
#define GT_CUPTI_PAUSE		"pause"
/* a second line of a scope session (record --cupti-detach=idle): an agent
 * loaded into a running process detaches leaving CUPTI loaded, its activity
 * off and its subscriber slot given back, as a paused agent does, instead of
 * finalizing it; a later attach starts it again without CUPTI's start */
#define GT_CUPTI_DETACH_IDLE	"detach idle"
/* "scope listed": the recorder wants the process of this file, printf format
 * taking the pid */
#define GT_CUPTI_GO_FMT		"go.%d"
/* an agent loaded into the running process (--cupti=attach, the daemon's
 * attach) detaches when this file appears (a daemon's attach for a while: its
 * session goes on), as when its recorder ends; printf format taking the pid */
#define GT_CUPTI_DETACH_FMT	"detach.%d"

/* how often an agent looks at what the recorder wants */
#define GT_CUPTI_POLL_STOP_MS	200
/* ... at the run directory's session file (one stat), while it does not
 * record: a recorder publishes its session before it loads its probes
 * (hundreds of ms), so the agents record before the calls are recorded */
#define GT_CUPTI_POLL_GO_MS	100
/* ... at everything, while it does not record (the session file changes
 * whenever the recorder says something new: this is a safety net) */
#define GT_CUPTI_POLL_IDLE_MS	5000
/* how often an agent flushes while recording */
#define GT_CUPTI_LIVE_FLUSH_MS	500

/* bytes kept allocated past the end of a spool for the agent's last records */
#define GT_CUPTI_RESERVE	(64u << 10)
/* the most unread bytes a spool holds on disk (GTRACE_CUPTI_SPOOL_MAX) */
#define GT_CUPTI_ENV_SPOOL_MAX	"GTRACE_CUPTI_SPOOL_MAX"
#define GT_CUPTI_SPOOL_MAX_DEFAULT	(256ull << 20)

#endif /* GTRACE_CUPTI_H */
