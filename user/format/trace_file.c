// SPDX-License-Identifier: MIT
/*
 * The .gtrace file (layout in docs/FORMAT.md): a checksummed header, zstd
 * chunks of records in the order they arrived, a trailer chunk.  The writer
 * is in trace_writer.c; here are the header's options and the reader.
 *
 * The reader streams one chunk at a time into buffers it
 * reuses, so memory stays bounded by the largest chunk and records cost no
 * allocation: later tools read millions of records a second through it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "format/records.h"
#include "format/trace_file.h"
#include "format/trace_layout.h"

/* Reads up to len bytes at off; the count (short only at end of file) or
 * -errno. */
static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, p + got, len - got, off + got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

/* ----------------------------------------------------------------- options */

/*
 * The options are "key=value" tokens separated by spaces (docs/FORMAT.md).
 * Walks them from *p: returns the next token's key and value, NULL at the
 * end.  A token without '=' is a key with an empty value.
 */
static const char *option_next(const char **p, size_t *klen, const char **val, size_t *vlen)
{
	const char *s = *p, *e, *eq;

	while (*s == ' ')
		s++;
	if (!*s)
		return NULL;
	e = strchrnul(s, ' ');
	eq = memchr(s, '=', (size_t)(e - s));
	*klen = (size_t)((eq ? eq : e) - s);
	*val = eq ? eq + 1 : e;
	*vlen = (size_t)(e - *val);
	*p = e;
	return s;
}

const char *gt_file_info__option(const struct gt_file_info *info, const char *key, size_t *len)
{
	const char *p = info ? info->options : NULL, *k, *v;
	size_t kl, vl, n = key ? strlen(key) : 0;

	if (!p || !key)
		return NULL;
	while ((k = option_next(&p, &kl, &v, &vl)))
		if (kl == n && memcmp(k, key, n) == 0) {
			if (len)
				*len = vl;
			return v;
		}
	return NULL;
}

bool gt_file_info__has_option(const struct gt_file_info *info, const char *key,
			      const char *value)
{
	const char *p = info ? info->options : NULL, *k, *v;
	size_t kl, vl, n = key ? strlen(key) : 0, vn = value ? strlen(value) : 0;

	if (!p || !key || !value)
		return false;
	while ((k = option_next(&p, &kl, &v, &vl)))
		if (kl == n && memcmp(k, key, n) == 0 && vl == vn && memcmp(v, value, vn) == 0)
			return true;
	return false;
}

/* A decimal number of n bytes at v; false when it is not one or does not
 * fit. */
static bool parse_u64(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;

	if (!v || !n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9' || x > (UINT64_MAX - (uint64_t)(v[i] - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(v[i] - '0');
	}
	*out = x;
	return true;
}

uint64_t gt_file_info__option_u64(const struct gt_file_info *info, const char *key)
{
	size_t n = 0;
	const char *v = gt_file_info__option(info, key, &n);
	uint64_t x;

	return parse_u64(v, n, &x) ? x : 0;
}

void gt_file_info__gpu_sms(const struct gt_file_info *info, struct gt_gpu_sms *out)
{
	static const char pre[] = "gpu_metrics_dev", suf[] = "_sms";
	const size_t np = sizeof(pre) - 1, ns = sizeof(suf) - 1;
	const char *p = info ? info->options : NULL, *k, *v;
	size_t kl, vl;

	memset(out, 0, sizeof(*out));
	if (!p)
		return;
	while ((k = option_next(&p, &kl, &v, &vl))) {
		size_t d = np;
		uint64_t sms;
		uint32_t i;

		if (kl <= np || memcmp(k, pre, np))
			continue;
		while (d < kl && k[d] >= '0' && k[d] <= '9')
			d++;
		if (d == np)
			continue;	/* gpu_metrics_devs */
		if (d == kl) {
			out->gpus++;	/* gpu_metrics_devI=MASK: one GPU */
			continue;
		}
		if (kl - d != ns || memcmp(k + d, suf, ns) || !parse_u64(v, vl, &sms) || !sms ||
		    sms > UINT32_MAX)
			continue;
		out->known++;
		if (!out->min || sms < out->min)
			out->min = (uint32_t)sms;
		for (i = 0; i < out->ndistinct && out->distinct[i] != sms; i++)
			;
		if (i == out->ndistinct && i < GT_GPU_SMS_MAX)
			out->distinct[out->ndistinct++] = (uint32_t)sms;
	}
	/* a count without its GPU's mask is still a GPU */
	if (out->gpus < out->known)
		out->gpus = out->known;
}

/* ------------------------------------------------------------------ reader */

struct trace_reader {
	int fd;
	struct gt_file_info info;	/* strings point into strings */
	char *strings;			/* NUL-terminated copies of the header strings */
	ZSTD_DCtx *dctx;		/* reused for every chunk */
	uint8_t *cbuf;			/* compressed frame of the current chunk */
	size_t ccap;
	uint8_t *ubuf;			/* records of the current chunk */
	size_t ucap;
	size_t pos;			/* next record in ubuf */
	size_t len;			/* bytes of records in ubuf */
	uint32_t chunk_nrec;		/* records the current chunk's header announced */
	uint32_t chunk_seen;		/* records returned from the current chunk */
	uint64_t chunk_off;		/* offset of the current chunk, for messages */
	uint64_t chunk_idx;		/* index of the next chunk, counting from 0 */
	uint64_t off;			/* offset of the next chunk */
	uint64_t data_off;		/* offset of the first chunk (the header's length) */
	uint64_t records;		/* records returned */
	struct gt_trailer trailer;	/* valid when has_trailer */
	bool has_trailer;
	struct gt_counters counters;	/* trailer's, else the last GT_REC_STATS */
	bool has_counters;
	bool done;			/* trailer or damage reached: no more chunks */
	bool truncated;			/* the end came from damage, not the trailer */
	char damage[256];		/* why truncated, "" when not */
	bool stop_in_chunk;		/* the damage is inside the current chunk's records */
	uint64_t ok_chunks;		/* when truncated: data chunks read whole before the damage */
	uint64_t ok_bytes;		/* ... and the offset they end at */
	uint64_t lost;			/* ... records the damaged chunk's header announced that
					 * were not returned, 0 when not known */
	uint64_t bad_records;		/* records too short for their type (returned all the
					 * same: the readers skip them) */
};

/* One-line reason of the last failed open on this thread (the API promises
 * a pointer the caller need not free). */
static __thread char open_errmsg[128];

static int open_fail(const char **errmsg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int open_fail(const char **errmsg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(open_errmsg, sizeof(open_errmsg), fmt, ap);
	va_end(ap);
	if (errmsg)
		*errmsg = open_errmsg;
	return -EBADMSG;
}

/* Ends the data at damage: next returns 0 from now on. */
static int reader__stop(struct trace_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int reader__stop(struct trace_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->damage, sizeof(r->damage), fmt, ap);
	va_end(ap);
	/* what was read whole before it, for the line of trace_damage__report */
	r->ok_chunks = r->stop_in_chunk ? r->chunk_idx - 1 : r->chunk_idx;
	r->ok_bytes = r->stop_in_chunk ? r->chunk_off : r->off;
	r->truncated = true;
	r->done = true;
	r->len = r->pos = 0;
	return 0;
}

/* Makes *buf hold at least need bytes; the old contents are not kept. */
static int buf_reserve(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *p;
	size_t n = 4096;

	if (*cap >= need)
		return 0;
	while (n < need)
		n *= 2;
	p = malloc(n);
	if (!p)
		return -ENOMEM;
	free(*buf);
	*buf = p;
	*cap = n;
	return 0;
}

/* Checks and copies the header strings into r. */
static int reader__parse_strings(struct trace_reader *r, const uint8_t *h, size_t hlen)
{
	const char **dst[HDR_NSTR] = { &r->info.host, &r->info.kernel, &r->info.cmdline,
				       &r->info.options };
	size_t pos = HDR_FIXED, lens[HDR_NSTR], offs[HDR_NSTR], total = 0;
	char *s;
	int i;

	for (i = 0; i < HDR_NSTR; i++) {
		if (hlen - 4 - pos < 4)
			return -EBADMSG;
		lens[i] = get_u32(h + pos);
		pos += 4;
		if (lens[i] > hlen - 4 - pos)
			return -EBADMSG;
		offs[i] = pos;
		pos += lens[i];
		total += lens[i] + 1;
	}
	r->strings = s = malloc(total);
	if (!s)
		return -ENOMEM;
	for (i = 0; i < HDR_NSTR; i++) {
		memcpy(s, h + offs[i], lens[i]);
		s[lens[i]] = '\0';
		*dst[i] = s;
		s += lens[i] + 1;
	}
	return 0;
}

int trace_reader__open(const char *path, struct trace_reader **out, const char **errmsg)
{
	struct trace_reader *r = NULL;
	uint8_t fixed[16], *h = NULL;
	uint32_t version, hlen;
	ssize_t n;
	int err;

	if (errmsg)
		*errmsg = NULL;
	if (!path || !out)
		return -EINVAL;
	*out = NULL;

	r = calloc(1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto cleanup_errno;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		goto cleanup_errno;
	}
	/* chunks are read front to back: let the kernel read ahead */
	posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);

	n = pread_full(r->fd, fixed, sizeof(fixed), 0);
	if (n < 0) {
		err = n;
		goto cleanup_errno;
	}
	if (n == 0) {
		err = open_fail(errmsg, "not a gtrace file (empty file)");
		goto cleanup;
	}
	if (memcmp(fixed, file_magic, n < 8 ? n : 8)) {
		err = open_fail(errmsg, "not a gtrace file (bad magic)");
		goto cleanup;
	}
	if (n < (ssize_t)sizeof(fixed)) {
		err = open_fail(errmsg, "header is cut short (file ends after %zd bytes)", n);
		goto cleanup;
	}
	/* The version comes before the length and the checksum: a later
	 * version may lay out the rest differently. */
	version = get_u32(fixed + 8);
	if (version != GT_FILE_VERSION) {
		err = open_fail(errmsg, "unsupported format version %u (this build reads %u)",
				version, GT_FILE_VERSION);
		goto cleanup;
	}
	hlen = get_u32(fixed + 12);
	if (hlen < HDR_MIN || hlen > HDR_MAX) {
		err = open_fail(errmsg, "header is corrupt (bad length %u)", hlen);
		goto cleanup;
	}
	h = malloc(hlen);
	if (!h) {
		err = -ENOMEM;
		goto cleanup_errno;
	}
	n = pread_full(r->fd, h, hlen, 0);
	if (n < 0) {
		err = n;
		goto cleanup_errno;
	}
	if (n < hlen) {
		err = open_fail(errmsg, "header is cut short (file ends after %zd of %u bytes)",
				n, hlen);
		goto cleanup;
	}
	if (crc_of(h, hlen - 4) != get_u32(h + hlen - 4)) {
		err = open_fail(errmsg, "header is corrupt (checksum mismatch)");
		goto cleanup;
	}
	err = reader__parse_strings(r, h, hlen);
	if (err == -EBADMSG) {
		err = open_fail(errmsg, "header is corrupt (a string runs past its end)");
		goto cleanup;
	} else if (err) {
		goto cleanup_errno;
	}
	r->info.version = version;
	r->info.clock_id = get_u32(h + 16);
	r->info.realtime_offset_ns = (int64_t)get_u64(h + 24);
	r->info.start_ts = get_u64(h + 32);
	r->off = r->data_off = hlen;

	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		err = -ENOMEM;
		goto cleanup_errno;
	}
	free(h);
	*out = r;
	return 0;

cleanup_errno:
	if (errmsg)
		*errmsg = strerror(-err);
cleanup:
	free(h);
	trace_reader__close(r);
	return err;
}

const struct gt_file_info *trace_reader__info(const struct trace_reader *r)
{
	return &r->info;
}

/* Reads, checks and decompresses the chunk at r->off.  0 with the records
 * ready, 0 with r->done set at the trailer or damage, or -errno. */
static int reader__load_chunk(struct trace_reader *r)
{
	const unsigned long long idx = r->chunk_idx, off = r->off;
	uint8_t h[CHUNK_HDR];
	uint32_t csize, usize, nrec;
	uint16_t kind;
	size_t d;
	ssize_t n;
	int err;

	n = pread_full(r->fd, h, CHUNK_HDR, off);
	if (n < 0)
		return n;
	if (n == 0) {
		if (!idx)
			return reader__stop(r, "file ends after the header with no trailer: "
					    "recording did not finish");
		return reader__stop(r, "file ends after chunk %llu (offset %llu) with no "
				    "trailer: recording did not finish", idx - 1, off);
	}
	if (n < CHUNK_HDR)
		return reader__stop(r, "chunk %llu at offset %llu is cut short (file ends after "
				    "%zd of %d header bytes); no trailer: recording did not finish",
				    idx, off, n, CHUNK_HDR);
	if (memcmp(h, chunk_magic, 4))
		return reader__stop(r, "chunk %llu at offset %llu is corrupt (bad chunk magic)",
				    idx, off);
	if (crc_of(h, 36) != get_u32(h + 36))
		return reader__stop(r, "chunk %llu at offset %llu is corrupt (header checksum "
				    "mismatch)", idx, off);
	kind = get_u16(h + 4);
	csize = get_u32(h + 8);
	usize = get_u32(h + 12);
	nrec = get_u32(h + 32);
	if (kind != CHUNK_DATA && kind != CHUNK_TRAILER)
		return reader__stop(r, "chunk %llu at offset %llu is corrupt (unknown kind %u)",
				    idx, off, kind);
	if (usize > CHUNK_MAX || !csize || csize > ZSTD_COMPRESSBOUND(CHUNK_MAX))
		return reader__stop(r, "chunk %llu at offset %llu is corrupt (sizes %u compressed, "
				    "%u uncompressed are out of range)", idx, off, csize, usize);

	err = buf_reserve(&r->cbuf, &r->ccap, csize);
	if (!err)
		err = buf_reserve(&r->ubuf, &r->ucap, usize);
	if (err)
		return err;
	/* from here on its header holds: a damage loses the records it announces */
	r->lost = kind == CHUNK_DATA ? nrec : 0;
	n = pread_full(r->fd, r->cbuf, csize, off + CHUNK_HDR);
	if (n < 0)
		return n;
	if (n < csize)
		return reader__stop(r, "chunk %llu at offset %llu is cut short (file ends after "
				    "%zd of %u bytes); no trailer: recording did not finish",
				    idx, off, CHUNK_HDR + n, CHUNK_HDR + csize);

	/* also checks the frame's content checksum */
	d = ZSTD_decompressDCtx(r->dctx, r->ubuf, usize, r->cbuf, csize);
	if (ZSTD_isError(d))
		return reader__stop(r, "chunk %llu at offset %llu is corrupt (zstd: %s)",
				    idx, off, ZSTD_getErrorName(d));
	if (d != usize)
		return reader__stop(r, "chunk %llu at offset %llu is corrupt (holds %zu bytes, "
				    "its header says %u)", idx, off, d, usize);

	if (kind == CHUNK_TRAILER) {
		/* A later version may append fields; the first ones stay. */
		if (usize < sizeof(r->trailer))
			return reader__stop(r, "trailer at offset %llu is corrupt (%u bytes, "
					    "expected %zu)", off, usize, sizeof(r->trailer));
		memcpy(&r->trailer, r->ubuf, sizeof(r->trailer));
		r->has_trailer = true;
		r->counters = r->trailer.counters;
		r->has_counters = true;
		r->done = true;
		if (r->trailer.records != r->records || r->trailer.chunks != idx)
			return reader__stop(r, "trailer at offset %llu counts %llu records in %llu "
					    "chunks, the file held %llu in %llu", off,
					    (unsigned long long)r->trailer.records,
					    (unsigned long long)r->trailer.chunks,
					    (unsigned long long)r->records, idx);
		return 0;
	}

	r->lost = 0;
	r->pos = 0;
	r->len = usize;
	r->chunk_nrec = nrec;
	r->chunk_seen = 0;
	r->chunk_off = off;
	r->chunk_idx++;
	r->off = off + CHUNK_HDR + csize;
	return 0;
}

int trace_reader__next(struct trace_reader *r, const struct gt_hdr **rec)
{
	const struct gt_hdr *h;
	size_t left;
	int err;

	for (;;) {
		if (r->pos < r->len) {
			h = (const struct gt_hdr *)(r->ubuf + r->pos);
			left = r->len - r->pos;
			if (left < sizeof(*h) || h->size < sizeof(*h) || h->size % 8 ||
			    h->size > left) {
				r->stop_in_chunk = true;
				r->lost = r->chunk_nrec > r->chunk_seen ? r->chunk_nrec - r->chunk_seen : 0;
				return reader__stop(r, "chunk %llu at offset %llu is corrupt (record "
						    "%u at byte %zu has size %u)",
						    (unsigned long long)r->chunk_idx - 1,
						    (unsigned long long)r->chunk_off, r->chunk_seen,
						    r->pos, left < sizeof(*h) ? 0 : h->size);
			}
			r->pos += h->size;
			r->chunk_seen++;
			r->records++;
			if (h->type == GT_REC_STATS && gt_rec__size_ok(h)) {
				memcpy(&r->counters, &((const struct gt_stats *)h)->c,
				       sizeof(r->counters));
				r->has_counters = true;
			}
			if (!gt_rec__size_ok(h))
				r->bad_records++;
			*rec = h;
			return 1;
		}
		if (r->done)
			return 0;
		if (r->chunk_seen != r->chunk_nrec) {
			r->stop_in_chunk = true;
			r->lost = r->chunk_nrec > r->chunk_seen ? r->chunk_nrec - r->chunk_seen : 0;
			return reader__stop(r, "chunk %llu at offset %llu is corrupt (holds %u "
					    "records, its header says %u)",
					    (unsigned long long)r->chunk_idx - 1,
					    (unsigned long long)r->chunk_off, r->chunk_seen,
					    r->chunk_nrec);
		}
		err = reader__load_chunk(r);
		if (err)
			return err;
	}
}

int trace_reader__chunks(struct trace_reader *r, struct trace_chunk_pos **out, size_t *n)
{
	struct trace_chunk_pos *v = NULL, *nv;
	uint64_t off = r->data_off, records = 0;
	size_t cap = 0;
	uint8_t h[CHUNK_HDR];
	ssize_t got;

	*out = NULL;
	*n = 0;
	for (;;) {
		got = pread_full(r->fd, h, CHUNK_HDR, off);
		if (got < 0) {
			free(v);
			*n = 0;
			return (int)got;
		}
		/* what reader__load_chunk would stop at: the end, a bad header */
		if (got < CHUNK_HDR || memcmp(h, chunk_magic, 4) || crc_of(h, 36) != get_u32(h + 36) ||
		    get_u16(h + 4) != CHUNK_DATA || !get_u32(h + 8))
			break;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				*n = 0;
				return -ENOMEM;
			}
			v = nv;
		}
		v[*n] = (struct trace_chunk_pos){
			.off = off, .index = *n, .records = records, .first_ts = get_u64(h + 16),
			.last_ts = get_u64(h + 24), .nrec = get_u32(h + 32),
		};
		records += v[*n].nrec;
		(*n)++;
		off += CHUNK_HDR + get_u32(h + 8);
	}
	*out = v;
	return 0;
}

void trace_reader__seek(struct trace_reader *r, const struct trace_chunk_pos *c)
{
	trace_reader__rewind(r);
	r->off = c->off;
	r->chunk_idx = c->index;
	r->records = c->records;
}

void trace_reader__rewind(struct trace_reader *r)
{
	/* everything the data set, back as open left it: the header's
	 * strings and the buffers stay */
	r->pos = r->len = 0;
	r->chunk_nrec = r->chunk_seen = 0;
	r->chunk_off = r->chunk_idx = 0;
	r->off = r->data_off;
	r->records = 0;
	memset(&r->trailer, 0, sizeof(r->trailer));
	r->has_trailer = false;
	memset(&r->counters, 0, sizeof(r->counters));
	r->has_counters = false;
	r->done = r->truncated = false;
	r->damage[0] = '\0';
	r->stop_in_chunk = false;
	r->ok_chunks = r->ok_bytes = r->lost = r->bad_records = 0;
}

bool trace_reader__truncated(const struct trace_reader *r)
{
	return r->truncated;
}

const char *trace_reader__damage(const struct trace_reader *r)
{
	return r->damage;
}

void trace_reader__damage_info(const struct trace_reader *r, struct trace_damage *d)
{
	struct stat st;

	memset(d, 0, sizeof(*d));
	d->records = r->records;
	d->bad = r->bad_records;
	d->size = fstat(r->fd, &st) ? 0 : (uint64_t)st.st_size;
	if (r->truncated) {
		snprintf(d->why, sizeof(d->why), "%s", r->damage);
		d->chunks = r->ok_chunks;
		d->bytes = r->ok_bytes;
		d->lost = r->lost;
	} else {
		d->chunks = r->chunk_idx;
		d->bytes = d->size;
	}
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

int trace_damage__report(const struct trace_damage *d, const char *path, const char *kept, FILE *err)
{
	if (!trace_damage__any(d))
		return 0;
	/* one line, whatever the damage: the reader's why (or the bad
	 * records alone), how much was read, what was lost, what was kept */
	flockfile(err);
	fprintf(err, "gtrace-bpf: %s is damaged: ", path);
	if (d->why[0])
		fputs(d->why, err);
	else
		fprintf(err, "%llu %s too short for %s type", (unsigned long long)d->bad,
			plural(d->bad, "record", "records"), plural(d->bad, "its", "their"));
	fprintf(err, "; read %llu %s %s(%llu whole %s, %llu of %llu bytes)",
		(unsigned long long)d->records, plural(d->records, "record", "records"),
		d->why[0] ? "before it " : "", (unsigned long long)d->chunks,
		plural(d->chunks, "chunk", "chunks"), (unsigned long long)d->bytes,
		(unsigned long long)(d->size > d->bytes ? d->size : d->bytes));
	if (d->lost)
		fprintf(err, ", %llu %s of the damaged chunk lost", (unsigned long long)d->lost,
			plural(d->lost, "record", "records"));
	if (d->why[0] && d->bad)
		fprintf(err, ", %llu %s too short for %s type skipped", (unsigned long long)d->bad,
			plural(d->bad, "record", "records"), plural(d->bad, "its", "their"));
	else if (d->bad)
		fputs(", those skipped", err);
	if (kept && *kept)
		fprintf(err, "; %s", kept);
	fputc('\n', err);
	funlockfile(err);
	return 1;
}

int trace_reader__report_damage(const struct trace_reader *r, const char *path, const char *kept,
				FILE *err)
{
	struct trace_damage d;

	trace_reader__damage_info(r, &d);
	return trace_damage__report(&d, path, kept, err);
}

const struct gt_trailer *trace_reader__trailer(const struct trace_reader *r)
{
	return r->has_trailer ? &r->trailer : NULL;
}

const struct gt_counters *trace_reader__counters(const struct trace_reader *r)
{
	return &r->counters;
}

bool trace_reader__has_counters(const struct trace_reader *r)
{
	return r->has_counters;
}

uint64_t trace_reader__records(const struct trace_reader *r)
{
	return r->records;
}

void trace_reader__close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->cbuf);
	free(r->ubuf);
	free(r->strings);
	free(r);
}
