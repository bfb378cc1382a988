// SPDX-License-Identifier: MIT
/*
 * The fields of a process' records (exec, fork, exit, seen, its rank), of
 * the driver's ioctls (device, command and RM names by the trace's device
 * majors) and of off-CPU intervals, and a process' label (name and rank),
 * shared by dump and the exports as fields.c's are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export/fields.h"
#include "export/fields_int.h"
#include "format/nv_ioctl.h"
#include "format/records.h"
#include "format/trace_file.h"


int fields__process_label(const struct gt_decoder *d, uint32_t pid, char **out)
{
	const char *name = gt_decoder__process_name(d, pid);
	char rank[48], host[300] = "";

	*out = NULL;
	gt_decoder__rank_text(d, pid, rank, sizeof(rank));
	/* a job trace: the host, and the pid as the host knows it */
	if (gt_decoder__nhosts(d)) {
		const char *hn = gt_decoder__host_name(d, pid >> GT_HOST_SHIFT);

		snprintf(host, sizeof(host), " @ host %u (%.200s) pid %u", pid >> GT_HOST_SHIFT, hn ? hn : "?",
			 pid & ((1u << GT_HOST_SHIFT) - 1));
	}
	if (!rank[0] && !name && !host[0])
		return 0;
	/* as long as the name is: a command line of 4 KB keeps its rank */
	if (!rank[0] && !host[0])
		*out = strdup(name);
	else if (asprintf(out, "%s%s%s%s%s%s", name ? name : "", name && rank[0] ? " " : "", rank[0] ? "[" : "",
			  rank, rank[0] ? "]" : "", host) < 0)
		*out = NULL;
	return *out ? 0 : -ENOMEM;
}

static unsigned rank_fields(const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	const struct gt_proc_rank *r = (const void *)rec;
	unsigned n = 0;

	vu(v, &n, CF_TS, rec->ts);
	vu(v, &n, CF_PID, rec->pid);
	vs(v, &n, CF_TYPE, "rank");
	/* -1: not in the environment */
	vi(v, &n, CF_RANK, r->rank);
	vi(v, &n, CF_LOCAL_RANK, r->local_rank);
	vi(v, &n, CF_WORLD_SIZE, r->world_size);
	vi(v, &n, CF_LOCAL_WORLD, r->local_world_size);
	return n;
}

/* Device majors of the trace being formatted (dump, exports: one trace at a
 * time per process). */
static struct nv_majors trace_majors;

void fields__set_trace_info(const struct gt_file_info *info)
{
	nv_majors__from_info(info, &trace_majors);
}

static void common_fields(const struct gt_hdr *rec, struct cf_val v[CF_MAX], unsigned *n,
			  const char *type)
{
	vu(v, n, CF_TS, rec->ts);
	vu(v, n, CF_PID, rec->pid);
	vu(v, n, CF_TID, rec->tid);
	vu(v, n, CF_CPU, rec->cpu);
	vs(v, n, CF_TYPE, type);
}

static unsigned ioctl_fields(const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	static char dev[48], cmd[64], rm[24];
	const struct gt_ioctl *io = (const void *)rec;
	unsigned n = 0;
	const char *name;

	common_fields(rec, v, &n, "ioctl");
	vu(v, &n, CF_DUR, io->dur);
	vi(v, &n, CF_RET, io->ret);
	vb(v, &n, CF_FAILED, io->ret < 0);
	vs(v, &n, CF_DEVICE, nv_ioctl__device_name(&trace_majors, io->rdev >> 20,
						   io->rdev & 0xfffff, dev, sizeof(dev)));
	vu(v, &n, CF_CMD, io->cmd);
	vs(v, &n, CF_NAME, nv_ioctl__cmd_name(&trace_majors, io->rdev >> 20, io->cmd, cmd, sizeof(cmd)));
	if ((io->flags & (GT_IOCTL_RM_CONTROL | GT_IOCTL_RM_ALLOC)) && !(io->flags & GT_IOCTL_PARAM_FAULT)) {
		name = io->flags & GT_IOCTL_RM_CONTROL ? nv_ioctl__rm_control_name(io->param) :
							nv_ioctl__rm_class_name(io->param);
		if (!name) {
			snprintf(rm, sizeof(rm), "0x%x", io->param);
			name = rm;
		}
		vs(v, &n, CF_RM, name);
	}
	if (io->fd >= 0)
		vi(v, &n, CF_FD, io->fd);
	return n;
}

static unsigned offcpu_fields(const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	static char state[16];
	const struct gt_offcpu *oc = (const void *)rec;
	unsigned n = 0;

	common_fields(rec, v, &n, "offcpu");
	vu(v, &n, CF_DUR, oc->dur);
	/* R: preempted while runnable; S: waiting (sleep, futex, poll); D:
	 * uninterruptible (also killable and idle waits). Modifier bits such as
	 * TASK_FREEZABLE (0x2000) or TASK_WAKEKILL (0x100) ride along. */
	if (oc->state == 0)
		snprintf(state, sizeof(state), "R");
	else if (oc->state & 1)
		snprintf(state, sizeof(state), "S");
	else if (oc->state & 2)
		snprintf(state, sizeof(state), "D");
	else
		snprintf(state, sizeof(state), "0x%x", oc->state);
	vs(v, &n, CF_STATE, state);
	vu(v, &n, CF_NEXT_CPU, oc->next_cpu);
	return n;
}

unsigned fields__proc(const struct gt_hdr *rec, struct cf_val v[CF_MAX])
{
	static const char *const events[] = {
		[GT_REC_EXEC] = "exec", [GT_REC_FORK] = "fork", [GT_REC_EXIT] = "exit",
		[GT_REC_PROC_INFO] = "seen",
	};
	const struct gt_proc_evt *pe = (const void *)rec;
	unsigned n = 0;

	if (rec->type == GT_REC_IOCTL)
		return ioctl_fields(rec, v);
	if (rec->type == GT_REC_OFFCPU)
		return offcpu_fields(rec, v);
	if (rec->type == GT_REC_PROC_RANK)
		return rank_fields(rec, v);
	if (rec->type != GT_REC_EXEC && rec->type != GT_REC_FORK && rec->type != GT_REC_EXIT &&
	    rec->type != GT_REC_PROC_INFO)
		return 0;
	common_fields(rec, v, &n, "process");
	vs(v, &n, CF_EVENT, events[rec->type]);
	vu(v, &n, CF_PPID, pe->ppid);
	vsn(v, &n, CF_COMM, pe->comm, strnlen(pe->comm, sizeof(pe->comm)));
	if (rec->type == GT_REC_EXIT)
		vi(v, &n, CF_EXIT_CODE, pe->exit_code);
	if (pe->cgroup)
		vu(v, &n, CF_CGROUP, pe->cgroup);
	return n;
}
