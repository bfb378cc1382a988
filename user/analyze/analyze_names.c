// SPDX-License-Identifier: MIT
/*
 * The names of `gtrace-bpf analyze` (see analyze.h): the rules' stable ids,
 * the severities, idle kinds, kernel classes and bounds as words, and the
 * kernel classes by name fragments (az_kclass__of).
 */
#include <string.h>
#include "analyze/analyze_int.h"

/* ---- names ---------------------------------------------------------------- */

static const char *const rule_ids[AZ_RULE__COUNT] = {
#define AZ_RULE(name, id, what, fix) [AZ_RULE_##name] = id,
#include "analyze/rule_table.h"
#undef AZ_RULE
};

const char *az_rule__id(enum az_rule r)
{
	return (unsigned)r < AZ_RULE__COUNT ? rule_ids[r] : NULL;
}

int az_rule__by_id(const char *id)
{
	for (int i = 0; i < AZ_RULE__COUNT; i++)
		if (!strcmp(rule_ids[i], id))
			return i;
	return -1;
}

const char *az_severity__name(enum az_severity s)
{
	return s == AZ_SEV_HIGH ? "high" : s == AZ_SEV_MEDIUM ? "medium" : "low";
}

const char *az_idle__name(enum az_idle i)
{
	static const char *const n[AZ_IDLE__COUNT] = { "submit", "launch", "sync", "other",
						       "before", "after" };

	return (unsigned)i < AZ_IDLE__COUNT ? n[i] : "?";
}

const char *az_kclass__name(enum az_kclass c)
{
	static const char *const n[AZ_KC__COUNT] = { "gemm", "conv", "attention", "elementwise",
						     "reduction", "nccl", "other" };

	return (unsigned)c < AZ_KC__COUNT ? n[c] : "?";
}

const char *az_bound__name(enum az_bound b)
{
	static const char *const n[] = { "unknown", "compute", "memory", "communication",
					 "transfers", "kernels", "launch", "host" };

	return (unsigned)b < sizeof(n) / sizeof(n[0]) ? n[b] : "?";
}

/* Name fragments of each class, tried in the order of enum az_kclass's
 * comment: the first class one of whose fragments the name holds (case
 * ignored) wins. */
static const struct {
	enum az_kclass c;
	const char *const *frags;
} kclass_rules[] = {
	{ AZ_KC_NCCL, (const char *const[]){ "nccl", NULL } },
	{ AZ_KC_ATTENTION, (const char *const[]){ "flash", "attention", "attn", "fmha", "mha_",
						   "sdpa", NULL } },
	{ AZ_KC_GEMM, (const char *const[]){ "gemm", "matmul", "cublas", "cutlass", "xmma",
					      "nvjet", "gemv", NULL } },
	{ AZ_KC_CONV, (const char *const[]){ "conv", "cudnn", "winograd", NULL } },
	{ AZ_KC_REDUCTION, (const char *const[]){ "reduce", "reduction", "softmax", "norm",
						   "sum", "argmax", "argmin", "topk", "scan",
						   NULL } },
	{ AZ_KC_ELEMENTWISE, (const char *const[]){ "elementwise", "vectorized", "unrolled",
						     "fill", "copy", "cast", "add", "mul",
						     "relu", "gelu", "silu", "sigmoid", "tanh",
						     "dropout", "scale", "index", "gather",
						     "scatter", "transpose", "cat_", "adam",
						     "sgd", "embedding", NULL } },
};

enum az_kclass az_kclass__of(const char *name)
{
	char low[256];
	size_t i;

	/* the class words sit in the first part of any name (C++ argument
	 * lists come later) */
	for (i = 0; name[i] && i < sizeof(low) - 1; i++)
		low[i] = (name[i] >= 'A' && name[i] <= 'Z') ? (char)(name[i] + 32) : name[i];
	low[i] = '\0';
	for (size_t r = 0; r < sizeof(kclass_rules) / sizeof(kclass_rules[0]); r++)
		for (const char *const *f = kclass_rules[r].frags; *f; f++)
			if (strstr(low, *f))
				return kclass_rules[r].c;
	return AZ_KC_OTHER;
}
