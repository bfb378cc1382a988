// SPDX-License-Identifier: MIT
#include <string.h>
#include "format/api.h"

/* The table expanded once into data, so that lookups are array indexing. */
static const struct gt_api_info api_table[GT_API__COUNT] = {
#define GT_API_ROW(sym, cls, prog, ret, out, str, a, b, c, d, kind)		\
	[GT_API_##sym] = { #sym, GT_CLS_##cls, GT_P_##prog, GT_R_##ret,	\
			   out, str, a, b, c, d, kind },
	GT_API_TABLE(GT_API_ROW)
#undef GT_API_ROW
};

const struct gt_api_info *gt_api__info(unsigned api)
{
	if (api == GT_API_NONE || api >= GT_API__COUNT)
		return NULL;
	return &api_table[api];
}

const char *gt_api__name(unsigned api)
{
	const struct gt_api_info *i = gt_api__info(api);

	return i ? i->name : NULL;
}

int gt_api__by_name(const char *name)
{
	/* A linear scan: used when attaching and parsing filters, never per record. */
	if (!name)
		return -1;
	for (unsigned i = 1; i < GT_API__COUNT; i++)
		if (strcmp(api_table[i].name, name) == 0)
			return (int)i;
	return -1;
}

enum gt_api_class gt_api__class(unsigned api)
{
	const struct gt_api_info *i = gt_api__info(api);

	return i ? i->cls : GT_CLS_NONE;
}

bool gt_api__hot(unsigned api)
{
	const struct gt_api_info *i = gt_api__info(api);

	if (!i)
		return false;
	switch (i->cls) {
	case GT_CLS_LAUNCH:
	case GT_CLS_GRAPH:
	case GT_CLS_KERNEL_FUNC:	/* PyTorch: 4 cuKernelGetFunction per MLP step */
	case GT_CLS_EVENT_RECORD:
	case GT_CLS_STREAM_WAIT:
	case GT_CLS_QUERY:
		return true;
	case GT_CLS_MEMCPY:
	case GT_CLS_MEMCPY2D:
	case GT_CLS_MEMCPY3D:
	case GT_CLS_MEMSET:
		/* the async forms (they take a stream); the blocking ones are waits */
		return i->d != GT_NA;
	default:
		return false;
	}
}

static const char *const call_type_names[GT_T__COUNT] = {
	[GT_T_LAUNCH] = "launch",	[GT_T_MEMCPY] = "memcpy",
	[GT_T_MEMSET] = "memset",	[GT_T_ALLOC] = "alloc",
	[GT_T_FREE] = "free",		[GT_T_SYNC] = "sync",
	[GT_T_MODULE] = "module",	[GT_T_CONTEXT] = "context",
	[GT_T_STREAM] = "stream",	[GT_T_EVENT] = "event",
	[GT_T_MARKER] = "marker",	[GT_T_INIT] = "init",
};

const char *gt_call_type__name(enum gt_call_type t)
{
	if ((unsigned)t >= GT_T__COUNT)
		return "unknown";
	return call_type_names[t];
}

static const char *const copy_kind_names[GT_COPY__COUNT] = {
	[GT_COPY_UNKNOWN] = "Unknown",	[GT_COPY_HTOD] = "HtoD",
	[GT_COPY_DTOH] = "DtoH",	[GT_COPY_DTOD] = "DtoD",
	[GT_COPY_HTOH] = "HtoH",	[GT_COPY_PTOP] = "PtoP",
	[GT_COPY_DEFAULT] = "Default",	[GT_COPY_HTOA] = "HtoA",
	[GT_COPY_ATOH] = "AtoH",	[GT_COPY_DTOA] = "DtoA",
	[GT_COPY_ATOD] = "AtoD",	[GT_COPY_ATOA] = "AtoA",
};

const char *gt_copy_kind__name(enum gt_copy_kind k)
{
	if ((unsigned)k >= GT_COPY__COUNT)
		return "Unknown";
	return copy_kind_names[k];
}
