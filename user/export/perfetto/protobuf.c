// SPDX-License-Identifier: MIT
/*
 * The out-of-line parts of the protobuf encoder (protobuf.h): allocation,
 * and closing nested messages.
 */
#include <errno.h>
#include <stdlib.h>
#include "export/perfetto/protobuf.h"
#include "lib/vec.h"

int pb_buf__init(struct pb_buf *p, size_t cap)
{
	if (cap < 64)
		cap = 64;
	p->b = malloc(cap);
	p->len = 0;
	p->cap = p->b ? cap : 0;
	p->err = p->b ? 0 : -ENOMEM;
	return p->err;
}

void pb_buf__free(struct pb_buf *p)
{
	free(p->b);
	p->b = NULL;
	p->len = p->cap = 0;
}

bool pb_buf__grow(struct pb_buf *p, size_t n)
{
	if (p->err)
		return false;
	p->err = vec__reserve(&p->b, &p->cap, p->len, n, 64);
	return !p->err;
}

void pb_buf__end_long(struct pb_buf *p, size_t mark)
{
	size_t body, extra;

	if (p->err || mark >= p->len)
		return;
	body = p->len - mark - 1;
	/* Most messages (events, annotations) are short, so one byte was
	 * reserved; a long one (a packet with interned names, a descriptor
	 * with a command line) is moved up by the bytes its length needs
	 * beyond that one. */
	extra = pb__varint_len(body) - 1;
	if (!pb_buf__room(p, extra))
		return;
	memmove(p->b + mark + 1 + extra, p->b + mark + 1, body);
	pb__put_varint(p->b + mark, body);
	p->len += extra;
}
