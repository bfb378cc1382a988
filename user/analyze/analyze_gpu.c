// SPDX-License-Identifier: MIT
/*
 * The GPU timeline of `gtrace-bpf analyze`: GPU work placed in start order
 * and swept per device and scope.
 *
 * Order.  A merged trace has each GPU record right after its launch call's
 * entry, and analyze_read.c interleaves the unlinked ones by their start, so
 * records come about in the order of their launches, not of their starts
 * (work queues up behind long kernels).  They wait by start until the
 * newest time read is AZ_SLACK_NS past it, in a FIFO (the run) while each
 * starts at or after the one before it, as most do, else in a min-heap; the
 * next to place is the earlier of the two heads.  Nothing read later can
 * start before, as a linked record starts after its launch and the rest come
 * by start.  The heap holds what was launched and has not started by then:
 * the work in flight.  A record that comes after work that started later was
 * placed is late: counted, and placed from where the timeline is (the part
 * before is left out).
 *
 * Sweep.  Per device, the ends of the running work in a min-heap: between
 * two starts, the time with one or more running is busy, with two or more
 * concurrent; where none runs, the device is idle until the next start, and
 * that interval [e, s] is split by what the next work waited for (enum
 * az_idle): with L its launch call's entry and H the end of the launching
 * thread's call before it,
 *   [e, min(L, s)]  SYNC when the process was in a wait (a synchronize or a
 *                   blocking copy) that began before e, else SUBMIT, of which
 *                   [e, min(H, L)] the thread was in other calls;
 *   [max(e, L), s]  LAUNCH when at most AZ_LAUNCH_MAX_NS, else OTHER;
 * an unlinked record's whole interval is OTHER.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analyze_int.h"
#include "lib/vec.h"

/* ---- the heap of work by start --------------------------------------------- */

/* The heap holds keys; the work itself stays in a slab (a[slab]) until it is
 * placed, so that a sift moves 24 bytes, not the work's 100. */
static inline bool key_before(const struct az_hkey *x, const struct az_hkey *y)
{
	return x->start < y->start || (x->start == y->start && x->seq < y->seq);
}

static void heap_up(struct az_hkey *h, size_t i)
{
	struct az_hkey k = h[i];

	while (i) {
		size_t p = (i - 1) / 2;

		if (!key_before(&k, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = k;
}

static void heap_down(struct az_hkey *h, size_t n, size_t i)
{
	struct az_hkey k = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && key_before(&h[c + 1], &h[c]))
			c++;
		if (!key_before(&h[c], &k))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = k;
}

/* ---- a device's running work ------------------------------------------------ */

static int ends_push(struct az_dev *d, uint64_t end)
{
	uint32_t i;

	if (vec__reserve(&d->ends, &d->cap, d->n, 1, 16))
		return -ENOMEM;
	i = d->n++;
	while (i) {
		uint32_t p = (i - 1) / 2;

		if (d->ends[p] <= end)
			break;
		d->ends[i] = d->ends[p];
		i = p;
	}
	d->ends[i] = end;
	return 0;
}

static uint64_t ends_pop(struct az_dev *d)
{
	uint64_t top = d->ends[0], last = d->ends[--d->n];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= d->n)
			break;
		if (c + 1 < d->n && d->ends[c + 1] < d->ends[c])
			c++;
		if (d->ends[c] >= last)
			break;
		d->ends[i] = d->ends[c];
		i = c;
	}
	if (d->n)
		d->ends[i] = last;
	return top;
}

/* Accounts the device's time up to s: the work that ended meanwhile leaves. */
static void dev_advance(struct az_dev *d, uint64_t s)
{
	while (d->n && d->ends[0] <= s) {
		uint64_t e = d->ends[0];

		if (e > d->t) {
			d->busy += e - d->t;
			if (d->n >= 2)
				d->conc += e - d->t;
			d->t = e;
		}
		ends_pop(d);
	}
	if (s > d->t) {
		if (d->n)
			d->busy += s - d->t;
		if (d->n >= 2)
			d->conc += s - d->t;
		d->t = s;
	}
}

static struct az_dev *dev_of(struct az_acc *acc, uint32_t device)
{
	for (uint32_t i = 0; i < acc->ndevs; i++)
		if (acc->devs[i].device == device)
			return &acc->devs[i];
	if (vec__reserve(&acc->devs, &acc->devcap, acc->ndevs, 1, 2))
		return NULL;
	acc->devs[acc->ndevs] = (struct az_dev){ .device = device };
	return &acc->devs[acc->ndevs++];
}

/* ---- waits ------------------------------------------------------------------ */

bool az_proc__waiting_at(struct analyze *a, struct az_proc *p, uint64_t t, uint8_t *kind)
{
	/* waits still open: their threads' */
	for (uint32_t i = 0; p->open_waits && i < a->threads.cap; i++) {
		const struct az_thread *th = a->threads.s[i].v;

		if (a->threads.s[i].used && th->pid == p->pid && th->wait_ts && th->wait_ts <= t) {
			*kind = th->wait_kind;
			return true;
		}
	}
	/* closed ones come by end: back from the newest while they end after t */
	for (size_t i = p->n; i > p->head; i--) {
		const struct az_wait *w = &p->waits[i - 1];

		if (w->end < t)
			break;
		if (w->start <= t) {
			*kind = w->kind;
			return true;
		}
	}
	return false;
}

/* Drops the waits that ended before every timeline of p went idle last. */
static void waits_trim(struct analyze *a, struct az_proc *p)
{
	uint64_t low = UINT64_MAX;
	struct az_acc *accs[2] = { p->whole, p->range };

	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; accs[k] && i < accs[k]->ndevs; i++)
			if (accs[k]->devs[i].last_end < low)
				low = accs[k]->devs[i].last_end;
	for (struct az_acc *r = a->closing; r; r = r->next)
		for (uint32_t i = 0; r->pid == p->pid && i < r->ndevs; i++)
			if (r->devs[i].last_end < low)
				low = r->devs[i].last_end;
	while (p->head < p->n && p->waits[p->head].end < low)
		p->head++;
	if (p->head == p->n)
		p->head = p->n = 0;
}

/* ---- placing work -------------------------------------------------------------- */

/* Splits the idle interval [e, s] before it (see the top). */
static void idle_split(struct analyze *a, struct az_acc *acc, struct az_proc *p,
		       const struct az_item *it, uint64_t e, uint64_t s)
{
	uint64_t L = it->launch, sub_end, from;
	uint8_t kind = 0;

	acc->nidle++;
	az_top__add(&acc->gap_top, s - e, e, s - e, it->pid, 0, "GPU idle");
	if (s - e >= AZ_LONG_GAP_NS) {
		acc->long_gaps++;
		acc->long_gap_ns += s - e;
		az_top__add(&acc->long_top, s - e, e, s - e, it->pid, 0, "gap");
	}
	if (!L) {
		acc->idle[AZ_IDLE_OTHER] += s - e;
		acc->gaps[AZ_IDLE_OTHER]++;
		return;
	}
	if (L > e) {
		sub_end = L < s ? L : s;
		if (p && az_proc__waiting_at(a, p, e, &kind)) {
			acc->idle[AZ_IDLE_SYNC] += sub_end - e;
			acc->gaps[AZ_IDLE_SYNC]++;
			if (kind == AZ_WAIT_COPY) {
				acc->sync_idle_copy += sub_end - e;
			} else {
				acc->sync_idle_wait += sub_end - e;
				acc->sync_gaps_wait++;
			}
			az_top__add(&acc->sync_top, sub_end - e, e, sub_end - e, it->pid, it->tid,
				    "GPU idle behind a wait");
		} else {
			uint64_t in_cuda = it->host_end > e ? (it->host_end < sub_end ? it->host_end
										: sub_end) - e : 0;

			acc->idle[AZ_IDLE_SUBMIT] += sub_end - e;
			acc->gaps[AZ_IDLE_SUBMIT]++;
			acc->submit_in_cuda += in_cuda;
			az_top__add(&acc->submit_top, sub_end - e, e, sub_end - e, it->pid, it->tid,
				    it->name ? it->name : "GPU idle before a launch");
		}
		/* the launching thread outside CUDA from its previous call to L:
		 * a host gap, whatever held the GPU's end */
		from = it->host_end > e ? it->host_end : e;
		if (sub_end > from && sub_end - from >= AZ_HOST_GAP_NS) {
			acc->host_gaps++;
			acc->host_gap_ns += sub_end - from;
			az_top__add(&acc->host_top, sub_end - from, from, sub_end - from, it->pid,
				    it->tid, "host gap");
		}
	}
	from = L > e ? L : e;
	if (s > from) {
		enum az_idle k = s - from <= AZ_LAUNCH_MAX_NS ? AZ_IDLE_LAUNCH : AZ_IDLE_OTHER;

		acc->idle[k] += s - from;
		acc->gaps[k]++;
	}
}

static struct az_kname *kname_of(struct az_acc *acc, const char *name)
{
	struct az_kname *k = hmap_get(&acc->knames, (uint64_t)(uintptr_t)name, 0);
	void *old;

	if (k)
		return k;
	k = calloc(1, sizeof(*k));
	if (!k || hmap_put(&acc->knames, (uint64_t)(uintptr_t)name, 0, k, &old)) {
		free(k);
		return NULL;
	}
	k->name = name;
	k->kclass = az_kclass__of(name);
	return k;
}

/* One piece of work on acc's timeline and in its figures. */
static int place(struct analyze *a, struct az_acc *acc, struct az_proc *p, const struct az_item *it)
{
	struct az_dev *d = dev_of(acc, it->device);
	uint64_t s = it->start, end = it->end, dur = it->end - it->start;
	uint64_t key = (uint64_t)it->device << 32 | it->stream;
	void *old;

	if (!d)
		return -ENOMEM;
	if (d->started && s < d->t) {
		acc->late++;
		s = d->t;
		if (end < s)
			end = s;
	}
	dev_advance(d, s);
	if (!d->n) {
		if (!d->started) {
			uint64_t from = acc->start < s ? acc->start : s;

			acc->idle[AZ_IDLE_BEFORE] += s - from;
			acc->gaps[AZ_IDLE_BEFORE] += s > from;
			d->started = true;
			d->first = s;
			d->t = s;
		} else if (s > d->last_end) {
			idle_split(a, acc, p, it, d->last_end, s);
		}
	}
	if (ends_push(d, end))
		return -ENOMEM;
	if (end > d->last_end)
		d->last_end = end;
	if (!acc->work || s < acc->gpu_first)
		acc->gpu_first = s;
	if (end > acc->gpu_last)
		acc->gpu_last = end;
	acc->work++;
	acc->unlinked += !it->launch;
	if (!hmap_get(&acc->gstreams, key, 0) && hmap_put(&acc->gstreams, key, 0, acc, &old))
		return -ENOMEM;
	if (it->kind == GT_REC_GPU_KERNEL) {
		struct az_kname *k = kname_of(acc, it->name ? it->name : "unknown_kernel");

		if (!k || loghist__add(&acc->kdur, dur))
			return -ENOMEM;
		k->count++;
		k->ns += dur;
		acc->kernels++;
		acc->kernel_ns += dur;
		acc->class_ns[k->kclass] += dur;
		acc->class_count[k->kclass]++;
		if (it->blocks < a->sm_count) {
			acc->small_kernels++;
			acc->small_ns += dur;
			az_top__add(&acc->small_top, dur, it->start, dur, it->pid, it->tid, k->name);
		}
	} else {
		acc->copy_ns[it->copy_kind] += dur;
		acc->copy_bytes[it->copy_kind] += it->bytes;
		acc->copy_count[it->copy_kind]++;
		acc->copy_top_ns += dur;
		az_top__add(&acc->copy_top, dur, it->start, dur, it->pid, it->tid,
			    it->kind == GT_REC_GPU_MEMSET ? "memset" : "memcpy");
	}
	return 0;
}

int az__finish_acc(struct analyze *a, struct az_acc *acc, uint64_t end);

/* Finishes the closed ranges whose GPU work is all placed and that nothing
 * read from now on can still add to. */
static int finish_closed(struct analyze *a, bool all)
{
	struct az_acc **pp = &a->closing;
	int rc = 0;

	while (*pp && !rc) {
		struct az_acc *r = *pp;

		if (!r->pending && (all || a->pos > r->close_ts + a->slack)) {
			*pp = r->next;
			rc = az__finish_acc(a, r, r->end);
		} else {
			pp = &r->next;
		}
	}
	return rc;
}

/* The index in the run's ring of its i-th key from the head. */
static inline size_t run_at(const struct analyze *a, size_t i)
{
	return a->rhead + i < a->rcap ? a->rhead + i : a->rhead + i - a->rcap;
}

/* The key of the next work to place, the earlier of the run's head and the
 * heap's top (by (start, seq), as one heap would give them); NULL none. */
static inline const struct az_hkey *next_key(const struct analyze *a)
{
	const struct az_hkey *r = a->rlen ? &a->run[a->rhead] : NULL;
	const struct az_hkey *h = a->nheap ? &a->heap[0] : NULL;

	return !h ? r : !r ? h : key_before(r, h) ? r : h;
}

int az_gpu__drain(struct analyze *a, uint64_t limit)
{
	const struct az_hkey *k;
	int rc = 0;

	while (!rc && (k = next_key(a)) && k->start < limit) {
		uint32_t slot = k->slot;
		struct az_item it = a->items[slot];
		struct az_proc *p = a->last_proc && a->last_proc->pid == it.pid ? a->last_proc :
				    hmap_get(&a->procs, it.pid, 0);

		a->free_slots[a->nfree++] = slot;
		if (k == &a->heap[0]) {
			a->heap[0] = a->heap[--a->nheap];
			if (a->nheap)
				heap_down(a->heap, a->nheap, 0);
		} else {
			a->rhead = run_at(a, 1);
			a->rlen--;
		}
		for (int i = 0; i < 3 && !rc; i++) {
			if (!it.acc[i])
				continue;
			rc = place(a, it.acc[i], p, &it);
			it.acc[i]->pending--;
		}
		if (p)
			waits_trim(a, p);
	}
	if (!rc && a->closing)
		rc = finish_closed(a, limit == UINT64_MAX);
	if (rc && !a->err)
		a->err = rc;
	return rc;
}

int az_gpu__push(struct analyze *a, const struct az_item *it)
{
	size_t rcap = a->rcap;
	struct az_hkey k;
	uint32_t slot;

	/* every slot is in the heap, the run or free: room for all in each */
	if (!a->nfree) {
		size_t cap = a->icap;

		if (vec__reserve(&a->items, &a->icap, cap, 1, 256) ||
		    vec__reserve(&a->free_slots, &a->fcap, 0, a->icap, 256) ||
		    vec__reserve(&a->heap, &a->hcap, 0, a->icap, 256) ||
		    vec__reserve(&a->run, &a->rcap, 0, a->icap, 256)) {
			a->err = -ENOMEM;
			return -ENOMEM;
		}
		for (size_t i = a->icap; i > cap; i--)
			a->free_slots[a->nfree++] = (uint32_t)(i - 1);
		/* a ring that wrapped: its part from the head to the old end
		 * goes to the new end */
		if (a->rcap > rcap && a->rhead + a->rlen > rcap) {
			memmove(a->run + a->rhead + (a->rcap - rcap), a->run + a->rhead,
				(rcap - a->rhead) * sizeof(*a->run));
			a->rhead += a->rcap - rcap;
		}
	}
	slot = a->free_slots[--a->nfree];
	a->items[slot] = *it;
	k = (struct az_hkey){ .start = it->start, .seq = a->seq++, .slot = slot };
	if (!a->rlen || it->start >= a->run[run_at(a, a->rlen - 1)].start) {
		/* in order: the run (it holds fewer keys than there are slots) */
		a->run[run_at(a, a->rlen)] = k;
		a->rlen++;
	} else {
		a->heap[a->nheap] = k;
		heap_up(a->heap, a->nheap++);
	}
	for (int i = 0; i < 3; i++)
		if (it->acc[i])
			it->acc[i]->pending++;
	return a->pos > a->slack ? az_gpu__drain(a, a->pos - a->slack) : 0;
}

int az_gpu__finish_acc(struct analyze *a, struct az_acc *acc, uint64_t end)
{
	(void)a;
	for (uint32_t i = 0; i < acc->ndevs; i++) {
		struct az_dev *d = &acc->devs[i];

		dev_advance(d, d->last_end);
		if (end > d->last_end) {
			acc->idle[AZ_IDLE_AFTER] += end - d->last_end;
			acc->gaps[AZ_IDLE_AFTER]++;
		}
	}
	return 0;
}

void az_gpu__free_acc(struct az_acc *acc)
{
	for (uint32_t i = 0; i < acc->ndevs; i++)
		free(acc->devs[i].ends);
	free(acc->devs);
	acc->devs = NULL;
	acc->ndevs = acc->devcap = 0;
}
