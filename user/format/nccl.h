/* SPDX-License-Identifier: MIT */
/*
 * The libnccl table of bpf/gtrace_nccl.h expanded once into data, for the
 * attacher and every reader, and the names of NCCL's data types and
 * reduction operators.  Part of the format: the api numbers of GT_REC_NCCL
 * records are indices into this table.
 */
#ifndef GTRACE_FORMAT_NCCL_H
#define GTRACE_FORMAT_NCCL_H

#include <stdint.h>
#include "bpf/gtrace_nccl.h"

/* One row of GT_NCCL_TABLE (gtrace_nccl.h says what the columns mean). */
struct gt_nccl_info {
	const char *name;		/* libnccl symbol */
	enum gt_nccl_kind kind;
	int8_t send, recv, count, dtype, op, peer, comm, stream, out, nranks;	/* argument indices */
};

/* NULL for api 0 and out of range. */
const struct gt_nccl_info *gt_nccl__info(unsigned api);
const char *gt_nccl__name(unsigned api);		/* "ncclAllReduce", NULL if out of range */
int gt_nccl__by_name(const char *name);			/* enum gt_nccl_api or -1 */
/* "AllReduce", "Send", ...: the symbol without "nccl"; "unknown" out of range. */
const char *gt_nccl__short_name(unsigned api);
/* "collective", "p2p", "group", "init", "split", "free"; "unknown". */
const char *gt_nccl_kind__name(enum gt_nccl_kind k);
/* "float32", "bfloat16", ... for ncclDataType_t; NULL for a value this build
 * does not know. */
const char *gt_nccl_dtype__name(uint32_t dtype);
/* Bytes of one element of ncclDataType_t, 0 when unknown. */
unsigned gt_nccl_dtype__size(uint32_t dtype);
/* "sum", "prod", "max", "min", "avg"; NULL for a custom operator (5 and up). */
const char *gt_nccl_op__name(uint32_t op);

#define GT_NCCL_NONE32 0xffffffffu	/* datatype / op of a call that has none */

#endif
