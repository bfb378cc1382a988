/* SPDX-License-Identifier: MIT */
/*
 * The records that put several hosts' traces on one clock: the clock
 * pairs every trace holds and a job trace's hosts (merge --hosts).
 * Part of the trace format: included by bpf/gtrace_events.h (struct
 * gt_hdr, the record types), never on its own.
 */
#ifndef GTRACE_JOB_EVENTS_H
#define GTRACE_JOB_EVENTS_H

/* gt_clock.kind */
enum gt_clock_kind {
	GT_CLOCK_START = 1,	/* when the recording began */
	GT_CLOCK_PERIODIC = 2,	/* every GT_CLOCK_PERIOD_NS while it records */
	GT_CLOCK_END = 3,	/* when it ended */
};
#define GT_CLOCK_PERIOD_NS	10000000000ull

/* gt_clock.sync: what the kernel's NTP state (adjtimex) says of CLOCK_REALTIME */
enum gt_clock_sync {
	GT_CLOCK_SYNC_UNKNOWN = 0,	/* it could not be read */
	GT_CLOCK_SYNCED = 1,		/* a synchronization daemon (chrony, ntpd, ptp4l's phc2sys)
					 * keeps it: max_error_ns bounds its error */
	GT_CLOCK_UNSYNCED = 2,		/* nothing keeps it synchronized */
};

/* One CLOCK_REALTIME reading between two CLOCK_MONOTONIC ones: the pair maps
 * this host's CLOCK_MONOTONIC (every ts) onto wall-clock time, which is what
 * first aligns the traces of several hosts; with the host's own error bound
 * and boot (the same boot id: the same CLOCK_MONOTONIC). */
struct gt_clock {
	struct gt_hdr hdr;	/* ts = CLOCK_MONOTONIC midway between the two reads; pid 0 */
	__s64 realtime_ns;	/* CLOCK_REALTIME read between them */
	__u32 half_span_ns;	/* half the time between the two MONOTONIC reads: how exact the pair is */
	__u32 kind;		/* enum gt_clock_kind */
	__s64 sync_offset_ns;	/* adjtimex's last offset of the synchronization daemon, 0 unknown */
	__u64 max_error_ns;	/* adjtimex's maxerror: the bound on CLOCK_REALTIME's error,
				 * UINT64_MAX unknown */
	__u64 est_error_ns;	/* adjtimex's esterror, UINT64_MAX unknown */
	__u32 sync;		/* enum gt_clock_sync */
	__u32 _pad;		/* explicit padding */
	__u8 boot_id[16];	/* /proc/sys/kernel/random/boot_id, zeros unknown */
};

/* gt_host.method: how a host's clock was mapped onto the job's */
enum gt_host_method {
	GT_HOST_REFERENCE = 0,	/* the first host: the job's clock is its CLOCK_MONOTONIC */
	GT_HOST_SAME_BOOT = 1,	/* the same boot id as the reference: the same clock */
	GT_HOST_REALTIME = 2,	/* by the CLOCK_REALTIME pairs alone (no collective to align on) */
	GT_HOST_COLLECTIVES = 3,/* by the pairs, then refined on the ends of NCCL collectives */
};

/* A job trace's host: hdr.pid is the host's index h (0 the reference); its
 * processes' pids and tids in the job trace are theirs | h << GT_HOST_SHIFT. */
#define GT_HOST_SHIFT	22	/* Linux pids are below 2^22 (PID_MAX_LIMIT) */
struct gt_host {
	struct gt_hdr hdr;	/* ts = the job trace's start; pid = the host's index */
	__s64 offset_ns;	/* added to its CLOCK_MONOTONIC times to make the job's */
	__s64 realtime_ns;	/* of which the CLOCK_REALTIME pairs said this */
	__u64 residual_ns;	/* collectives: the median spread of their aligned ends
				 * across hosts after alignment, 0 otherwise */
	__u64 residual_max_ns;	/* ... the largest */
	__u32 collectives;	/* collectives shared with the hosts aligned before it, used */
	__u32 method;		/* enum gt_host_method */
	__u64 max_error_ns;	/* its clock-sync error bound (gt_clock), UINT64_MAX unknown */
	__u8 boot_id[16];
	__u16 len;		/* bytes in name (the host's name, then NUL, then its trace
				 * file's name, then NUL) */
	__u16 _pad[3];
	char name[];		/* record padded to 8 */
};

#endif /* GTRACE_JOB_EVENTS_H */
