// SPDX-License-Identifier: MIT
/* One pass over a trace's records (decode/pass.h). */
#include <stddef.h>
#include "decode/decode.h"
#include "decode/pass.h"
#include "format/trace_file.h"

int gt_pass__run(struct trace_reader *r, struct gt_decoder *d, const struct gt_pass *p,
		 enum gt_pass_fail *fail)
{
	static const struct gt_pass none;
	enum gt_pass_fail f = 0;
	const struct gt_hdr *h;
	int rc;

	if (!p)
		p = &none;
	for (;;) {
		if (p->stop && p->stop(p->ctx)) {
			rc = 0;
			goto out;
		}
		rc = trace_reader__next(r, &h);
		if (rc < 0) {
			f = GT_PASS_READ;
			goto out;
		}
		if (!rc)
			break;
		rc = p->record ? p->record(p->ctx, h) : 0;
		if (rc > 0) {
			rc = 0;
			goto out;
		}
		if (!rc && d)
			rc = gt_decoder__feed(d, h);
		if (rc) {
			f = GT_PASS_DECODE;
			goto out;
		}
	}
	if (p->done)
		p->done(p->ctx);
	if (d && (rc = gt_decoder__finish(d)))
		f = GT_PASS_DECODE;
	if (fail)
		*fail = f;
	return rc;
out:
	if (p->done)
		p->done(p->ctx);
	if (fail)
		*fail = f;
	return rc;
}
