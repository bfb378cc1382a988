/* SPDX-License-Identifier: MIT */
/* The ioctl recording shared by the attach rungs (kprobe and syscall
 * tracepoints in ioctl.bpf.c, fentry in ioctl_fentry.bpf.c): an entry is
 * kept per thread, the exit emits one record with the duration. */
#ifndef GTRACE_IOCTL_BPF_H
#define GTRACE_IOCTL_BPF_H

#include "common.bpf.h"

#define GT_MAX_MAJORS 8

/* Set by the recorder before load. */
const volatile __u32 majors[GT_MAX_MAJORS] = {};	/* device majors to record */
const volatile __u32 nmajors = 0;
const volatile __u32 frontend_major = 0;		/* NVIDIA frontend: RM escapes decoded */

/* An ioctl in flight on a thread. */
struct ioctl_start {
	__u64 ts;	/* entry time */
	__u64 arg;	/* ioctl argument */
	__u32 cmd;	/* request */
	__u32 rdev;	/* device number */
	__u32 param;	/* RM command or class */
	__u16 flags;	/* GT_IOCTL_* */
	__u16 rung;	/* enum gt_ioctl_rung */
	__s32 fd;	/* file descriptor or -1 */
	__u32 _pad;	/* explicit padding */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);	/* pid_tgid */
	__type(value, struct ioctl_start);
} ioctl_inflight SEC(".maps");

static __always_inline bool major_wanted(__u32 rdev)
{
	__u32 maj = rdev >> 20;
	int i;

	for (i = 0; i < GT_MAX_MAJORS; i++) {
		if (i >= nmajors)
			break;
		if (majors[i] == maj)
			return true;
	}
	return false;
}

/* _IOC encoding: type in bits 8-15, number in bits 0-7. NV_ESC_RM_CONTROL
 * (0x2a) passes an NVOS54 struct whose cmd is at +8; NV_ESC_RM_ALLOC (0x2b),
 * NV_ESC_RM_ALLOC_MEMORY (0x27) and NV_ESC_RM_ALLOC_OBJECT (0x28) structs
 * whose hClass is at +12. */
static __always_inline void rm_param(struct ioctl_start *s)
{
	__u32 nr = s->cmd & 0xff, off;

	if (!frontend_major || (s->rdev >> 20) != frontend_major || ((s->cmd >> 8) & 0xff) != 'F')
		return;
	if (nr == 0x2a) {
		off = 8;
		s->flags = GT_IOCTL_RM_CONTROL;
	} else if (nr == 0x2b || nr == 0x27 || nr == 0x28) {
		off = 12;
		s->flags = GT_IOCTL_RM_ALLOC;
	} else {
		return;
	}
	if (bpf_probe_read_user(&s->param, sizeof(s->param), (void *)(s->arg + off)))
		s->flags |= GT_IOCTL_PARAM_FAULT;
}

static __always_inline void ioctl_enter(struct file *f, int fd, __u32 cmd, __u64 arg, __u16 rung)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ioctl_start s = {};
	__u32 pid = id >> 32;
	__u8 one = 1;

	if (!f)
		return;
	s.rdev = BPF_CORE_READ(f, f_inode, i_rdev);
	if (!s.rdev || !major_wanted(s.rdev) || !traced(pid))
		return;
	own_run();
	/* a process talking to the driver uses the GPU: follow its threads */
	bpf_map_update_elem(&active_pids, &pid, &one, BPF_NOEXIST);
	if (!captured(pid))
		return;
	s.ts = bpf_ktime_get_ns();
	s.arg = arg;
	s.cmd = cmd;
	s.fd = fd;
	s.rung = rung;
	rm_param(&s);
	if (bpf_map_update_elem(&ioctl_inflight, &id, &s, BPF_ANY))
		count(&n_drop_state);
}

static __always_inline void ioctl_exit(__s64 ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ioctl_start *s = bpf_map_lookup_elem(&ioctl_inflight, &id);
	struct gt_ioctl *e;

	if (!s)
		return;
	own_run();
	e = reserve(sizeof(*e));
	if (e) {
		fill_hdr(&e->hdr, id, GT_REC_IOCTL, sizeof(*e), 0);
		e->dur = e->hdr.ts - s->ts;
		e->hdr.ts = s->ts;
		e->arg = s->arg;
		e->ret = ret;
		e->cmd = s->cmd;
		e->rdev = s->rdev;
		e->param = s->param;
		e->flags = s->flags;
		e->rung = s->rung;
		e->fd = s->fd;
		e->_pad = 0;
		submit(e);
	}
	bpf_map_delete_elem(&ioctl_inflight, &id);
}

#endif
