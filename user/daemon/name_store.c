// SPDX-License-Identifier: MIT
/*
 * The daemon's name records for its snapshots (see name_store.h): the
 * records back to back in one buffer, as a snapshot's head needs them, and
 * beside them one entry per record saying whose it is and since when it is
 * dead. Deaths are marked as the exits, execs and newer names come; the
 * records are compacted only when a death has fallen out of the window, so
 * the usual call (a record that is not a name) costs a switch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "daemon/name_store.h"

#define KIND_PROC_INFO	0xff	/* the thing a GT_REC_PROC_INFO names: the process */

/* One record kept. */
struct ent {
	uint64_t seq;		/* its number in the order written (entries are in this order) */
	uint64_t dead;		/* when it died (CLOCK_MONOTONIC ns, at least 1), 0 = in use */
	size_t off;		/* where it is in buf */
	uint32_t pid;		/* hdr.pid: the process it belongs to, 0 = none */
	uint16_t size;		/* hdr.size */
	uint16_t kind;		/* gt_name.kind, KIND_PROC_INFO, 0 = a malformed name record */
};

struct name_store {
	uint8_t *buf;			/* the records, back to back */
	size_t len, cap;		/* its bytes used and allocated */
	struct ent *ent;		/* one per record, in buf's order */
	size_t n, ent_cap;
	size_t live;			/* of the n, those in use (not dead) */
	size_t limit;			/* bound on len */
	uint64_t next_seq;		/* seq of the next record kept */
	uint64_t min_dead;		/* lowest ent.dead of those kept, UINT64_MAX = none dead */
	struct u64map first;		/* pid + 1 -> seq + 1 of its first record in use, 0 = none:
					 * where a death starts looking */
	struct u64map same;		/* what a record names (same_key) -> seq + 1 of the record
					 * kept for it; checked against the record, which may be
					 * dead or gone */
	name_store_oldest_fn oldest;
	void *ctx;
	struct name_store_stats st;	/* forgotten .. gone kept up to date; the rest by stats */
};

int name_store__new(size_t limit, name_store_oldest_fn oldest, void *ctx, struct name_store **out)
{
	struct name_store *s;

	if (!out || !oldest)
		return -EINVAL;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->limit = limit ? limit : NAME_STORE_LIMIT;
	s->min_dead = UINT64_MAX;
	s->oldest = oldest;
	s->ctx = ctx;
	*out = s;
	return 0;
}

static bool kernel_kind(uint16_t kind)
{
	return kind == GT_NAME_KERNEL || kind == GT_NAME_KERNEL_MEM;
}

/* What a record names: its kind and key (a handle, a pid, a tid), 0 when it
 * is not a well-formed name record. */
static uint16_t rec_kind(const struct gt_hdr *h, uint64_t *key)
{
	const struct gt_name *nm = (const struct gt_name *)h;

	*key = h->pid;
	if (h->type == GT_REC_PROC_INFO)
		return h->size >= sizeof(struct gt_proc_evt) ? KIND_PROC_INFO : 0;
	if (h->size < sizeof(*nm) || !nm->kind || nm->kind >= KIND_PROC_INFO)
		return 0;
	*key = nm->key;
	return nm->kind;
}

/* The key of `same`: a pid's keys never collide (u64map__key2), nor do two
 * kinds of one key while keys stay under 2^56 (handles are user-space
 * addresses; tids and pids are small). */
static uint64_t same_key(uint32_t pid, uint16_t kind, uint64_t key)
{
	return u64map__key2(pid, key ^ (uint64_t)kind << 56);
}

/* The index of the first entry of record seq or after. */
static size_t find_from(const struct name_store *s, uint64_t seq)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ent[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The entry of record seq, NULL when it is no longer kept. */
static struct ent *find(const struct name_store *s, uint64_t seq)
{
	size_t i = find_from(s, seq);

	return i < s->n && s->ent[i].seq == seq ? &s->ent[i] : NULL;
}

/* e, in use, dies at ts. */
static void die(struct name_store *s, struct ent *e, uint64_t ts)
{
	s->live--;
	e->dead = ts ? ts : 1;
	if (e->dead < s->min_dead)
		s->min_dead = e->dead;
}

/* pid's names in use die at ts: all of them, or (an exec) its kernels'. */
static void kill_pid(struct name_store *s, uint32_t pid, uint64_t ts, bool all)
{
	uint64_t *first = u64map__get(&s->first, (uint64_t)pid + 1), still = 0;
	size_t i;

	if (!pid || !first || !*first)
		return;
	for (i = find_from(s, *first - 1); i < s->n; i++) {
		struct ent *e = &s->ent[i];

		if (e->pid != pid || e->dead)
			continue;
		if (all || kernel_kind(e->kind))
			die(s, e, ts);
		else if (!still)
			still = e->seq + 1;
	}
	*first = still;
}

/* Lets go of the records dead before `before`, moving the others down. */
static void compact(struct name_store *s, uint64_t before)
{
	size_t i, j = 0, w = 0;

	s->min_dead = UINT64_MAX;
	for (i = 0; i < s->n; i++) {
		struct ent e = s->ent[i];

		if (e.dead && e.dead < before) {
			s->st.forgotten++;
			continue;
		}
		if (e.off != w)
			memmove(s->buf + w, s->buf + e.off, e.size);
		e.off = w;
		w += e.size;
		if (e.dead && e.dead < s->min_dead)
			s->min_dead = e.dead;
		s->ent[j++] = e;
	}
	s->n = j;
	s->len = w;
}

/* The maps hold a key for every pid and thing ever named: made anew from
 * the records kept once they hold more than twice as many (memory bounded
 * by the store's, the work by what it let go). */
static void reindex(struct name_store *s)
{
	size_t i;

	if (s->first.len + s->same.len <= 2 * s->n + 1024)
		return;
	u64map__free(&s->first);
	u64map__free(&s->same);
	for (i = 0; i < s->n; i++) {
		const struct ent *e = &s->ent[i];
		const struct gt_hdr *h = (const struct gt_hdr *)(s->buf + e->off);
		uint64_t key, *f;

		if (e->dead)
			continue;
		f = u64map__get(&s->first, (uint64_t)e->pid + 1);
		if ((!f || !*f) && e->pid)
			u64map__set(&s->first, (uint64_t)e->pid + 1, e->seq + 1);
		if (e->kind && rec_kind(h, &key))
			u64map__set(&s->same, same_key(e->pid, e->kind, key), e->seq + 1);
	}
}

void name_store__prune(struct name_store *s)
{
	uint64_t oldest;

	if (s->min_dead == UINT64_MAX)
		return;
	oldest = s->oldest(s->ctx);
	if (!oldest || s->min_dead >= oldest)
		return;
	compact(s, oldest);
	reindex(s);
}

/* The bytes after the header that say what a record says (its kind, key
 * and string; a process' parent, comm and cgroup): equal for a repeat. */
static bool same_content(const struct gt_hdr *a, const struct gt_hdr *b)
{
	return a->size == b->size && a->type == b->type &&
	       !memcmp((const uint8_t *)a + sizeof(*a), (const uint8_t *)b + sizeof(*b),
		       a->size - sizeof(*a));
}

static int lose(struct name_store *s, const struct gt_hdr *h, int err)
{
	s->st.lost++;
	s->st.lost_bytes += h->size;
	return err;
}

/* A record of the stack table (--stacks): kept as a name of no process,
 * which never dies (one stack, module or function serves every process
 * that reaches it; each is written once). */
static bool table_rec(const struct gt_hdr *h)
{
	return h->type == GT_REC_STACK || h->type == GT_REC_MODULE || h->type == GT_REC_SYMBOL ||
	       h->type == GT_REC_PYFUNC;
}

static int add(struct name_store *s, const struct gt_hdr *h)
{
	uint64_t key, skey = 0, *prev, *f, older = 0;
	bool table = table_rec(h);
	uint16_t kind = table ? 0 : rec_kind(h, &key);
	uint32_t pid = table ? 0 : h->pid;
	struct ent *e;

	if (kind) {
		skey = same_key(h->pid, kind, key);
		prev = u64map__get(&s->same, skey);
		e = prev && *prev ? find(s, *prev - 1) : NULL;
		if (e && !e->dead && e->pid == h->pid && e->kind == kind) {
			const struct gt_hdr *old = (const struct gt_hdr *)(s->buf + e->off);
			uint64_t okey;

			rec_kind(old, &okey);
			if (okey == key && same_content(old, h)) {
				s->st.repeated++;
				return 0;
			}
			if (okey == key)
				older = e->seq + 1;
		}
	}
	if (s->len + h->size > s->limit) {
		name_store__prune(s);
		if (s->len + h->size > s->limit)
			return lose(s, h, -ENOSPC);
	}
	if (vec__reserve(&s->buf, &s->cap, s->len, h->size, 65536) ||
	    vec__reserve(&s->ent, &s->ent_cap, s->n, 1, 1024))
		return lose(s, h, -ENOMEM);
	/* where a death of the process starts looking: without it, the name
	 * would never die */
	f = u64map__get(&s->first, (uint64_t)pid + 1);
	if (pid && (!f || !*f) && u64map__set(&s->first, (uint64_t)pid + 1, s->next_seq + 1))
		return lose(s, h, -ENOMEM);
	/* without it, a repeat is kept twice: no loss */
	if (kind)
		u64map__set(&s->same, skey, s->next_seq + 1);
	memcpy(s->buf + s->len, h, h->size);
	s->ent[s->n++] = (struct ent){ .seq = s->next_seq++, .off = s->len, .pid = pid,
				       .size = h->size, .kind = kind };
	s->len += h->size;
	s->live++;
	/* a newer name of the same thing, kept: the older one is of no use
	 * once the window starts after this one (found anew: the entries may
	 * have moved) */
	if (older && (e = find(s, older - 1)) && !e->dead)
		die(s, e, h->ts);
	return 0;
}

int name_store__note(struct name_store *s, const struct gt_hdr *h)
{
	switch (h->type) {
	case GT_REC_NAME:
	case GT_REC_PROC_INFO:
	case GT_REC_STACK:
	case GT_REC_MODULE:
	case GT_REC_SYMBOL:
	case GT_REC_PYFUNC:
		return add(s, h);
	case GT_REC_EXIT:
		kill_pid(s, h->pid, h->ts, true);
		return 0;
	case GT_REC_EXEC:
		/* the new program's handles are new: the old program's kernel
		 * names go; its process and thread names are replaced by the
		 * new ones as they come */
		kill_pid(s, h->pid, h->ts, false);
		return 0;
	default:
		return 0;
	}
}

void name_store__sweep(struct name_store *s, name_store_alive_fn alive, void *ctx, uint64_t ts)
{
	size_t i;

	/* kill_pid changes values only: the map is not rehashed under us */
	for (i = 0; i < s->first.cap; i++) {
		uint64_t k = s->first.keys[i];

		if (!k || !s->first.vals[i] || k == 1 || alive(ctx, (uint32_t)(k - 1)))
			continue;
		kill_pid(s, (uint32_t)(k - 1), ts, true);
		s->st.gone++;
	}
}

const void *name_store__data(const struct name_store *s, size_t *len)
{
	*len = s->len;
	return s->buf;
}

void name_store__stats(const struct name_store *s, struct name_store_stats *st)
{
	*st = s->st;
	st->bytes = s->len;
	st->records = s->n;
	st->live = s->live;
	st->limit = s->limit;
}

void name_store__free(struct name_store *s)
{
	if (!s)
		return;
	u64map__free(&s->first);
	u64map__free(&s->same);
	free(s->ent);
	free(s->buf);
	free(s);
}
