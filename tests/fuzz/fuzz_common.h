/* SPDX-License-Identifier: MIT */
/*
 * What the libFuzzer harnesses share (make fuzz; README.md, "Testing"):
 * turning an input into a trace file the readers open by path.
 *
 * An input that starts with the trace magic is the file itself, which
 * exercises the framing (header, chunk headers, checksums, zstd).  Any
 * other input is a recipe the harness writes with the real writer, so that
 * the records get past the checksums to the decoders:
 *
 *   u8  flags       bit 0: end with a trailer; bit 1: 256-byte chunks
 *   u64 start_ts    header start (little-endian, as the CPU stores it)
 *   i64 realtime    header realtime offset
 *   u64 end_ts      trailer end
 *   records         struct gt_hdr + payload, hdr.size bytes each, back to
 *                   back; the first that does not fit (size < 16, not a
 *                   multiple of 8, past the end) ends the list
 *
 * tests/fuzz/mkseed.c writes recorded traces in this form for the corpus.
 */
#ifndef GTRACE_FUZZ_COMMON_H
#define GTRACE_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/trace_file.h"
#include "lib/log.h"

#define FUZZ_RECIPE_HDR 25	/* flags + three 8-byte header values */
#define FUZZ_FLAG_TRAILER 1
#define FUZZ_FLAG_SMALL_CHUNKS 2

static char fuzz_dir[64];	/* private directory of this process's files */
static FILE *fuzz_null;		/* /dev/null, where the readers' output goes */

/* Once per process: the directory, /dev/null and quiet logging (the readers'
 * warnings on every damaged input would drown the fuzzer's own lines). */
static inline void fuzz_init(void)
{
	const char *tmp = getenv("TMPDIR");

	if (fuzz_null)
		return;
	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/gtrace-fuzz.XXXXXX",
		 tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	fuzz_null = fopen("/dev/null", "w");
	if (!mkdtemp(fuzz_dir) || !fuzz_null) {
		perror("fuzz: failed to create a temporary directory");
		abort();
	}
	gt_log_level = -1;
}

static inline const char *fuzz_path(const char *name)
{
	static char buf[4][128];
	static int which;

	which = (which + 1) % 4;
	snprintf(buf[which], sizeof(buf[which]), "%s/%s", fuzz_dir, name);
	return buf[which];
}

static inline bool fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fwrite(data, 1, size, f) == size;

	if (f && fclose(f))
		ok = false;
	return ok;
}

static inline uint64_t fuzz_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Writes the trace an input stands for at path; false if none can be
 * written (an input too short for a recipe). */
static inline bool fuzz_make_trace(const char *path, const uint8_t *data, size_t size)
{
	static _Alignas(8) uint8_t rec[65536];
	struct gt_file_info info = {
		.version = GT_FILE_VERSION, .clock_id = 1, .host = "fuzzhost",
		.kernel = "6.1", .cmdline = "gtrace-bpf record -- fuzz",
		.options = "mode=command trace=cuda,ioctl,sched",
	};
	struct trace_writer_opts wo = { .force = true, .zstd_level = 1 };
	struct gt_trailer t = { 0 };
	struct trace_writer *w;
	size_t off = FUZZ_RECIPE_HDR;
	uint8_t flags;

	unlink(path);
	if (size >= 8 && !memcmp(data, "GTRACE\0\x1a", 8))
		return fuzz_write_file(path, data, size);
	if (size < FUZZ_RECIPE_HDR)
		return false;
	flags = data[0];
	info.start_ts = fuzz_u64(data + 1);
	info.realtime_offset_ns = (int64_t)fuzz_u64(data + 9);
	t.end_ts = fuzz_u64(data + 17);
	if (flags & FUZZ_FLAG_SMALL_CHUNKS)
		wo.chunk_bytes = 256;
	if (trace_writer__create(path, &info, &wo, &w))
		return false;
	while (size - off >= sizeof(struct gt_hdr)) {
		struct gt_hdr h;

		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > size - off)
			break;
		memcpy(rec, data + off, h.size);
		if (trace_writer__append(w, (const struct gt_hdr *)rec))
			break;
		off += h.size;
	}
	if (flags & FUZZ_FLAG_TRAILER)
		trace_writer__finish(w, &t);
	else
		trace_writer__flush(w);	/* a recording cut short: no trailer */
	trace_writer__free(w);
	return true;
}

#endif
