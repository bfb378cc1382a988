// SPDX-License-Identifier: MIT
/*
 * NVTX capture ranges (nvtx_capture.h).  Runs in the program's threads,
 * inside CUPTI's NVTX callbacks: no I/O, no allocation after init, and only
 * a range that matches takes the lock, the one that keeps the process's
 * open/close calls in the order of its 0 -> 1 and 1 -> 0 transitions (the
 * recorder keeps one state per process: a close overtaking the open it
 * follows would leave it open).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define NVTX_NO_IMPL	/* NVTX's types only: this library is no NVTX client */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include "nvtx_capture.h"

#define GT_EXPORT __attribute__((visibility("default")))

/* generated_nvtx_meta.h has no nvtxDomainCreateW_params, and types
 * nvtxDomainRegisterStringW's string as char: the calls' real arguments */
struct domain_create_w_params {
	const wchar_t *name;
};

struct register_string_w_params {
	nvtxDomainHandle_t domain;
	const wchar_t *string;
};

static struct {
	bool on;			/* init succeeded: follow ranges */
	char *name;			/* NAME */
	wchar_t *wname;			/* NAME decoded as UTF-8; NULL if it is not UTF-8 */
	char *domain;			/* DOMAIN; NULL = NVTX's default domain */
	wchar_t *wdomain;		/* DOMAIN decoded as UTF-8; NULL if none or not UTF-8 */
	gt_nvtx_capture_say_fn say;	/* warnings */
	/* read without the lock, written with it; 0 = free slot */
	_Atomic uintptr_t domains[GT_NVTX_CAPTURE_DOMAINS];	/* handles created for DOMAIN */
	_Atomic uintptr_t strings[GT_NVTX_CAPTURE_STRINGS];	/* NAME registered in the capture domain */
	pthread_mutex_t lock;		/* guards open, ids and the writes above */
	unsigned open;			/* matching ranges open in the process */
	nvtxRangeId_t ids[GT_NVTX_CAPTURE_IDS];	/* matching start/end ranges open; 0 = free */
	_Atomic unsigned nids;		/* ids in use: while 0, an end takes no lock */
	_Atomic bool said_nest;		/* warned: too many matching pushes on a thread */
	_Atomic bool said_ids;		/* warned: too many matching starts */
	_Atomic bool said_noid;		/* warned: a matching start without its range id */
	_Atomic bool said_full;		/* warned: domain or string handles table full */
	uint64_t opens;			/* gtrace_capture_open calls (with the lock held) */
	uint64_t closes;		/* gtrace_capture_close calls (with the lock held) */
} cap = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Push/pop ranges of the capture domain on this thread (NVTX nests them per
 * thread and per domain: those of other domains do not move depth). */
static __thread struct {
	unsigned depth;				/* pushes open (of those seen) */
	unsigned n;				/* of them, matching */
	unsigned at[GT_NVTX_CAPTURE_NEST];	/* the matching ones' depths, innermost last */
} t;

/* ------------------------------------------------------------ the probed pair */

/*
 * The recorder's uprobes sit on these two addresses in this file: never
 * inlined, never empty, and their bodies differ so that no compiler or
 * linker folds them into one address (a probe on one would fire for both).
 * Each begins with a nop, an instruction any uprobe takes (x86 refuses to
 * probe a lock-prefixed one, as an atomic increment would be).  The counts
 * are for a debugger; the callers hold cap.lock.
 */
GT_EXPORT __attribute__((noinline, used)) void gtrace_capture_open(void)
{
	__asm__ volatile("nop" ::: "memory");
	cap.opens++;
}

GT_EXPORT __attribute__((noinline, used)) void gtrace_capture_close(void)
{
	__asm__ volatile("nop" ::: "memory");
	cap.closes++;
}

/* This library's own definitions, called directly: the exported names could
 * bind to another object's, and the probes are on these. */
extern __typeof__(gtrace_capture_open) capture_open_self
	__attribute__((alias("gtrace_capture_open"), visibility("hidden")));
extern __typeof__(gtrace_capture_close) capture_close_self
	__attribute__((alias("gtrace_capture_close"), visibility("hidden")));

/* ------------------------------------------------------------ matching */

static void say_once(_Atomic bool *said, const char *msg)
{
	if (!atomic_exchange(said, true) && cap.say)
		cap.say(msg);
}

static bool ascii_is(const char *s, const char *want)
{
	return s && want && strcmp(s, want) == 0;
}

static bool wide_is(const wchar_t *s, const wchar_t *want)
{
	return s && want && wcscmp(s, want) == 0;
}

static bool slot_has(_Atomic uintptr_t *slots, size_t n, uintptr_t v)
{
	for (size_t i = 0; i < n; i++)
		if (atomic_load_explicit(&slots[i], memory_order_acquire) == v)
			return true;
	return false;
}

static void slot_add(_Atomic uintptr_t *slots, size_t n, uintptr_t v)
{
	size_t i;

	if (!v)
		return;
	pthread_mutex_lock(&cap.lock);
	if (slot_has(slots, n, v)) {
		pthread_mutex_unlock(&cap.lock);
		return;
	}
	for (i = 0; i < n && atomic_load(&slots[i]); i++)
		;
	if (i < n)
		atomic_store_explicit(&slots[i], v, memory_order_release);
	pthread_mutex_unlock(&cap.lock);
	if (i == n)
		say_once(&cap.said_full, "NVTX capture: too many domain or registered string handles "
			 "of the capture range; ranges named by the others are not followed");
}

static void slot_del(_Atomic uintptr_t *slots, size_t n, uintptr_t v)
{
	pthread_mutex_lock(&cap.lock);
	for (size_t i = 0; i < n; i++)
		if (atomic_load(&slots[i]) == v)
			atomic_store(&slots[i], 0);
	pthread_mutex_unlock(&cap.lock);
}

/* Whether a domain handle is the capture domain (NULL: the default one). */
static bool in_domain(nvtxDomainHandle_t h)
{
	if (!cap.domain)
		return !h;
	return h && slot_has(cap.domains, GT_NVTX_CAPTURE_DOMAINS, (uintptr_t)h);
}

/* Whether an event's message is NAME (its domain checked by the caller). */
static bool attr_is_name(const nvtxEventAttributes_t *a)
{
	if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return false;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return ascii_is(a->message.ascii, cap.name);
	case NVTX_MESSAGE_TYPE_UNICODE:
		return wide_is(a->message.unicode, cap.wname);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return a->message.registered &&
		       slot_has(cap.strings, GT_NVTX_CAPTURE_STRINGS, (uintptr_t)a->message.registered);
	default:
		return false;
	}
}

/* ------------------------------------------------------------ counting */

/* With cap.lock held. */
static void range_opened(void)
{
	if (cap.open++ == 0)
		capture_open_self();
}

static void range_closed(void)
{
	if (cap.open && --cap.open == 0)
		capture_close_self();
}

static void push(bool match)
{
	t.depth++;
	if (!match)
		return;
	if (t.n == GT_NVTX_CAPTURE_NEST) {
		say_once(&cap.said_nest, "NVTX capture: too many matching push ranges open on one thread; "
			 "the inner ones are not counted");
		return;
	}
	t.at[t.n++] = t.depth;
	pthread_mutex_lock(&cap.lock);
	range_opened();
	pthread_mutex_unlock(&cap.lock);
}

static void pop(void)
{
	if (!t.depth)	/* its push came before the agent saw NVTX */
		return;
	if (t.n && t.at[t.n - 1] == t.depth) {
		t.n--;
		pthread_mutex_lock(&cap.lock);
		range_closed();
		pthread_mutex_unlock(&cap.lock);
	}
	t.depth--;
}

/* A matching start; ret: CUPTI's pointer to the range id it returns. */
static void start(const void *ret)
{
	nvtxRangeId_t id = ret ? *(const nvtxRangeId_t *)ret : 0;
	size_t i;

	if (!id) {
		say_once(&cap.said_noid, "NVTX capture: CUPTI gave no range id for a matching "
			 "nvtxRangeStart; start/end capture ranges are not followed");
		return;
	}
	pthread_mutex_lock(&cap.lock);
	for (i = 0; i < GT_NVTX_CAPTURE_IDS && cap.ids[i]; i++)
		;
	if (i < GT_NVTX_CAPTURE_IDS) {
		cap.ids[i] = id;
		atomic_fetch_add_explicit(&cap.nids, 1, memory_order_release);
		range_opened();
	}
	pthread_mutex_unlock(&cap.lock);
	if (i == GT_NVTX_CAPTURE_IDS)
		say_once(&cap.said_ids, "NVTX capture: too many matching start/end ranges open; "
			 "the later ones are not counted");
}

/* Any end: only ids of matching starts count. */
static void end(nvtxRangeId_t id)
{
	if (!id || !atomic_load_explicit(&cap.nids, memory_order_acquire))
		return;
	pthread_mutex_lock(&cap.lock);
	for (size_t i = 0; i < GT_NVTX_CAPTURE_IDS; i++) {
		if (cap.ids[i] == id) {
			cap.ids[i] = 0;
			atomic_fetch_sub_explicit(&cap.nids, 1, memory_order_relaxed);
			range_closed();
			break;
		}
	}
	pthread_mutex_unlock(&cap.lock);
}

static uintptr_t returned(const CUpti_NvtxData *d)
{
	return d->functionReturnValue ? *(const uintptr_t *)d->functionReturnValue : 0;
}

void gt_nvtx_capture__callback(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
	const void *p;

	if (!cap.on || !d || !(p = d->functionParams))
		return;
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA:
		if (in_domain(NULL))
			push(ascii_is(((const nvtxRangePushA_params *)p)->message, cap.name));
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushW:
		if (in_domain(NULL))
			push(wide_is(((const nvtxRangePushW_params *)p)->message, cap.wname));
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		if (in_domain(NULL))
			push(attr_is_name(((const nvtxRangePushEx_params *)p)->eventAttrib));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
		const nvtxDomainRangePushEx_params *q = p;

		if (in_domain(q->domain))
			push(attr_is_name(q->core.eventAttrib));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePop:
		if (in_domain(NULL))
			pop();
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePop:
		if (in_domain(((const nvtxDomainRangePop_params *)p)->domain))
			pop();
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
		if (in_domain(NULL) && ascii_is(((const nvtxRangeStartA_params *)p)->message, cap.name))
			start(d->functionReturnValue);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartW:
		if (in_domain(NULL) && wide_is(((const nvtxRangeStartW_params *)p)->message, cap.wname))
			start(d->functionReturnValue);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
		if (in_domain(NULL) && attr_is_name(((const nvtxRangeStartEx_params *)p)->eventAttrib))
			start(d->functionReturnValue);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
		const nvtxDomainRangeStartEx_params *q = p;

		if (in_domain(q->domain) && attr_is_name(q->core.eventAttrib))
			start(d->functionReturnValue);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangeEnd:
		end(((const nvtxRangeEnd_params *)p)->id);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
		end(((const nvtxDomainRangeEnd_params *)p)->core.id);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainCreateA:
		if (cap.domain && ascii_is(((const nvtxDomainCreateA_params *)p)->name, cap.domain))
			slot_add(cap.domains, GT_NVTX_CAPTURE_DOMAINS, returned(d));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainCreateW:
		if (cap.domain && wide_is(((const struct domain_create_w_params *)p)->name, cap.wdomain))
			slot_add(cap.domains, GT_NVTX_CAPTURE_DOMAINS, returned(d));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainDestroy: {
		nvtxDomainHandle_t h = ((const nvtxDomainDestroy_params *)p)->domain;

		if (cap.domain && h)
			slot_del(cap.domains, GT_NVTX_CAPTURE_DOMAINS, (uintptr_t)h);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
		const nvtxDomainRegisterStringA_params *q = p;

		if (in_domain(q->domain) && ascii_is(q->string, cap.name))
			slot_add(cap.strings, GT_NVTX_CAPTURE_STRINGS, returned(d));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringW: {
		const struct register_string_w_params *q = p;

		if (in_domain(q->domain) && wide_is(q->string, cap.wname))
			slot_add(cap.strings, GT_NVTX_CAPTURE_STRINGS, returned(d));
		break;
	}
	default:
		break;
	}
}

const CUpti_CallbackId gt_nvtx_capture_cbids[] = {
	CUPTI_CBID_NVTX_nvtxRangePushA,
	CUPTI_CBID_NVTX_nvtxRangePushW,
	CUPTI_CBID_NVTX_nvtxRangePushEx,
	CUPTI_CBID_NVTX_nvtxRangePop,
	CUPTI_CBID_NVTX_nvtxRangeStartA,
	CUPTI_CBID_NVTX_nvtxRangeStartW,
	CUPTI_CBID_NVTX_nvtxRangeStartEx,
	CUPTI_CBID_NVTX_nvtxRangeEnd,
	CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
	CUPTI_CBID_NVTX_nvtxDomainRangePop,
	CUPTI_CBID_NVTX_nvtxDomainRangeStartEx,
	CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
	CUPTI_CBID_NVTX_nvtxDomainCreateA,
	CUPTI_CBID_NVTX_nvtxDomainCreateW,
	CUPTI_CBID_NVTX_nvtxDomainDestroy,
	CUPTI_CBID_NVTX_nvtxDomainRegisterStringA,
	CUPTI_CBID_NVTX_nvtxDomainRegisterStringW,
};
const size_t gt_nvtx_capture_cbids_len = sizeof(gt_nvtx_capture_cbids) / sizeof(gt_nvtx_capture_cbids[0]);

/* ------------------------------------------------------------ setup */

/* A forked child is a process of its own, with no range open: the
 * recorder's state for it starts closed.  Ranges its parent's threads had
 * open end in the child as pops or ends of ranges never seen. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&cap.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&cap.lock);
}

static void fork_child(void)
{
	pthread_mutex_init(&cap.lock, NULL);
	cap.open = 0;
	memset(cap.ids, 0, sizeof(cap.ids));
	atomic_store(&cap.nids, 0);
	memset(&t, 0, sizeof(t));	/* the one thread the child has */
}

/* s as wide characters (wchar_t is UTF-32 here), read as UTF-8 whatever the
 * program's locale; NULL when s is not UTF-8 or memory is short. */
static wchar_t *widen(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	wchar_t *w = malloc((strlen(s) + 1) * sizeof(*w));
	size_t k = 0;

	if (!w)
		return NULL;
	while (*p) {
		uint32_t c = *p++;
		int more;

		if (c < 0x80)
			more = 0;
		else if ((c & 0xe0) == 0xc0)
			c &= 0x1f, more = 1;
		else if ((c & 0xf0) == 0xe0)
			c &= 0x0f, more = 2;
		else if ((c & 0xf8) == 0xf0)
			c &= 0x07, more = 3;
		else
			goto bad;
		while (more--) {
			if ((*p & 0xc0) != 0x80)	/* the NUL too */
				goto bad;
			c = c << 6 | (*p++ & 0x3f);
		}
		w[k++] = (wchar_t)c;
	}
	w[k] = 0;
	return w;
bad:
	free(w);
	return NULL;
}

/* A copy of s up to its first '@' not escaped ("\@", "\\" undone); *end:
 * that '@' or the terminating NUL.  NULL when memory is short. */
static char *unescape(const char *s, const char **end)
{
	char *out = malloc(strlen(s) + 1), *q = out;

	if (!out)
		return NULL;
	for (; *s && *s != '@'; s++) {
		if (*s == '\\' && (s[1] == '@' || s[1] == '\\'))
			s++;
		*q++ = *s;
	}
	*q = 0;
	*end = s;
	return out;
}

int gt_nvtx_capture__init(const char *spec, gt_nvtx_capture_say_fn say, const char **why)
{
	char *name = NULL, *domain = NULL;
	const char *end;
	int err = -EINVAL;

	*why = strerror(ENOMEM);
	name = unescape(spec, &end);
	if (!name) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (*end == '@') {
		if (strcmp(end + 1, "*") == 0) {
			*why = "all domains at once (NAME@*) are not supported";
			goto cleanup;
		}
		domain = unescape(end + 1, &end);
		if (!domain) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (*end == '@') {
			*why = "a second '@' (write \\@ for an '@' in a name)";
			goto cleanup;
		}
		if (!*domain) {
			*why = "no domain after '@' (NAME alone is the default domain)";
			goto cleanup;
		}
	}
	if (!*name) {
		*why = "no range name";
		goto cleanup;
	}
	err = pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (err) {
		*why = strerror(err);
		err = -err;
		goto cleanup;
	}
	cap.name = name;
	cap.wname = widen(name);
	cap.domain = domain;
	cap.wdomain = domain ? widen(domain) : NULL;
	cap.say = say;
	cap.on = true;
	return 0;
cleanup:
	free(name);
	free(domain);
	return err;
}

bool gt_nvtx_capture__on(void)
{
	return cap.on;
}
