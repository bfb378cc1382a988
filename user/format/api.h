/* SPDX-License-Identifier: MIT */
/*
 * The libcuda API table of bpf/gtrace_api.h expanded once into data, for the
 * attacher (which program, which probes) and every reader (what the raw
 * arguments mean): lookups by enum gt_api or name, and the names of the call
 * types and copy kinds the readers print.  Part of the format: the api
 * numbers in a trace are indices into this table.
 */
#ifndef GTRACE_FORMAT_API_H
#define GTRACE_FORMAT_API_H

#include <stdbool.h>
#include <stdint.h>
#include "bpf/gtrace_api.h"

/* What a call is, for "type" in dump and grouping in stats. */
enum gt_call_type {
	GT_T_LAUNCH, GT_T_MEMCPY, GT_T_MEMSET, GT_T_ALLOC, GT_T_FREE, GT_T_SYNC,
	GT_T_MODULE, GT_T_CONTEXT, GT_T_STREAM, GT_T_EVENT, GT_T_MARKER, GT_T_INIT,
	GT_T__COUNT,
};

/* One row of GT_API_TABLE (gtrace_api.h says what the columns mean). */
struct gt_api_info {
	const char *name;	/* libcuda symbol */
	enum gt_api_class cls;	/* how the decoder reads it */
	enum gt_prog prog;	/* entry program */
	enum gt_ret_prog ret;	/* exit program */
	int8_t out, str;	/* out-pointer and string argument indices, GT_NA if none */
	int8_t a, b, c, d;	/* class-dependent argument indices, GT_NA if none */
	uint8_t kind;		/* memcpy: enum gt_copy_kind; memset: element size; launch: 1 = cooperative */
};

/* Table lookups. */
const struct gt_api_info *gt_api__info(unsigned api);	/* NULL if out of range */
const char *gt_api__name(unsigned api);			/* "cuLaunchKernel", NULL if out of range */
int gt_api__by_name(const char *name);			/* enum gt_api or -1 */
enum gt_api_class gt_api__class(unsigned api);
/* True for the calls a program makes per kernel: launches, graph launches,
 * async copies and sets, event records, stream waits and queries. Light
 * mode records them only inside its windows (struct gt_capture); every
 * other call is recorded all the time. */
bool gt_api__hot(unsigned api);
const char *gt_call_type__name(enum gt_call_type t);	/* "launch", ... */
const char *gt_copy_kind__name(enum gt_copy_kind k);	/* "HtoD", ... */

#endif
