/* SPDX-License-Identifier: MIT */
/*
 * What the cuda object's BPF side and the recorder share to hold a process
 * that opened a libcuda or libnccl file without probes until they are
 * attached (bpf/cuda_discovery.bpf.h, user/record/probes/hold.c). Types only,
 * usable from BPF and userspace; never in a trace file.
 *
 * The files map (probed_files) says which files need no hold: the recorder
 * puts every file it attached (or found to be no library of ours) in it, by
 * the kernel's (device, inode). The hold slots live in the object's .bss,
 * which libbpf maps shared: the recorder and its watchdog process (forked
 * with that mapping) read and write them directly.
 */
#ifndef GTRACE_HOLD_H
#define GTRACE_HOLD_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define GT_HOLD_SLOTS		64	/* processes held at once, at most */
#define GT_HOLD_FILES		4096	/* files in the files map */
#define GT_HOLD_STALE_NS	500000000ull	/* a heartbeat older than this: hold nobody */

/* Kinds of struct gt_file_state. */
enum gt_file_kind {
	GT_FILE_PROBED = 1,	/* its probes are attached (since `since`): no hold, no record */
	GT_FILE_IGNORED = 2,	/* no library the recorder probes (no CUDA or NCCL symbols, or
				 * the source is off): no hold, no record */
	GT_FILE_FAILED = 3,	/* its probes could not be attached: opens are reported (the
				 * process runs unrecorded), never held */
};

/* A file as the kernel sees it: the key of the files map. */
struct gt_file_key {
	__u64 ino;	/* inode number */
	__u32 dev;	/* the inode's super block device, kernel encoding: major << 20 | minor */
	__u32 _pad;	/* zero */
};

struct gt_file_state {
	__u64 since;	/* CLOCK_MONOTONIC ns when its probes were in place (PROBED) */
	__u32 kind;	/* enum gt_file_kind */
	__u32 _pad;	/* zero */
};

/* States of a hold slot (the low half of its word; the high half is the
 * hold's sequence number, so that a slot freed and taken again is never
 * mistaken for the hold it had). A slot with pid 0 is free; BPF claims it
 * (pid), fills it, stops the process and marks it HELD; the recorder (after
 * the attach) or the watchdog (at the bound, or when the recorder is gone)
 * takes the word from HELD to CONTINUED with a compare-and-swap, and only
 * the winner sends SIGCONT; the recorder frees the slot. */
enum gt_slot_state {
	GT_SLOT_FILLING = 0,	/* claimed, being filled: not stopped yet */
	GT_SLOT_HELD = 1,	/* stopped, waiting for its probes */
	GT_SLOT_CONTINUED = 2,	/* continued at cont_ts */
};

#define GT_SLOT_STATE(w)	((__u32)(w))
#define GT_SLOT_SEQ(w)		((w) >> 32)

struct gt_hold_slot {
	__u32 pid;		/* the held process (tgid), 0 = free */
	__u32 _pad;		/* zero */
	__u64 word;		/* sequence << 32 | enum gt_slot_state */
	__u64 start_boottime;	/* its start (the group leader's, CLOCK_BOOTTIME ns): a reused
				 * pid is not continued */
	__u64 stop_ts;		/* CLOCK_MONOTONIC ns of the stop (the record's hdr.ts) */
	__u64 cont_ts;		/* when it was continued (written before the compare-and-swap
				 * by whoever tries it; the winner's holds) */
};

/* The one value of the hold_slots map (an array of one, mmapped). */
struct gt_hold_table {
	struct gt_hold_slot slot[GT_HOLD_SLOTS];
};

#endif
