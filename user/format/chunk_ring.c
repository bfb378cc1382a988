// SPDX-License-Identifier: MIT
/*
 * The flight recorder's ring of compressed chunks, and snapshots of it.
 *
 * Each chunk lives in one immutable, reference-counted buffer.  The ring
 * holds one reference; a snapshot takes one more per chunk it selects, under
 * the lock, then lets go of the lock and writes from its references while
 * puts go on dropping and adding chunks.  The last reference frees the
 * buffer, so a chunk the ring drops during a snapshot stays allocated until
 * the snapshot has written it: memory can reach max_bytes plus what the
 * snapshots in progress took.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zstd.h>
#include "lib/clock.h"
#include "format/chunk_ring.h"
#include "format/trace_layout.h"
#include "lib/installer.h"

struct ring_chunk {
	atomic_uint refs;		/* the ring's, plus one per snapshot writing it */
	uint32_t nrec;			/* records in it */
	uint64_t first_ts;		/* its header's first_ts and last_ts */
	uint64_t last_ts;
	size_t len;			/* bytes of data */
	struct ring_chunk *next_drop;	/* list of the chunks one put dropped, freed
					 * after the lock is released */
	uint8_t data[];			/* chunk header and zstd frame, as in a file */
};

/* What a chunk counts against max_bytes: its bytes, its descriptor and its
 * slot. */
#define CHUNK_COST(len) (sizeof(struct ring_chunk) + (len) + sizeof(struct ring_chunk *))

struct chunk_ring {
	pthread_mutex_t lock;		/* guards everything below */
	uint64_t max_bytes;		/* chunk_ring_opts */
	uint64_t window_ns;
	struct ring_chunk **slot;	/* circular: count chunks from head, oldest first */
	size_t cap;			/* slots */
	size_t head;
	size_t count;
	struct chunk_ring_stats st;	/* chunks .. newest_ts kept up to date, dropped_* too */
};

static void chunk__unref(struct ring_chunk *c)
{
	if (c && atomic_fetch_sub(&c->refs, 1) == 1)
		free(c);
}

int chunk_ring__new(const struct chunk_ring_opts *o, struct chunk_ring **out)
{
	struct chunk_ring *r;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!o || !o->max_bytes)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	err = -pthread_mutex_init(&r->lock, NULL);
	if (err) {
		free(r);
		return err;
	}
	r->max_bytes = o->max_bytes;
	r->window_ns = o->window_ns;
	*out = r;
	return 0;
}

/* Takes the oldest chunk out (lock held) onto *drops, counted as dropped. */
static void ring__drop_oldest(struct chunk_ring *r, struct ring_chunk **drops, bool window)
{
	struct ring_chunk *c = r->slot[r->head];

	r->slot[r->head] = NULL;
	r->head = (r->head + 1) % r->cap;
	r->count--;
	r->st.chunks--;
	r->st.records -= c->nrec;
	r->st.chunk_bytes -= c->len;
	r->st.mem_bytes -= CHUNK_COST(c->len);
	r->st.dropped_chunks++;
	r->st.dropped_records += c->nrec;
	r->st.dropped_bytes += c->len;
	r->st.dropped_window += window;
	c->next_drop = *drops;
	*drops = c;
}

/* One more free slot (lock held): the slots double, oldest first again. */
static int ring__grow(struct chunk_ring *r)
{
	size_t cap = r->cap ? r->cap * 2 : 64, i;
	struct ring_chunk **s = malloc(cap * sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < r->count; i++)
		s[i] = r->slot[(r->head + i) % r->cap];
	free(r->slot);
	r->slot = s;
	r->cap = cap;
	r->head = 0;
	return 0;
}

int chunk_ring__put(struct chunk_ring *r, const void *chunk, size_t len, uint64_t first_ts,
		    uint64_t last_ts, uint32_t nrec)
{
	struct ring_chunk *c = NULL, *drops = NULL;
	bool oversized;
	struct chunk_head h;
	int err = 0;

	if (!r)
		return -EINVAL;
	if (chunk_head__check(chunk, len, &h))
		return -EBADMSG;
	if (h.first_ts != first_ts || h.last_ts != last_ts || h.nrec != nrec)
		return -EINVAL;
	oversized = CHUNK_COST(len) > r->max_bytes;
	/* the copy is made before the lock is taken: a snapshot never waits
	 * for it */
	if (!oversized) {
		c = malloc(sizeof(*c) + len);
		if (!c)
			return -ENOMEM;
		atomic_init(&c->refs, 1);
		c->nrec = nrec;
		c->first_ts = first_ts;
		c->last_ts = last_ts;
		c->len = len;
		memcpy(c->data, chunk, len);
	}

	pthread_mutex_lock(&r->lock);
	if (last_ts > r->st.newest_ts)
		r->st.newest_ts = last_ts;
	if (oversized) {
		r->st.dropped_chunks++;
		r->st.dropped_records += nrec;
		r->st.dropped_bytes += len;
		r->st.dropped_oversized++;
	} else {
		while (r->count && r->st.mem_bytes + CHUNK_COST(len) > r->max_bytes)
			ring__drop_oldest(r, &drops, false);
		if (r->count == r->cap)
			err = ring__grow(r);
		if (!err) {
			r->slot[(r->head + r->count) % r->cap] = c;
			r->count++;
			r->st.chunks++;
			r->st.records += nrec;
			r->st.chunk_bytes += len;
			r->st.mem_bytes += CHUNK_COST(len);
			c = NULL;
		}
	}
	if (r->window_ns && r->st.newest_ts > r->window_ns)
		while (r->count && r->slot[r->head]->last_ts < r->st.newest_ts - r->window_ns)
			ring__drop_oldest(r, &drops, true);
	r->st.oldest_ts = r->count ? r->slot[r->head]->first_ts : 0;
	pthread_mutex_unlock(&r->lock);

	/* free() of a large buffer can unmap it: not under the lock */
	while (drops) {
		struct ring_chunk *next = drops->next_drop;

		chunk__unref(drops);
		drops = next;
	}
	free(c);	/* not taken: the slots could not grow */
	return err;
}

int chunk_ring__sink(void *ctx, const void *chunk, size_t len, uint64_t first_ts,
		     uint64_t last_ts, uint32_t nrec)
{
	return chunk_ring__put(ctx, chunk, len, first_ts, last_ts, nrec);
}

void chunk_ring__stats(struct chunk_ring *r, struct chunk_ring_stats *st)
{
	pthread_mutex_lock(&r->lock);
	*st = r->st;
	pthread_mutex_unlock(&r->lock);
}

uint64_t chunk_ring__min_first_ts(struct chunk_ring *r)
{
	uint64_t min = 0;
	size_t i;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->count; i++) {
		uint64_t t = r->slot[(r->head + i) % r->cap]->first_ts;

		if (!i || t < min)
			min = t;
	}
	pthread_mutex_unlock(&r->lock);
	return min;
}

void chunk_ring__free(struct chunk_ring *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->count; i++)
		chunk__unref(r->slot[(r->head + i) % r->cap]);
	free(r->slot);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* ---------------------------------------------------------------- snapshot */

/* The chunks a snapshot took references on, oldest first. */
struct snap_list {
	struct ring_chunk **c;
	size_t n;
};

static bool snap__selects(const struct chunk_ring_snap_opts *o, uint64_t since,
			  const struct ring_chunk *c)
{
	return c->last_ts >= since && (!o->until_ts || c->first_ts <= o->until_ts);
}

/*
 * References on the chunks o selects.  This is the only part of a snapshot
 * under the lock: one allocation for the list, then per chunk a comparison,
 * a pointer copy and an atomic increment (about a microsecond per thousand
 * chunks).
 */
static int snap__take(struct chunk_ring *r, const struct chunk_ring_snap_opts *o,
		      struct snap_list *l, struct chunk_ring_snap_stats *st)
{
	uint64_t t0 = clock__mono_ns(), since = o->since_ts;
	struct ring_chunk *c;
	size_t i;
	int err = 0;

	pthread_mutex_lock(&r->lock);
	if (o->last_ns && r->st.newest_ts > o->last_ns && r->st.newest_ts - o->last_ns > since)
		since = r->st.newest_ts - o->last_ns;
	l->n = 0;
	l->c = malloc((r->count ? r->count : 1) * sizeof(*l->c));
	if (!l->c) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < r->count; i++) {
		c = r->slot[(r->head + i) % r->cap];
		if (!snap__selects(o, since, c))
			continue;
		atomic_fetch_add(&c->refs, 1);
		l->c[l->n++] = c;
		if (!st->first_ts || c->first_ts < st->first_ts)
			st->first_ts = c->first_ts;
		if (c->last_ts > st->last_ts)
			st->last_ts = c->last_ts;
	}
	st->selected = l->n;
out:
	st->lock_ns = clock__mono_ns() - t0;
	pthread_mutex_unlock(&r->lock);
	return err;
}

/*
 * The records a per-process snapshot keeps besides the process' own: those
 * of no process (pid 0: the recorder's capture changes, libcuda paths found
 * in no process), the counters (GT_REC_STATS, pid = the recorder's, which
 * readers take the drop counts from), the overhead budget's estimates
 * (GT_REC_OVERHEAD, pid = the process that paid most, which is the
 * recorder's own figure whoever paid) and the libcuda paths, which name a
 * file every process may map.  A fork of the process is the child's record
 * (hdr.pid = child) and is not kept.
 */
static bool snap__keeps(const struct gt_hdr *rec, uint32_t pid)
{
	const struct gt_name *nm = (const struct gt_name *)rec;

	if (rec->pid == pid || rec->pid == 0 || rec->type == GT_REC_STATS ||
	    rec->type == GT_REC_OVERHEAD)
		return true;
	return rec->type == GT_REC_NAME && rec->size >= sizeof(*nm) &&
	       nm->kind == GT_NAME_LIBCUDA;
}

/* Decompressed buffer of a per-process snapshot, reused chunk to chunk. */
struct snap_filter {
	ZSTD_DCtx *dctx;
	uint8_t *buf;
	size_t cap;
};

/* Appends to w the records of buf[0..len), back to back, that pid's
 * snapshot keeps (all of them for pid 0). */
static int snap__append(struct trace_writer *w, const uint8_t *buf, size_t len, uint32_t pid)
{
	const struct gt_hdr *rec;
	size_t pos;
	int err;

	for (pos = 0; pos < len; pos += rec->size) {
		rec = (const struct gt_hdr *)(buf + pos);
		if (len - pos < sizeof(*rec) || rec->size < sizeof(*rec) || rec->size % 8 ||
		    rec->size > len - pos)
			return -EBADMSG;
		if (pid && !snap__keeps(rec, pid))
			continue;
		err = trace_writer__append(w, rec);
		if (err)
			return err;
	}
	return 0;
}

/* Appends to w the records of chunk c that pid's snapshot keeps. */
static int snap__filter_chunk(struct snap_filter *f, struct trace_writer *w,
			      const struct ring_chunk *c, uint32_t pid)
{
	struct chunk_head h;
	size_t d;

	if (chunk_head__check(c->data, c->len, &h))
		return -EBADMSG;
	if (h.usize > f->cap) {
		free(f->buf);
		f->cap = 0;
		f->buf = malloc(h.usize);
		if (!f->buf)
			return -ENOMEM;
		f->cap = h.usize;
	}
	d = ZSTD_decompressDCtx(f->dctx, f->buf, f->cap, c->data + CHUNK_HDR, h.csize);
	if (ZSTD_isError(d) || d != h.usize)
		return -EBADMSG;
	return snap__append(w, f->buf, d, pid);
}

/* Writes the header, l's chunks (or pid's records of them) and the trailer
 * to fd. */
static int snap__write(int fd, const struct gt_file_info *info, const struct chunk_ring_snap_opts *o,
		       const struct snap_list *l, const struct gt_trailer *trailer,
		       struct chunk_ring_snap_stats *st)
{
	struct trace_writer_opts wo = { .chunk_bytes = o->chunk_bytes, .zstd_level = o->zstd_level };
	struct snap_filter f = {};
	struct trace_writer *w = NULL;
	size_t i;
	int err;

	if (o->pid) {
		f.dctx = ZSTD_createDCtx();
		if (!f.dctx)
			return -ENOMEM;
	}
	err = trace_writer__create_fd(fd, info, &wo, &w);
	if (!err && o->preamble_len)
		err = snap__append(w, o->preamble, o->preamble_len, o->pid);
	for (i = 0; !err && i < l->n; i++) {
		if (o->pid)
			err = snap__filter_chunk(&f, w, l->c[i], o->pid);
		else
			err = trace_writer__put_chunk(w, l->c[i]->data, l->c[i]->len);
	}
	if (!err)
		err = trace_writer__finish(w, trailer);
	if (!err) {
		st->chunks = trace_writer__chunks(w);
		st->records = trace_writer__records(w);
		st->bytes = trace_writer__bytes(w);
	}
	trace_writer__free(w);
	ZSTD_freeDCtx(f.dctx);
	free(f.buf);
	return err;
}

/* The chunks a snapshot selected, referenced: see chunk_ring__snap_take. */
struct chunk_ring_snap {
	struct snap_list l;
	struct chunk_ring_snap_stats st;	/* selected .. lock_ns, from the take */
};

int chunk_ring__snap_take(struct chunk_ring *r, const struct chunk_ring_snap_opts *o,
			  struct chunk_ring_snap **out)
{
	struct chunk_ring_snap_opts none = {};
	struct chunk_ring_snap *s;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!r)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = snap__take(r, o ? o : &none, &s->l, &s->st);
	if (err) {
		chunk_ring__snap_free(s);
		return err;
	}
	*out = s;
	return 0;
}

const struct chunk_ring_snap_stats *chunk_ring__snap_selection(const struct chunk_ring_snap *s)
{
	return &s->st;
}

int chunk_ring__snap_write(const struct chunk_ring_snap *s, const char *path,
			   const struct gt_file_info *info, const struct chunk_ring_snap_opts *o,
			   const struct gt_trailer *trailer, struct chunk_ring_snap_stats *st)
{
	struct chunk_ring_snap_opts none = {};
	struct chunk_ring_snap_stats w;
	struct installer *in = NULL;
	struct stat sb;
	int err;

	if (!s || !path || !info)
		return -EINVAL;
	if (!o)
		o = &none;
	if (st)
		memset(st, 0, sizeof(*st));
	w = s->st;
	/* refused before any work (the commit refuses again what appears
	 * meanwhile); the file is made under a private name, never opened
	 * under path, so a FIFO or a link there cannot block or redirect it */
	if (!o->force && !lstat(path, &sb))
		return -EEXIST;
	err = installer__create(path, NULL, 0600, &in);
	if (!err)
		err = snap__write(installer__fd(in), info, o, &s->l, trailer, &w);
	if (!err)
		err = installer__commit(in, o->force);
	/* a failed file (a full disk) is removed here, never left half
	 * written under a hidden name */
	installer__free(in);
	if (!err && st)
		*st = w;
	return err;
}

void chunk_ring__snap_free(struct chunk_ring_snap *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->l.n; i++)
		chunk__unref(s->l.c[i]);
	free(s->l.c);
	free(s);
}

int chunk_ring__snapshot(struct chunk_ring *r, const char *path,
			 const struct gt_file_info *info, const struct chunk_ring_snap_opts *o,
			 const struct gt_trailer *trailer, struct chunk_ring_snap_stats *st)
{
	struct chunk_ring_snap *s = NULL;
	struct stat sb;
	int err;

	if (st)
		memset(st, 0, sizeof(*st));
	if (!r || !path || !info)
		return -EINVAL;
	/* before the references are taken: a refusal costs the ring nothing */
	if (!(o && o->force) && !lstat(path, &sb))
		return -EEXIST;
	err = chunk_ring__snap_take(r, o, &s);
	if (!err)
		err = chunk_ring__snap_write(s, path, info, o, trailer, st);
	chunk_ring__snap_free(s);
	return err;
}
