/* SPDX-License-Identifier: MIT */
/*
 * The builders of a record's field list (struct cf_val), shared by the
 * files of the fields (fields.c: calls, NCCL calls; fields_proc.c:
 * processes, ioctls, off-CPU intervals; fields_gpu.c: the GPU side;
 * fields_daemon.c: capture control, triggers, overhead, GPU metrics).
 */
#ifndef GTRACE_FIELDS_INT_H
#define GTRACE_FIELDS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "export/fields.h"

static inline void vu(struct cf_val *v, unsigned *n, enum cf_id id, uint64_t u)
{
	v[*n] = (struct cf_val){ .id = id, .kind = CF_K_U64, .u = u };
	(*n)++;
}

static inline void vi(struct cf_val *v, unsigned *n, enum cf_id id, int64_t i)
{
	v[*n] = (struct cf_val){ .id = id, .kind = CF_K_I64, .i = i };
	(*n)++;
}

static inline void vsn(struct cf_val *v, unsigned *n, enum cf_id id, const char *s, size_t len)
{
	v[*n] = (struct cf_val){ .id = id, .kind = CF_K_STR, .len = (uint32_t)len, .s = s };
	(*n)++;
}

static inline void vs(struct cf_val *v, unsigned *n, enum cf_id id, const char *s)
{
	vsn(v, n, id, s, strlen(s));
}

static inline void vb(struct cf_val *v, unsigned *n, enum cf_id id, bool b)
{
	v[*n] = (struct cf_val){ .id = id, .kind = CF_K_BOOL, .b = b };
	(*n)++;
}

static inline void vd(struct cf_val *v, unsigned *n, enum cf_id id, const uint32_t *dim)
{
	v[*n] = (struct cf_val){ .id = id, .kind = CF_K_DIM3, .dim = dim };
	(*n)++;
}

static inline void vp(struct cf_val *v, unsigned *n, enum cf_id id, uint32_t ppm)
{
	v[*n] = (struct cf_val){ .id = id, .kind = CF_K_PPM, .u = ppm };
	(*n)++;
}

/* The common fields of a record that was taken on no CPU: capture
 * control's, the daemon's. */
static inline void no_cpu_fields(const struct gt_hdr *rec, struct cf_val v[CF_MAX], unsigned *n,
			  const char *type)
{
	vu(v, n, CF_TS, rec->ts);
	vu(v, n, CF_PID, rec->pid);
	vu(v, n, CF_TID, rec->tid);
	vs(v, n, CF_TYPE, type);
}

#endif
