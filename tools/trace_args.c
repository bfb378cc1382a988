// SPDX-License-Identifier: MIT
/*
 * trace_args: the raw registers of a trace's call records, for tests that
 * number their calls in a register the function does not read (the mock
 * workload's --sync-each and --steady) and must tell exactly which calls
 * were recorded.
 *
 *   trace_args FILE
 *
 * One line per call entry (GT_REC_CALL): "entry TS TID API A0 A1 A2 A3 A4 A5";
 * per exit (GT_REC_RET): "exit TS TID API RET". Other records are skipped.
 * Exit status 1 with one line on stderr when the file cannot be read.
 */
#include <stdio.h>
#include <string.h>
#include "bpf/gtrace_events.h"
#include "format/api.h"
#include "format/trace_file.h"

int main(int argc, char **argv)
{
	struct trace_reader *r;
	const struct gt_hdr *h;
	const char *msg = NULL;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: trace_args FILE\n");
		return 2;
	}
	err = trace_reader__open(argv[1], &r, &msg);
	if (err) {
		fprintf(stderr, "trace_args: cannot read %s: %s\n", argv[1], msg ? msg : strerror(-err));
		return 1;
	}
	while ((err = trace_reader__next(r, &h)) > 0) {
		const char *api = gt_api__name(h->api) ?: "?";

		if (h->type == GT_REC_CALL && h->size >= sizeof(struct gt_call)) {
			const struct gt_call *c = (const void *)h;

			printf("entry %llu %u %s", (unsigned long long)h->ts, h->tid, api);
			for (int i = 0; i < 6; i++)
				printf(" %llu", (unsigned long long)c->args[i]);
			putchar('\n');
		} else if (h->type == GT_REC_RET && h->size >= sizeof(struct gt_ret)) {
			const struct gt_ret *e = (const void *)h;

			printf("exit %llu %u %s %d\n", (unsigned long long)h->ts, h->tid, api, e->ret);
		}
	}
	if (err < 0 || trace_reader__truncated(r)) {
		fprintf(stderr, "trace_args: %s: %s\n", argv[1],
			err < 0 ? strerror(-err) : trace_reader__damage(r));
		trace_reader__close(r);
		return 1;
	}
	trace_reader__close(r);
	return 0;
}
