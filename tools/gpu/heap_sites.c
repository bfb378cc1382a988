// SPDX-License-Identifier: MIT
/*
 * Whose heap grows: an LD_PRELOAD library for a job under test (a measuring
 * tool, tools/gpu/attach_check.sh JOB_PRELOAD=), no code of gtrace-bpf's.
 * It keeps, for every allocation of HEAP_SITES_MIN bytes or more (16 KiB by
 * default) still held, the code that asked for it: the two return addresses
 * above the malloc, calloc, realloc, aligned_alloc, memalign or
 * posix_memalign call (C++'s operator new is one of them), named by their
 * library and offset (dladdr). Every HEAP_SITES_EVERY
 * seconds (5) it appends to HEAP_SITES_OUT (a file) one block:
 * a line "t MONOTONIC_NS live_bytes N sites M" and the 25 sites holding the
 * most, "  BYTES COUNT LIBRARY+OFFSET". Memory that grows between two blocks
 * shows under the code that holds it.
 *
 *   gcc -O2 -shared -fPIC tools/gpu/heap_sites.c -o heap_sites.so -ldl -lpthread
 *   HEAP_SITES_OUT=/tmp/h.log LD_PRELOAD=./heap_sites.so JOB...
 *
 * Allocations made while dlsym looks the allocator up come from a static
 * arena and are never freed to the allocator. A table of 1 M live blocks:
 * past that, blocks are not tracked (counted in the block's line).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS (1u << 20)
#define SITES 4096
#define TOP 25

struct blk {
	uintptr_t p;	/* 0 empty, 1 deleted */
	size_t size;
	uint32_t site;
};

struct site {
	uintptr_t ret, ret2;
	size_t bytes, count;
};

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);

static struct blk *blks;
static struct site sites[SITES];
static uint32_t nsites;
static size_t untracked, min_size = 16384;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int inside;
static int ready;

static char boot[65536];
static size_t boot_used;

static void *boot_alloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (boot_used + n > sizeof(boot))
		return NULL;
	p = boot + boot_used;
	boot_used += n;
	return p;
}

static int from_boot(void *p)
{
	return (char *)p >= boot && (char *)p < boot + sizeof(boot);
}

static size_t slot_of(uintptr_t p)
{
	return (size_t)((p >> 4) * 0x9e3779b97f4a7c15ull >> 44) & (SLOTS - 1);
}

static uint32_t site_of(uintptr_t ret, uintptr_t ret2)
{
	for (uint32_t i = 0; i < nsites; i++)
		if (sites[i].ret == ret && sites[i].ret2 == ret2)
			return i;
	if (nsites == SITES)
		return SITES - 1;	/* the last holds the rest */
	sites[nsites].ret = ret;
	sites[nsites].ret2 = ret2;
	return nsites++;
}

static void track(void *p, size_t size, uintptr_t ret)
{
	void *bt[4];
	uintptr_t ret2 = 0;
	size_t i;
	int n;

	if (!p || size < min_size || !blks || inside)
		return;
	/* bt: track, the wrapper, its caller (ret), the one above */
	inside = 1;
	n = backtrace(bt, 4);
	inside = 0;
	if (n == 4)
		ret2 = (uintptr_t)bt[3];
	pthread_mutex_lock(&lock);
	i = slot_of((uintptr_t)p);
	for (size_t k = 0; k < SLOTS; k++, i = (i + 1) & (SLOTS - 1))
		if (blks[i].p <= 1) {
			uint32_t s = site_of(ret, ret2);

			blks[i] = (struct blk){ (uintptr_t)p, size, s };
			sites[s].bytes += size;
			sites[s].count++;
			pthread_mutex_unlock(&lock);
			return;
		}
	untracked++;
	pthread_mutex_unlock(&lock);
}

static void untrack(void *p)
{
	size_t i;

	if (!p || !blks)
		return;
	pthread_mutex_lock(&lock);
	i = slot_of((uintptr_t)p);
	for (size_t k = 0; k < SLOTS && blks[i].p; k++, i = (i + 1) & (SLOTS - 1))
		if (blks[i].p == (uintptr_t)p) {
			sites[blks[i].site].bytes -= blks[i].size;
			sites[blks[i].site].count--;
			blks[i].p = 1;
			break;
		}
	pthread_mutex_unlock(&lock);
}

/* LIBRARY+OFFSET of a code address */
static void where(FILE *f, uintptr_t a)
{
	Dl_info di;

	if (a && dladdr((void *)a, &di) && di.dli_fname)
		fprintf(f, "%s+0x%lx", strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname,
			(unsigned long)(a - (uintptr_t)di.dli_fbase));
	else
		fprintf(f, "0x%lx", (unsigned long)a);
}

static void report(FILE *f)
{
	struct site top[TOP];
	size_t live = 0, ntop = 0;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	inside = 1;
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; i < nsites; i++) {
		struct site s = sites[i];
		size_t j;

		live += s.bytes;
		if (ntop < TOP)
			ntop++;
		else if (s.bytes <= top[TOP - 1].bytes)
			continue;
		for (j = ntop - 1; j > 0 && top[j - 1].bytes < s.bytes; j--)
			top[j] = top[j - 1];
		top[j] = s;
	}
	fprintf(f, "t %lld live_bytes %zu sites %u untracked %zu\n",
		(long long)t.tv_sec * 1000000000ll + t.tv_nsec, live, nsites, untracked);
	pthread_mutex_unlock(&lock);
	for (size_t j = 0; j < ntop; j++) {
		fprintf(f, "  %zu %zu ", top[j].bytes, top[j].count);
		where(f, top[j].ret);
		fputs(" < ", f);
		where(f, top[j].ret2);
		fputc('\n', f);
	}
	fflush(f);
	inside = 0;
}

static void *reporter(void *arg)
{
	const char *path = getenv("HEAP_SITES_OUT");
	const char *every = getenv("HEAP_SITES_EVERY");
	unsigned secs = every ? (unsigned)atoi(every) : 5;
	FILE *f;

	(void)arg;
	inside = 1;
	f = path ? fopen(path, "a") : NULL;
	inside = 0;
	if (!f)
		return NULL;
	for (;;) {
		sleep(secs ? secs : 5);
		report(f);
	}
	return NULL;
}

__attribute__((constructor)) static void init(void)
{
	const char *m = getenv("HEAP_SITES_MIN");
	pthread_t t;

	inside = 1;
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real_memalign = dlsym(RTLD_NEXT, "memalign");
	real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	if (m)
		min_size = (size_t)strtoull(m, NULL, 0);
	blks = real_calloc ? real_calloc(SLOTS, sizeof(*blks)) : NULL;
	ready = 1;
	{
		void *bt[2];

		backtrace(bt, 2);	/* loads the unwinder now, not inside a malloc */
	}
	inside = 0;
	if (getenv("HEAP_SITES_OUT"))
		pthread_create(&t, NULL, reporter, NULL);
}

void *malloc(size_t n)
{
	void *p;

	if (!ready)
		return boot_alloc(n);
	p = real_malloc(n);
	track(p, n, (uintptr_t)__builtin_return_address(0));
	return p;
}

void free(void *p)
{
	if (!p || from_boot(p))
		return;
	untrack(p);
	real_free(p);
}

void *calloc(size_t a, size_t b)
{
	void *p;

	if (!ready)
		return boot_alloc(a * b);	/* zeroed: static */
	p = real_calloc(a, b);
	track(p, a * b, (uintptr_t)__builtin_return_address(0));
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p;

	if (!ready || from_boot(old)) {
		p = ready ? real_malloc(n) : boot_alloc(n);
		if (p && old) {
			size_t room = (size_t)(boot + sizeof(boot) - (char *)old);

			memcpy(p, old, n < room ? n : room);
		}
		return p;
	}
	untrack(old);
	p = real_realloc(old, n);
	track(p ? p : old, p ? n : 0, (uintptr_t)__builtin_return_address(0));
	return p;
}

void *aligned_alloc(size_t a, size_t n)
{
	void *p = real_aligned_alloc(a, n);

	track(p, n, (uintptr_t)__builtin_return_address(0));
	return p;
}

void *memalign(size_t a, size_t n)
{
	void *p = real_memalign(a, n);

	track(p, n, (uintptr_t)__builtin_return_address(0));
	return p;
}

int posix_memalign(void **out, size_t a, size_t n)
{
	int r = real_posix_memalign(out, a, n);

	if (!r)
		track(*out, n, (uintptr_t)__builtin_return_address(0));
	return r;
}
