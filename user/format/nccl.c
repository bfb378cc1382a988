// SPDX-License-Identifier: MIT
#include <string.h>
#include "format/nccl.h"

static const struct gt_nccl_info nccl_table[GT_NCCL_API__COUNT] = {
#define GT_NCCL_ROW(sym, k, s, r, c, dt, o, p, cm, st, ou, nr)			\
	[GT_NCCL_API_##sym] = { #sym, GT_NCCL_K_##k, s, r, c, dt, o, p, cm, st, ou, nr },
	GT_NCCL_TABLE(GT_NCCL_ROW)
#undef GT_NCCL_ROW
};

const struct gt_nccl_info *gt_nccl__info(unsigned api)
{
	if (api == GT_NCCL_API_NONE || api >= GT_NCCL_API__COUNT)
		return NULL;
	return &nccl_table[api];
}

const char *gt_nccl__name(unsigned api)
{
	const struct gt_nccl_info *i = gt_nccl__info(api);

	return i ? i->name : NULL;
}

int gt_nccl__by_name(const char *name)
{
	if (!name)
		return -1;
	for (unsigned i = 1; i < GT_NCCL_API__COUNT; i++)
		if (!strcmp(nccl_table[i].name, name))
			return (int)i;
	return -1;
}

const char *gt_nccl__short_name(unsigned api)
{
	const char *n = gt_nccl__name(api);

	return n ? n + 4 : "unknown";
}

const char *gt_nccl_kind__name(enum gt_nccl_kind k)
{
	static const char *const names[] = {
		[GT_NCCL_K_COLL] = "collective", [GT_NCCL_K_P2P] = "p2p", [GT_NCCL_K_GROUP] = "group",
		[GT_NCCL_K_INIT] = "init", [GT_NCCL_K_SPLIT] = "split", [GT_NCCL_K_FREE] = "free",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) && names[k] ? names[k] : "unknown";
}

/* ncclDataType_t, as nccl.h numbers them */
static const struct {
	const char *name;
	unsigned size;
} dtypes[] = {
	{ "int8", 1 }, { "uint8", 1 }, { "int32", 4 }, { "uint32", 4 }, { "int64", 8 },
	{ "uint64", 8 }, { "float16", 2 }, { "float32", 4 }, { "float64", 8 }, { "bfloat16", 2 },
	{ "float8e4m3", 1 }, { "float8e5m2", 1 },
};

const char *gt_nccl_dtype__name(uint32_t dtype)
{
	return dtype < sizeof(dtypes) / sizeof(dtypes[0]) ? dtypes[dtype].name : NULL;
}

unsigned gt_nccl_dtype__size(uint32_t dtype)
{
	return dtype < sizeof(dtypes) / sizeof(dtypes[0]) ? dtypes[dtype].size : 0;
}

const char *gt_nccl_op__name(uint32_t op)
{
	static const char *const ops[] = { "sum", "prod", "max", "min", "avg" };

	return op < sizeof(ops) / sizeof(ops[0]) ? ops[op] : NULL;
}
