/* SPDX-License-Identifier: MIT */
/*
 * The .gtrace file: writer used by the recorder, reader used by every later
 * tool.  Layout in docs/FORMAT.md.  Records are the ones of
 * bpf/gtrace_events.h, stored as they arrive in zstd-compressed chunks.
 */
#ifndef GTRACE_TRACE_FILE_H
#define GTRACE_TRACE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "bpf/gtrace_events.h"

#define GT_FILE_VERSION 1

/* What the header says about the recording. Strings are owned by the
 * struct's producer (writer: the caller; reader: the reader). */
struct gt_file_info {
	uint32_t version;		/* format version, GT_FILE_VERSION when written */
	uint32_t clock_id;		/* clock of every ts: CLOCK_MONOTONIC (1) */
	int64_t realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
	uint64_t start_ts;		/* CLOCK_MONOTONIC ns when recording started */
	const char *host;		/* uname nodename */
	const char *kernel;		/* uname release */
	const char *cmdline;		/* the gtrace-bpf command line */
	const char *options;		/* effective options, "key=value" separated by spaces */
};

/* Totals written at the end of a complete file. */
struct gt_trailer {
	uint64_t end_ts;		/* CLOCK_MONOTONIC ns when recording stopped */
	uint64_t records;		/* records in all chunks */
	uint64_t chunks;		/* chunks written */
	struct gt_counters counters;	/* final counters, drops included */
};

/* The value of option key in info's options: a pointer into the options
 * string, not NUL-terminated, its length in *len.  NULL when info, its
 * options or the key are absent; the first one when the key is repeated. */
const char *gt_file_info__option(const struct gt_file_info *info, const char *key, size_t *len);
/* True when the options hold the token key=value (any of them when the key
 * is repeated). */
bool gt_file_info__has_option(const struct gt_file_info *info, const char *key,
			      const char *value);

/* A decimal option's value; 0 when absent, empty, not a number or over
 * UINT64_MAX. */
uint64_t gt_file_info__option_u64(const struct gt_file_info *info, const char *key);

#define GT_GPU_SMS_MAX 8
/* The SM counts of the GPUs the recorder's GPU-metrics probe listed. */
struct gt_gpu_sms {
	uint32_t gpus;			/* GPUs listed (gpu_metrics_devI=MASK options) */
	uint32_t known;			/* of them, with an SM count (gpu_metrics_devI_sms=N) */
	uint32_t min;			/* the smallest count, 0 when none is known */
	uint32_t ndistinct;		/* different counts (the first GT_GPU_SMS_MAX) */
	uint32_t distinct[GT_GPU_SMS_MAX];	/* ... in the order of the GPUs */
};
/* What info's options say of the GPUs' SM counts (all 0: nothing, no
 * GPU-metrics probe, or an older trace); a count that is not a positive
 * 32-bit number is taken as not known. */
void gt_file_info__gpu_sms(const struct gt_file_info *info, struct gt_gpu_sms *out);

struct trace_writer;

struct trace_writer_opts {
	bool force;			/* replace an existing file */
	size_t chunk_bytes;		/* uncompressed bytes per chunk, 0 = default (1 MiB) */
	int zstd_level;			/* 0 = default (3) */
};

/* Creates path (mode 0600, O_EXCL unless force) and writes the header.
 * Returns 0 or a negative errno (-EEXIST when it exists and !force). */
int trace_writer__create(const char *path, const struct gt_file_info *info,
			 const struct trace_writer_opts *opts, struct trace_writer **out);
/*
 * Where a sink writer's chunks go: chunk[0..len) is one complete data chunk,
 * the 40-byte chunk header and its zstd frame, exactly the bytes a file would
 * get; first_ts, last_ts and nrec repeat what its header says.  The bytes are
 * the writer's, valid during the call only.  Returns 0, or a negative errno
 * that the writer returns in turn (the records stay buffered, as after a
 * failed write).
 */
typedef int trace_writer_sink_fn(void *ctx, const void *chunk, size_t len, uint64_t first_ts,
				 uint64_t last_ts, uint32_t nrec);
/* A writer whose chunks go to sink(ctx, ...) instead of a file: no header,
 * no trailer (finish only flushes; whoever makes a file of the chunks, like
 * chunk_ring__snapshot, writes both).  opts->force is not used. */
int trace_writer__create_sink(const struct trace_writer_opts *opts, trace_writer_sink_fn *sink,
			      void *ctx, struct trace_writer **out);
/* A writer on fd, a regular file the caller created (through lib/installer,
 * say) and still owns: the writer writes the header at offset 0 and works on
 * a duplicate of fd, which free closes.  opts->force is not used. */
int trace_writer__create_fd(int fd, const struct gt_file_info *info,
			    const struct trace_writer_opts *opts, struct trace_writer **out);
/* Copies one record (hdr.size bytes) into the current chunk; writes the chunk
 * when it is full.  Returns 0 or negative errno (write error, bad size). */
int trace_writer__append(struct trace_writer *w, const struct gt_hdr *rec);
/* Appends chunk[0..len), a complete data chunk as a sink writer made it,
 * without recompressing it, after the records appended before it; counts
 * its chunk and records for the trailer.  Returns 0, -EBADMSG when it is not
 * one whole valid data chunk, or the write's -errno. */
int trace_writer__put_chunk(struct trace_writer *w, const void *chunk, size_t len);
/* Writes the current chunk now, even if small (called about once a second so
 * that a crash loses little). */
int trace_writer__flush(struct trace_writer *w);
/* Flushes, writes the trailer and fsyncs.  The writer stays to be freed.
 * t->records and t->chunks are filled in by the writer; t may be NULL (end_ts
 * = now, counters zero).  After a failed trailer write, finish may be retried. */
int trace_writer__finish(struct trace_writer *w, const struct gt_trailer *t);
/* Bytes written to the file so far (a sink writer: bytes handed to the sink). */
uint64_t trace_writer__bytes(const struct trace_writer *w);
/* Records appended so far. */
uint64_t trace_writer__records(const struct trace_writer *w);
/* Data chunks written (or handed to the sink) so far. */
uint64_t trace_writer__chunks(const struct trace_writer *w);
/* Closes the file.  Records appended since the last flush are not written:
 * call trace_writer__finish (or at least flush) first. */
void trace_writer__free(struct trace_writer *w);

struct trace_reader;

/* Opens and checks the header.  Returns 0, -ENOENT etc., or -EBADMSG when
 * the file is not a gtrace file / has an unsupported version; *errmsg then
 * points to a static one-line reason (thread-local, valid until the next open
 * on the thread; strerror's text for other errors; NULL on success). */
int trace_reader__open(const char *path, struct trace_reader **out, const char **errmsg);
const struct gt_file_info *trace_reader__info(const struct trace_reader *r);
/* Next record in file order: 1 and *rec set (valid until the next call),
 * 0 at the end of the data, negative errno on I/O error.  A truncated or
 * corrupt chunk ends the data early: 0 is returned and
 * trace_reader__truncated() tells so. */
int trace_reader__next(struct trace_reader *r, const struct gt_hdr **rec);
/* Back to the first record, as after open: the next call of
 * trace_reader__next reads the file again from its first chunk, and the
 * trailer, counters, record count and damage are forgotten until read
 * again.  For a reader that must look ahead before it writes (CSV's columns);
 * a record returned before is no longer valid. */
void trace_reader__rewind(struct trace_reader *r);
/* A data chunk's place in the file, from its header alone. */
struct trace_chunk_pos {
	uint64_t off;		/* offset of its chunk header */
	uint64_t index;		/* its number, from 0 */
	uint64_t records;	/* records in the chunks before it */
	uint64_t first_ts;	/* its header's lowest and highest hdr.ts */
	uint64_t last_ts;
	uint32_t nrec;		/* records in it */
};
/* The data chunks of the file as their headers say, in order, none of them
 * decompressed (a header's checksum is checked): up to the trailer, the end
 * of the file or the first header that does not check.  For a reader that
 * starts a second reader where it needs (a merged trace's tail).  *out is
 * malloc'd (NULL for none).  The reader's own position is unchanged.
 * Returns 0 or a negative errno (-ENOMEM, a read error). */
int trace_reader__chunks(struct trace_reader *r, struct trace_chunk_pos **out, size_t *n);
/* The next trace_reader__next reads from chunk c on, as if the chunks before
 * it had been read (the record count, the trailer's check): c is one of
 * what trace_reader__chunks gave for this file. */
void trace_reader__seek(struct trace_reader *r, const struct trace_chunk_pos *c);
/* True once the reader stopped at a damaged or missing part of the file. */
bool trace_reader__truncated(const struct trace_reader *r);
/* One-line description of the damage ("chunk 12 at offset N: short read"),
 * "" while not truncated. */
const char *trace_reader__damage(const struct trace_reader *r);
/*
 * The rule every reader of a trace (dump, export, stats, analyze, report,
 * diff, merge) follows on a damaged input: the output of what could be
 * read is written, then one line on stderr says how much was read and what
 * was lost, and the command exits with status 1.  Damaged: cut short, a
 * corrupt chunk or record, a trailer that does not add up, records too
 * short for their type, and no trailer at all (a recording that did not
 * finish, as a recorder killed with SIGKILL leaves it: readable up to its
 * last complete chunk, but what it held then is not in the file).
 */
struct trace_damage {
	char why[256];		/* where the data ended early (trace_reader__damage), "" when whole */
	uint64_t records;	/* records read */
	uint64_t chunks;	/* data chunks read whole (before the damage) */
	uint64_t bytes;		/* the file's bytes up to their end, the header's included */
	uint64_t size;		/* the file's size, 0 when not known */
	uint64_t lost;		/* records the damaged chunk's header announced that were not
				 * read, 0 when not known */
	uint64_t bad;		/* records too short for their type (the readers skip them) */
};

static inline bool trace_damage__any(const struct trace_damage *d)
{
	return d->why[0] || d->bad;
}
/* What r met so far, kept after r is closed. */
void trace_reader__damage_info(const struct trace_reader *r, struct trace_damage *d);
/* The rule: 0 when d is no damage; else one line on err, "gtrace-bpf: PATH
 * is damaged: WHY; read N records before it (C whole chunks, B of S bytes),
 * M records of the damaged chunk lost; KEPT" (kept: what the command wrote
 * of it, "exported the records read"), and 1, the exit status. */
int trace_damage__report(const struct trace_damage *d, const char *path, const char *kept, FILE *err);
/* The same for what r met so far. */
int trace_reader__report_damage(const struct trace_reader *r, const char *path, const char *kept,
				FILE *err);
/* The trailer, once the end was reached; NULL if the file has none. */
const struct gt_trailer *trace_reader__trailer(const struct trace_reader *r);
/* Latest counters seen (trailer, else the last GT_REC_STATS record); all zero
 * while none was seen (see trace_reader__has_counters). */
const struct gt_counters *trace_reader__counters(const struct trace_reader *r);
/* True once a trailer or a GT_REC_STATS record has supplied the counters. */
bool trace_reader__has_counters(const struct trace_reader *r);
/* Records trace_reader__next has returned so far. */
uint64_t trace_reader__records(const struct trace_reader *r);
void trace_reader__close(struct trace_reader *r);

#endif
