/* SPDX-License-Identifier: MIT */
/*
 * The agent's activity buffers: a fixed pool that CUPTI borrows from, and
 * the queue that carries completed buffers to the writer thread.  Lock-free
 * (C11 atomics), no allocation, no system call: both run inside CUPTI's
 * callbacks.  Header-only so that unit tests use the same code.
 *
 * The queue takes several producers: CUPTI 13 keeps a buffer per thread and
 * completes it on that thread (or its own), and cuptiActivityFlushAll()
 * completes buffers on the thread that calls it (the program's at exit, the
 * writer's at a stop, a context's destroy callback), possibly all at once.
 */
#ifndef GTRACE_CUPTI_RING_H
#define GTRACE_CUPTI_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ buffer pool */

#define GT_POOL_MAX 64	/* buffers at most (bits of free_mask) */

/*
 * Buffers of size bytes, made on first need up to max and reused after:
 * CUPTI 13 keeps one buffer per thread that produces records, so the number
 * in use follows the program's threads.  A made buffer is free when its bit
 * is set; lowest bits first, so that a writer that keeps up reuses the same
 * few.  alloc is called at most max times in all.
 */
struct gt_buf_pool {
	_Atomic uint64_t free_mask;		/* bit i set: slot[i] is made and free */
	_Atomic unsigned nslots;		/* slots claimed for making */
	uint8_t *_Atomic slot[GT_POOL_MAX];	/* the buffers, NULL until made */
	size_t size;				/* bytes per buffer */
	unsigned max;				/* buffers at most, <= GT_POOL_MAX */
	void *(*alloc)(size_t size);		/* size bytes, 8-byte aligned, or NULL */
};

static inline void gt_buf_pool__init(struct gt_buf_pool *p, size_t size, unsigned max,
				     void *(*alloc)(size_t size))
{
	for (unsigned i = 0; i < GT_POOL_MAX; i++)
		atomic_store_explicit(&p->slot[i], NULL, memory_order_relaxed);
	p->size = size;
	p->max = max < GT_POOL_MAX ? max : GT_POOL_MAX;
	p->alloc = alloc;
	atomic_store_explicit(&p->nslots, 0, memory_order_relaxed);
	atomic_store_explicit(&p->free_mask, 0, memory_order_release);
}

/* A free buffer, a new one while fewer than max were made, or NULL. */
static inline uint8_t *gt_buf_pool__get(struct gt_buf_pool *p)
{
	uint64_t m = atomic_load_explicit(&p->free_mask, memory_order_acquire);
	unsigned n;

	while (m) {
		unsigned i = (unsigned)__builtin_ctzll(m);

		if (atomic_compare_exchange_weak_explicit(&p->free_mask, &m, m & ~(1ull << i),
							  memory_order_acquire, memory_order_acquire))
			return atomic_load_explicit(&p->slot[i], memory_order_acquire);
	}
	n = atomic_load_explicit(&p->nslots, memory_order_relaxed);
	while (n < p->max) {
		if (atomic_compare_exchange_weak_explicit(&p->nslots, &n, n + 1, memory_order_relaxed,
							  memory_order_relaxed)) {
			/* slot n is ours alone; if it cannot be made it stays empty */
			uint8_t *b = p->alloc(p->size);

			if (b)
				atomic_store_explicit(&p->slot[n], b, memory_order_release);
			return b;
		}
	}
	return NULL;
}

/* Slot of a buffer of the pool, -1 for a pointer that is not one. */
static inline int gt_buf_pool__index(struct gt_buf_pool *p, const uint8_t *buf)
{
	unsigned n = atomic_load_explicit(&p->nslots, memory_order_acquire);

	if (!buf)
		return -1;
	for (unsigned i = 0; i < n && i < p->max; i++)
		if (atomic_load_explicit(&p->slot[i], memory_order_acquire) == buf)
			return (int)i;
	return -1;
}

/* Gives a buffer back; false for a pointer that is not a lent buffer. */
static inline bool gt_buf_pool__put(struct gt_buf_pool *p, uint8_t *buf)
{
	int i = gt_buf_pool__index(p, buf);
	uint64_t bit, old;

	if (i < 0)
		return false;
	bit = 1ull << i;
	old = atomic_fetch_or_explicit(&p->free_mask, bit, memory_order_release);
	return !(old & bit);
}

/* Hands every buffer free now to fn (the agent gives their pages back to the
 * system after a detach), taken out of the pool meanwhile, then returns
 * them: a buffer lent out is left alone. A get meanwhile finds none free
 * and may make another. The number handed. */
static inline unsigned gt_buf_pool__trim(struct gt_buf_pool *p, void (*fn)(uint8_t *buf, size_t size))
{
	uint64_t m = atomic_exchange_explicit(&p->free_mask, 0, memory_order_acquire);
	unsigned n = 0;

	for (uint64_t r = m; r; r &= r - 1) {
		uint8_t *b = atomic_load_explicit(&p->slot[__builtin_ctzll(r)], memory_order_acquire);

		if (b) {
			fn(b, p->size);
			n++;
		}
	}
	atomic_fetch_or_explicit(&p->free_mask, m, memory_order_release);
	return n;
}

/* ------------------------------------------------------------ queue */

#define GT_RING_CAP 64	/* a power of two >= GT_POOL_MAX: never full in the agent */

/* A bounded queue, many producers and one consumer.  Each cell's seq says
 * whose turn it is: seq == pos, free for the producer of position pos;
 * seq == pos + 1, filled for the consumer. */
struct gt_buf_ring {
	struct {
		_Atomic size_t seq;
		uint8_t *buf;		/* the completed buffer */
		size_t valid;		/* bytes of records in it */
	} cell[GT_RING_CAP];
	_Atomic size_t head;		/* next position to fill (producers) */
	size_t tail;			/* next position to take (consumer only) */
};

static inline void gt_buf_ring__init(struct gt_buf_ring *r)
{
	for (size_t i = 0; i < GT_RING_CAP; i++)
		atomic_store_explicit(&r->cell[i].seq, i, memory_order_relaxed);
	r->tail = 0;
	/* before any producer or the consumer starts: their start (thread
	 * creation, CUPTI's registration of the callbacks) orders it */
	atomic_store_explicit(&r->head, 0, memory_order_release);
}

/* Appends (buf, valid); false when the queue is full. */
static inline bool gt_buf_ring__push(struct gt_buf_ring *r, uint8_t *buf, size_t valid)
{
	size_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);

	for (;;) {
		__typeof__(&r->cell[0]) c = &r->cell[pos & (GT_RING_CAP - 1)];
		size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		intptr_t dif = (intptr_t)seq - (intptr_t)pos;

		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				c->buf = buf;
				c->valid = valid;
				atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
				return true;
			}
			/* pos reloaded by the failed exchange */
		} else if (dif < 0) {
			return false;	/* the consumer has not freed this cell yet: full */
		} else {
			pos = atomic_load_explicit(&r->head, memory_order_relaxed);
		}
	}
}

/* Takes the oldest entry; false when none is ready.  Consumer thread only. */
static inline bool gt_buf_ring__pop(struct gt_buf_ring *r, uint8_t **buf, size_t *valid)
{
	size_t pos = r->tail;
	__typeof__(&r->cell[0]) c = &r->cell[pos & (GT_RING_CAP - 1)];
	size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);

	if (seq != pos + 1)
		return false;
	*buf = c->buf;
	*valid = c->valid;
	r->tail = pos + 1;
	atomic_store_explicit(&c->seq, pos + GT_RING_CAP, memory_order_release);
	return true;
}

#endif /* GTRACE_CUPTI_RING_H */
