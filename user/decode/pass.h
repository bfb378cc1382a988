/* SPDX-License-Identifier: MIT */
/*
 * One pass over a trace's records: the loop every reader runs (dump,
 * export, stats, analyze, diff, report, merge). Each record goes to the
 * reader's own hook (when it has one), then to the decoder (when there is
 * one), whose callbacks are the reader's handlers by kind: calls (paired
 * entry and exit), NCCL collectives, every other record (decode.h). A new
 * record kind is taught to the decoder once; no reader has a loop of its
 * own to change.
 */
#ifndef GTRACE_DECODE_PASS_H
#define GTRACE_DECODE_PASS_H

#include <stdbool.h>

struct trace_reader;
struct gt_decoder;
struct gt_hdr;

/* What a pass failed at, for the reader's message. */
enum gt_pass_fail {
	GT_PASS_READ = 1,	/* reading the file (a negative errno of trace_reader__next) */
	GT_PASS_DECODE,		/* the record hook, the decoder or its callbacks */
};

struct gt_pass {
	void *ctx;
	/* every record, before the decoder sees it: 0 goes on, > 0 ends the
	 * pass there (not an error: the decoder is not finished), < 0 is an
	 * error (GT_PASS_DECODE). NULL: none. */
	int (*record)(void *ctx, const struct gt_hdr *h);
	/* asked before each record: true ends the pass (the reader's own
	 * failure, already said: the decoder is not finished). NULL: never. */
	bool (*stop)(void *ctx);
	/* when the records end, however they end (before the decoder is
	 * finished). NULL: none. */
	void (*done)(void *ctx);
};

/* Runs the pass over r from where it stands: records to p->record and d
 * (either may be NULL), then d finished when the records ran out. Returns 0,
 * or a negative errno with *fail saying where (fail may be NULL). */
int gt_pass__run(struct trace_reader *r, struct gt_decoder *d, const struct gt_pass *p,
		 enum gt_pass_fail *fail);

#endif
