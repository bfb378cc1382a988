// SPDX-License-Identifier: MIT
/*
 * Clock pairs for aligning traces across hosts (record/clock_pair.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>
#include "record/clock_pair.h"

static uint64_t read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t clock_pair__test_shift(void)
{
	const char *s = getenv(GT_TEST_REALTIME_SHIFT_ENV);
	long long v;
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	return errno || *end ? 0 : v;
}

static int hexval(int ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
	       ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* The boot id's 16 bytes from its UUID text; zeros when it cannot be read. */
static void boot_id(uint8_t out[16])
{
	static uint8_t id[16];
	static int done;
	char text[64];
	ssize_t n;
	int fd;

	if (!done) {
		done = 1;
		fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			size_t k = 0;

			text[n] = 0;
			for (const char *p = text; *p && k < 32; p++) {
				int v = hexval((unsigned char)*p);

				if (v < 0)
					continue;
				id[k / 2] |= (uint8_t)(k % 2 ? v : v << 4);
				k++;
			}
			if (k != 32)
				memset(id, 0, sizeof(id));
		}
		/* the test knob: another host's boot, one per shift */
		if (clock_pair__test_shift()) {
			uint64_t x = (uint64_t)clock_pair__test_shift();

			for (int i = 0; i < 8; i++)
				id[i] ^= (uint8_t)(x >> (8 * i));
			id[15] ^= 0x5a;
		}
	}
	memcpy(out, id, 16);
}

void clock_pair__read(struct gt_clock *c, uint32_t kind)
{
	struct timex tx = { 0 };
	uint64_t m0, m1;
	int64_t real;
	int st;

	memset(c, 0, sizeof(*c));
	/* the tightest of up to five tries, until one took 1 us or less: a
	 * thread preempted between the reads gives a pair off by up to half
	 * the time it was away */
	m0 = real = 0;
	m1 = UINT64_MAX;
	for (int i = 0; i < 5 && m1 - m0 > 1000; i++) {
		uint64_t a = read_ns(CLOCK_MONOTONIC);
		int64_t r = (int64_t)read_ns(CLOCK_REALTIME);
		uint64_t b = read_ns(CLOCK_MONOTONIC);

		if (b - a < m1 - m0) {
			m0 = a;
			real = r;
			m1 = b;
		}
	}
	c->hdr.type = GT_REC_CLOCK;
	c->hdr.size = sizeof(*c);
	c->hdr.ts = m0 + (m1 - m0) / 2;
	c->realtime_ns = real + clock_pair__test_shift();
	c->half_span_ns = (m1 - m0) / 2 > UINT32_MAX ? UINT32_MAX : (uint32_t)((m1 - m0) / 2);
	c->kind = kind;
	c->max_error_ns = c->est_error_ns = UINT64_MAX;
	st = adjtimex(&tx);
	if (st >= 0) {
		c->sync = st == TIME_ERROR || (tx.status & STA_UNSYNC) ? GT_CLOCK_UNSYNCED : GT_CLOCK_SYNCED;
		c->max_error_ns = (uint64_t)tx.maxerror * 1000ull;
		c->est_error_ns = (uint64_t)tx.esterror * 1000ull;
		/* offset: ns with STA_NANO, else us */
		c->sync_offset_ns = tx.status & STA_NANO ? (int64_t)tx.offset : (int64_t)tx.offset * 1000;
	}
	boot_id(c->boot_id);
}
