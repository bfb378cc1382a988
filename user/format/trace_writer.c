// SPDX-License-Identifier: MIT
/*
 * The .gtrace writer (layout in docs/FORMAT.md): a checksummed header, zstd
 * chunks of records in the order they arrived, a trailer chunk.
 *
 * The writer only ever appends whole chunks after the end of what is known to
 * be good, so a crash or a full disk leaves a file that reads back up to its
 * last complete chunk.  The same writer also hands its chunks to a sink
 * instead of a file (the flight recorder's ring, chunk_ring.c), and copies
 * chunks made that way into a file without recompressing them: one
 * compression path for every chunk gtrace-bpf makes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#include "lib/clock.h"
#include "lib/owner.h"
#include "format/trace_file.h"
#include "format/trace_layout.h"

#define CHUNK_DEFAULT	(1u << 20)
#define LEVEL_DEFAULT	3
#define REC_MAX		65536		/* a chunk buffer holds at least one largest record */

/* Writes all of buf at off; 0 or -errno.  pwrite at an explicit offset (not
 * the file position) so that a retry after a failed write lands where the
 * failed chunk began instead of after its partial bytes. */
static int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

struct trace_writer {
	int fd;			/* the file, -1 for a sink writer */
	trace_writer_sink_fn *sink;	/* where chunks go instead of fd, NULL for a file */
	void *sink_ctx;		/* the sink's first argument */
	ZSTD_CCtx *cctx;	/* reused for every chunk */
	uint8_t *ubuf;		/* records of the chunk being filled */
	size_t ucap;		/* size of ubuf: chunk_bytes, at least REC_MAX */
	size_t chunk_bytes;	/* a chunk is written before it would grow past this */
	size_t used;		/* bytes of records in ubuf */
	uint32_t nrec;		/* records in ubuf */
	uint64_t ts_min;	/* lowest and highest hdr.ts in ubuf */
	uint64_t ts_max;
	uint8_t *cbuf;		/* chunk header + zstd frame, written in one go */
	size_t ccap;		/* size of cbuf */
	uint64_t off;		/* end of the last complete chunk: where the next goes */
	uint64_t records;	/* records appended, buffered ones included */
	uint64_t chunks;	/* data chunks written */
	bool dirty_tail;	/* a failed write may have left bytes after off */
	bool finished;		/* the trailer is written: nothing may follow */
};

/* Cuts a failed write's partial bytes off so that the file ends on a
 * complete chunk; if even that fails, finish tries again. */
static void writer__trim(struct trace_writer *w)
{
	w->dirty_tail = ftruncate(w->fd, w->off) != 0;
}

/* Hands one complete chunk to the sink, or writes it at the end of the file;
 * on failure nothing counts as written (a retry sends it again). */
static int writer__emit(struct trace_writer *w, const void *chunk, size_t len,
			uint64_t ts_min, uint64_t ts_max, uint32_t nrec)
{
	int err;

	if (w->sink)
		err = w->sink(w->sink_ctx, chunk, len, ts_min, ts_max, nrec);
	else
		err = pwrite_full(w->fd, chunk, len, w->off);
	if (err) {
		if (!w->sink)
			writer__trim(w);
		return err;
	}
	w->off += len;
	return 0;
}

static int writer__write_chunk(struct trace_writer *w, uint16_t kind, const void *data,
			       size_t len, uint32_t nrec, uint64_t ts_min, uint64_t ts_max)
{
	uint8_t *h = w->cbuf;
	size_t n;

	n = ZSTD_compress2(w->cctx, w->cbuf + CHUNK_HDR, w->ccap - CHUNK_HDR, data, len);
	if (ZSTD_isError(n))
		return -EIO;	/* cannot happen with a bound-sized buffer, but must not be written */

	memcpy(h, chunk_magic, 4);
	put_u16(h + 4, kind);
	put_u16(h + 6, 0);
	put_u32(h + 8, n);
	put_u32(h + 12, len);
	put_u64(h + 16, ts_min);
	put_u64(h + 24, ts_max);
	put_u32(h + 32, nrec);
	put_u32(h + 36, crc_of(h, 36));
	return writer__emit(w, w->cbuf, CHUNK_HDR + n, ts_min, ts_max, nrec);
}

static int writer__flush_chunk(struct trace_writer *w)
{
	int err;

	if (!w->used)
		return 0;
	err = writer__write_chunk(w, CHUNK_DATA, w->ubuf, w->used, w->nrec, w->ts_min, w->ts_max);
	if (err)
		return err;	/* the records stay buffered: a later flush retries */
	w->chunks++;
	w->used = 0;
	w->nrec = 0;
	return 0;
}

/* Lays out the header (FORMAT.md "File header") in a new buffer. */
static int header__build(const struct gt_file_info *info, uint8_t **out, size_t *out_len)
{
	const char *strs[HDR_NSTR] = { info->host, info->kernel, info->cmdline, info->options };
	size_t lens[HDR_NSTR], len = HDR_FIXED;
	uint8_t *buf, *p;
	int i;

	for (i = 0; i < HDR_NSTR; i++) {
		lens[i] = strs[i] ? strlen(strs[i]) : 0;
		if (lens[i] > HDR_MAX)
			return -E2BIG;
		len += 4 + lens[i];
	}
	/* pad so that the crc ends the header on an 8-byte boundary */
	len = ((len + 4 + 7) & ~(size_t)7);
	if (len > HDR_MAX)
		return -E2BIG;

	buf = calloc(1, len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, file_magic, 8);
	put_u32(buf + 8, GT_FILE_VERSION);
	put_u32(buf + 12, len);
	put_u32(buf + 16, info->clock_id);
	put_u32(buf + 20, 0);
	put_u64(buf + 24, (uint64_t)info->realtime_offset_ns);
	put_u64(buf + 32, info->start_ts);
	p = buf + HDR_FIXED;
	for (i = 0; i < HDR_NSTR; i++) {
		put_u32(p, lens[i]);
		if (lens[i])
			memcpy(p + 4, strs[i], lens[i]);
		p += 4 + lens[i];
	}
	put_u32(buf + len - 4, crc_of(buf, len - 4));
	*out = buf;
	*out_len = len;
	return 0;
}

/* A writer with its buffers and compressor, writing nowhere yet. */
static int writer__new(const struct trace_writer_opts *opts, struct trace_writer **out)
{
	struct trace_writer_opts o = {};
	struct trace_writer *w;

	if (opts)
		o = *opts;
	if (!o.chunk_bytes)
		o.chunk_bytes = CHUNK_DEFAULT;
	if (!o.zstd_level)
		o.zstd_level = LEVEL_DEFAULT;
	if (o.chunk_bytes > CHUNK_MAX || o.zstd_level < ZSTD_minCLevel() ||
	    o.zstd_level > ZSTD_maxCLevel())
		return -EINVAL;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->chunk_bytes = o.chunk_bytes;
	w->ucap = o.chunk_bytes > REC_MAX ? o.chunk_bytes : REC_MAX;
	w->ccap = CHUNK_HDR + ZSTD_compressBound(w->ucap);
	w->ubuf = malloc(w->ucap);
	w->cbuf = malloc(w->ccap);
	w->cctx = ZSTD_createCCtx();
	*out = w;
	if (!w->ubuf || !w->cbuf || !w->cctx)
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, o.zstd_level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)))
		return -EINVAL;
	return 0;
}

/* What can fail before a file is touched: the options, the header, the
 * buffers.  On failure *w is still to be freed. */
static int writer__prepare(const struct gt_file_info *info, const struct trace_writer_opts *opts,
			   struct trace_writer **w, uint8_t **hdr, size_t *hdr_len)
{
	int err = writer__new(opts, w);

	return err ? err : header__build(info, hdr, hdr_len);
}

/* Writes hdr at offset 0 of w->fd, a regular file, and hands w out; hdr is
 * freed either way. */
static int writer__start(struct trace_writer *w, uint8_t *hdr, size_t hdr_len,
			 struct trace_writer **out)
{
	int err = pwrite_full(w->fd, hdr, hdr_len, 0);

	free(hdr);
	if (err)
		return err;
	w->off = hdr_len;
	*out = w;
	return 0;
}

int trace_writer__create(const char *path, const struct gt_file_info *info,
			 const struct trace_writer_opts *opts, struct trace_writer **out)
{
	struct trace_writer *w = NULL;
	uint8_t *hdr = NULL;
	size_t hdr_len;
	struct stat st;
	int flags, err;

	if (!path || !info || !out)
		return -EINVAL;
	*out = NULL;
	err = writer__prepare(info, opts, &w, &hdr, &hdr_len);
	if (err)
		goto cleanup;

	/* O_EXCL never follows a symlink; with force, O_NOFOLLOW keeps a root
	 * recorder from truncating whatever a planted link points to, and
	 * O_NONBLOCK from waiting forever on a FIFO's reader (the fstat below
	 * refuses it; regular files ignore the flag). */
	flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK |
		(opts && opts->force ? O_TRUNC | O_NOFOLLOW : O_EXCL);
	w->fd = open(path, flags, 0600);
	if (w->fd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (fstat(w->fd, &st)) {
		err = -errno;
		goto cleanup_unlink;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;	/* chunks are written at offsets: pipes and devices cannot take them */
		close(w->fd);
		w->fd = -1;
		goto cleanup;
	}
	/* Traces hold arguments and command lines: owner only, whatever the
	 * umask or the mode of the file force replaced. */
	if ((st.st_mode & 07777) != 0600 && fchmod(w->fd, 0600)) {
		err = -errno;
		goto cleanup_unlink;
	}
	/* under sudo: the user's, as if they had recorded it */
	if ((err = owner__give(w->fd)))
		goto cleanup_unlink;
	err = writer__start(w, hdr, hdr_len, out);
	hdr = NULL;
	if (err)
		goto cleanup_unlink;
	return 0;

cleanup_unlink:
	/* a file without a complete header is of no use to anyone */
	unlink(path);
cleanup:
	free(hdr);
	trace_writer__free(w);
	return err;
}

int trace_writer__create_fd(int fd, const struct gt_file_info *info,
			    const struct trace_writer_opts *opts, struct trace_writer **out)
{
	struct trace_writer *w = NULL;
	uint8_t *hdr = NULL;
	size_t hdr_len;
	struct stat st;
	int err;

	if (fd < 0 || !info || !out)
		return -EINVAL;
	*out = NULL;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	err = writer__prepare(info, opts, &w, &hdr, &hdr_len);
	/* a copy of the caller's: free closes the writer's, the caller keeps its own */
	if (!err && (w->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		err = -errno;
	if (!err) {
		err = writer__start(w, hdr, hdr_len, out);
		hdr = NULL;
	}
	if (err) {
		free(hdr);
		trace_writer__free(w);
	}
	return err;
}

int trace_writer__create_sink(const struct trace_writer_opts *opts, trace_writer_sink_fn *sink,
			      void *ctx, struct trace_writer **out)
{
	struct trace_writer *w = NULL;
	int err;

	if (!sink || !out)
		return -EINVAL;
	*out = NULL;
	err = writer__new(opts, &w);
	if (err) {
		trace_writer__free(w);
		return err;
	}
	w->sink = sink;
	w->sink_ctx = ctx;
	*out = w;
	return 0;
}

int trace_writer__append(struct trace_writer *w, const struct gt_hdr *rec)
{
	size_t size;
	int err;

	if (!w || !rec || w->finished)
		return -EINVAL;
	size = rec->size;
	if (size < sizeof(struct gt_hdr) || size % 8)
		return -EINVAL;

	if (w->used + size > w->chunk_bytes && w->used) {
		err = writer__flush_chunk(w);
		if (err)
			return err;	/* rec is not stored: the caller counts it lost */
	}
	memcpy(w->ubuf + w->used, rec, size);
	if (!w->nrec || rec->ts < w->ts_min)
		w->ts_min = rec->ts;
	if (!w->nrec || rec->ts > w->ts_max)
		w->ts_max = rec->ts;
	w->used += size;
	w->nrec++;
	w->records++;
	return 0;
}

int trace_writer__flush(struct trace_writer *w)
{
	if (!w || w->finished)
		return -EINVAL;
	return writer__flush_chunk(w);
}

int trace_writer__put_chunk(struct trace_writer *w, const void *chunk, size_t len)
{
	struct chunk_head c;
	int err;

	if (!w || w->finished)
		return -EINVAL;
	if (chunk_head__check(chunk, len, &c))
		return -EBADMSG;
	/* the records appended before it come before it */
	err = writer__flush_chunk(w);
	if (err)
		return err;
	err = writer__emit(w, chunk, len, c.first_ts, c.last_ts, c.nrec);
	if (err)
		return err;
	w->chunks++;
	w->records += c.nrec;
	return 0;
}

int trace_writer__finish(struct trace_writer *w, const struct gt_trailer *t)
{
	struct gt_trailer tr = {};
	int err;

	if (!w || w->finished)
		return -EINVAL;
	err = writer__flush_chunk(w);
	if (err)
		return err;
	if (w->sink) {
		/* a sink's chunks are not a file yet: whoever makes one from
		 * them (chunk_ring__snapshot) ends it with its own trailer */
		w->finished = true;
		return 0;
	}

	if (t) {
		tr = *t;
	} else {
		tr.end_ts = clock__mono_ns();
	}
	/* the writer knows these better than its caller */
	tr.records = w->records;
	tr.chunks = w->chunks;
	err = writer__write_chunk(w, CHUNK_TRAILER, &tr, sizeof(tr), 0, tr.end_ts, tr.end_ts);
	if (err)
		return err;	/* a retry of finish writes the trailer again */
	w->finished = true;

	if (w->dirty_tail && ftruncate(w->fd, w->off))
		return -errno;
	w->dirty_tail = false;
	if (fsync(w->fd))
		return -errno;
	return 0;
}

uint64_t trace_writer__bytes(const struct trace_writer *w)
{
	return w ? w->off : 0;
}

uint64_t trace_writer__records(const struct trace_writer *w)
{
	return w ? w->records : 0;
}

uint64_t trace_writer__chunks(const struct trace_writer *w)
{
	return w ? w->chunks : 0;
}

void trace_writer__free(struct trace_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0) {
		/* Partial bytes of a failed write would read as a corrupt chunk
		 * instead of a clean end. */
		if (w->dirty_tail)
			writer__trim(w);
		close(w->fd);
	}
	ZSTD_freeCCtx(w->cctx);
	free(w->ubuf);
	free(w->cbuf);
	free(w);
}
