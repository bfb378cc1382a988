// SPDX-License-Identifier: MIT
/* Capture control as the trace records it (capture.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/capture.h"

/* True when the option key has the value word. */
static bool option_is(const struct gt_file_info *info, const char *key, const char *word)
{
	size_t n;
	const char *v = gt_file_info__option(info, key, &n);

	return v && n == strlen(word) && !memcmp(v, word, n);
}

void gt_capture_mode__from_info(const struct gt_file_info *info, struct gt_capture_mode *m)
{
	size_t n;
	const char *v;

	*m = (struct gt_capture_mode){ 0 };
	m->light = option_is(info, "capture", "light");
	if (option_is(info, "capture_range", "cudaProfilerApi"))
		m->range = GT_CAPSRC_PROFILER;
	else if (option_is(info, "capture_range", "nvtx"))
		m->range = GT_CAPSRC_NVTX;
	v = gt_file_info__option(info, "capture_range_end", &n);
	if (v && n >= 6 && !memcmp(v, "repeat", 6) && (n == 6 || v[6] == ':')) {
		char buf[16];

		m->repeat = true;
		/* "repeat:N": the count after the colon */
		if (n > 7 && n - 7 < sizeof(buf)) {
			memcpy(buf, v + 7, n - 7);
			buf[n - 7] = '\0';
			m->repeat_max = (uint32_t)strtoul(buf, NULL, 10);
		}
	}
	if (m->light) {
		m->window_ns = gt_file_info__option_u64(info, "light_window_ns");
		m->period_ns = gt_file_info__option_u64(info, "light_period_ns");
	}
}

const char *gt_capture_kind__name(uint32_t kind)
{
	static const char *const names[] = {
		[GT_CAP_RANGE_OPEN] = "range_open", [GT_CAP_RANGE_CLOSE] = "range_close",
		[GT_CAP_WINDOW_OPEN] = "window_open", [GT_CAP_WINDOW_CLOSE] = "window_close",
		[GT_CAP_HOT_LIVE] = "hot_live", [GT_CAP_HOT_OFF] = "hot_off",
		[GT_CAP_LOOKUPS_OFF] = "lookups_off",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : NULL;
}

const char *gt_capture_source__name(uint32_t source)
{
	static const char *const names[] = {
		[GT_CAPSRC_NONE] = "none", [GT_CAPSRC_PROFILER] = "cudaProfilerApi",
		[GT_CAPSRC_NVTX] = "nvtx", [GT_CAPSRC_WINDOW] = "window",
	};

	return source < sizeof(names) / sizeof(names[0]) ? names[source] : NULL;
}

const char *gt_capture_flag__name(uint32_t bit)
{
	switch (bit) {
	case GT_CAP_F_REFUSED:	return "refused";
	case GT_CAP_F_EXIT:	return "exit";
	case GT_CAP_F_CUT:	return "cut";
	default:		return NULL;
	}
}

char *gt_capture_flags__text(uint32_t flags, const char *sep, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (uint32_t bit = 1; bit <= GT_CAP_F_CUT; bit <<= 1) {
		if (!(flags & bit))
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? sep : "",
				      gt_capture_flag__name(bit));
	}
	if (flags & ~GT_CAP_F_KNOWN)
		snprintf(buf + n, n < len ? len - n : 0, "%s0x%x", n ? sep : "",
			 flags & ~GT_CAP_F_KNOWN);
	return buf;
}

char *gt_ns__text(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		uint64_t ns;		/* in one */
		const char *unit;
	} units[] = { { 1000000000ull, "s" }, { 1000000, "ms" }, { 1000, "us" } };

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		/* 999999 ns is "1.0 ms", not "1000.0 us" */
		if (ns >= units[i].ns - units[i].ns / 20000) {
			snprintf(buf, len, "%.1f %s", (double)ns / (double)units[i].ns, units[i].unit);
			return buf;
		}
	}
	snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	return buf;
}

char *gt_capture_mode__text(const struct gt_capture_mode *m, char *buf, size_t len)
{
	char w[32], p[32];
	size_t n = (size_t)snprintf(buf, len, "%s", m->light ? "light" : "full");

	if (m->light && m->window_ns && m->period_ns)
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, ", windows of %s every %s",
				      gt_ns__text(m->window_ns, w, sizeof(w)),
				      gt_ns__text(m->period_ns, p, sizeof(p)));
	if (!m->range)
		return buf;
	n += (size_t)snprintf(buf + n, n < len ? len - n : 0, ", capture ranges of %s, %s",
			      gt_capture_source__name(m->range), m->repeat ? "repeat" : "stop");
	if (m->repeat && m->repeat_max)
		snprintf(buf + n, n < len ? len - n : 0, ":%u", m->repeat_max);
	return buf;
}
