// SPDX-License-Identifier: MIT
/*
 * The swaps of the libcuda uprobes a stage asks for (record/ext.h, recorder__swap_*):
 * an api's probes moved from the always-on set to the window set or back
 * by attaching the new always-on links of every file beside the old ones
 * (the programs pairing their readings through api_state), flipping the
 * generation in force, and closing the old links in a thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/clock.h"
#include "cuda.skel.h"
#include "record/probes/cuda_probes_int.h"
#include "lib/log.h"
#include "lib/vec.h"

/* The probes a swap attaches anew: every always-on one (multi mode: one
 * link holds many apis, so the whole always-on set changes generation),
 * and the swapped api's window probes when it is shed. */
static bool swap_keep(const struct cuda_probes *p, const struct probe *pr, void *ctx)
{
	const struct probe_swap *sw = ctx;

	if (gt_api__hot(pr->api))
		return false;
	return !p->shed[pr->api] || (sw->shed && pr->api == sw->api);
}

static int batch_add(struct probe_swap *sw, struct probe_group *g)
{
	if (g->fd >= 0) {
		if (vec__reserve(&sw->fds, &sw->cap_fds, sw->nfds, 1, 16))
			return -ENOMEM;
		sw->fds[sw->nfds++] = g->fd;
		g->fd = -1;
	}
	for (size_t k = 0; g->links && k < g->n; k++) {
		if (!g->links[k])
			continue;
		if (vec__reserve(&sw->links, &sw->cap_links, sw->nlinks, 1, 16))
			return -ENOMEM;
		sw->links[sw->nlinks++] = g->links[k];
		g->links[k] = NULL;
	}
	return 0;
}

/* File f's part of a swap: its new always-on links (and the shed api's
 * window links while a window is open) attached beside the old ones, the
 * old ones kept in sw for the commit. On failure nothing of f changed. */
static int file_swap(struct cuda_probes *p, struct attached_file *f, struct probe_swap *sw,
		     const uint8_t *gen)
{
	struct probe_group *add = NULL, *groups;
	size_t nadd = 0, i, n = 0, live = 0, want = 0;
	int err;

	err = probes__make_groups(p, f, gen, swap_keep, sw, &add, &nadd);
	if (err)
		return err;
	groups = calloc(f->ngroups + nadd + 1, sizeof(*groups));
	if (!groups) {
		probes__groups_free(add, nadd);
		return -ENOMEM;
	}
	for (i = 0; i < nadd; i++) {
		if (add[i].hot && !p->hot)
			continue;
		want += add[i].n;
		live += probes__group_attach(p, f, &add[i]);
	}
	if (live < want) {
		for (i = 0; i < nadd; i++)
			probes__group_detach(p, &add[i]);
		probes__groups_free(add, nadd);
		free(groups);
		return -EIO;
	}
	/* kept: the hot groups and the window groups of other shed apis */
	for (i = 0; i < f->ngroups; i++) {
		struct probe_group *g = &f->groups[i];

		if (g->hot && g->shed_api != sw->api) {
			groups[n++] = *g;
			continue;
		}
		p->nprobes -= g->nlive;
		g->nlive = 0;
		if (batch_add(sw, g))
			probes__group_detach(p, g);	/* no memory to defer it: closed here */
		free(g->offs);
		free(g->cookies);
		free(g->links);
	}
	memcpy(groups + n, add, nadd * sizeof(*add));
	free(add);
	free(f->groups);
	f->groups = groups;
	f->ngroups = n + nadd;
	f->swap_seq = sw->seq;
	return 0;
}

static void state_set(struct cuda_probes *p, unsigned api, uint8_t v)
{
	__atomic_store_n(&p->skel->bss->api_state[api], v, __ATOMIC_SEQ_CST);
}

/* An api's state outside swaps: its generation; a shed api's calls marked
 * (in windows: an exit after the gate closed follows its entry). */
static uint8_t state_of(const struct cuda_probes *p, unsigned api)
{
	return p->gen[api] | (p->shed[api] ? GT_SW_MARK | GT_SW_STRICT : 0);
}

/* An api's state while both links are attached (new: the new links'
 * generation): pairing; the swapped api's calls marked, strictly only when
 * it comes back from the window set (when shedding, a call that entered
 * before the marking was recorded always-on: GEN decides its exit). */
static uint8_t swap_state(const struct cuda_probes *p, const struct probe_swap *sw, unsigned a,
			  unsigned new)
{
	uint8_t v = p->gen[a] | GT_SW_PAIR | (new ? GT_SW_NEW : 0);

	if (a == sw->api)
		v |= GT_SW_MARK | (sw->shed ? 0 : GT_SW_STRICT);
	return v;
}

int cuda_probes__swap_begin(struct cuda_probes *p, unsigned api, bool shed)
{
	struct probe_swap *sw;
	uint8_t gen[GT_SW_APIS], st0;
	size_t i;
	unsigned a;
	int err = 0;

	if (!p->opts.swap || !p->opts.multi)
		return -EOPNOTSUPP;
	if (p->swap)
		return -EBUSY;
	if (!api || api >= GT_API__COUNT || gt_api__hot(api) || p->shed[api] == shed)
		return -EINVAL;
	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return -ENOMEM;
	sw->api = api;
	sw->shed = shed;
	sw->t0 = clock__mono_ns();
	sw->seq = __atomic_add_fetch(&p->skel->bss->swap_seq, 1, __ATOMIC_SEQ_CST);
	/* the new generation of every always-on api, and of api */
	memcpy(gen, p->gen, sizeof(gen));
	for (a = 1; a < GT_API__COUNT; a++) {
		sw->flip[a] = !gt_api__hot(a) && (!p->shed[a] || a == api);
		if (sw->flip[a])
			gen[a] = !p->gen[a];
	}
	/* marks first: a call of api that enters from here on is marked by
	 * whichever program sees it, old or new */
	st0 = state_of(p, api);
	state_set(p, api, st0 | GT_SW_MARK);	/* when giving back, STRICT too: it was shed */
	p->shed[api] = shed;
	for (i = 0; i < p->nfiles && !err; i++)
		err = file_swap(p, &p->files[i], sw, gen);
	if (err) {
		/* the files done keep their new links: undo is a swap back, so
		 * commit what is attached; the rest stays as it was */
		pr_warn("budget: the swap of %s's probes failed in %s: %s", gt_api__name(api),
			p->files[i - 1].label, strerror(-err));
		if (i == 1) {
			p->shed[api] = !shed;
			state_set(p, api, st0);
			free(sw->fds);
			free(sw->links);
			free(sw);
			return err;
		}
	}
	/* both links live: the new programs hand their readings on */
	for (a = 1; a < GT_API__COUNT; a++)
		if (sw->flip[a])
			state_set(p, a, swap_state(p, sw, a, gen[a]));
	p->swap = sw;
	return 0;
}

int cuda_probes__swap_commit(struct cuda_probes *p)
{
	struct probe_swap *sw = p->swap;
	struct detach_batch *b;
	uint8_t gen[GT_SW_APIS];
	size_t i;
	unsigned a;

	if (!sw || sw->closing)
		return -EINVAL;
	memcpy(gen, p->gen, sizeof(gen));
	for (a = 1; a < GT_API__COUNT; a++)
		if (sw->flip[a])
			gen[a] = !p->gen[a];
	/* files attached since the beginning: their swap now, before the flip */
	for (i = 0; i < p->nfiles; i++)
		if (p->files[i].swap_seq != sw->seq && file_swap(p, &p->files[i], sw, gen))
			pr_warn("budget: the swap of %s's probes failed in %s: its calls are not "
				"recorded until the next one", gt_api__name(sw->api), p->files[i].label);
	for (a = 1; a < GT_API__COUNT; a++) {
		if (!sw->flip[a])
			continue;
		p->gen[a] = gen[a];
		state_set(p, a, swap_state(p, sw, a, gen[a]));
	}
	b = calloc(1, sizeof(*b));
	if (b) {
		b->fds = sw->fds;
		b->links = sw->links;
		b->nfds = sw->nfds;
		b->nlinks = sw->nlinks;
		sw->fds = NULL;
		sw->links = NULL;
	}
	if (!b || pthread_create(&b->thread, NULL, probes__detach_main, b)) {
		/* no thread: closed here, the loop waits for it */
		if (b) {
			probes__detach_main(b);
			__atomic_store_n(&b->done, true, __ATOMIC_RELEASE);
		} else {
			for (i = 0; i < sw->nfds; i++)
				close(sw->fds[i]);
			for (i = 0; i < sw->nlinks; i++)
				bpf_link__destroy(sw->links[i]);
		}
		sw->closing = b;
		if (b)
			b->thread = 0;
		return 0;
	}
	sw->closing = b;
	return 0;
}

/* Every key of swap_slots out of it; of swap_marks, api's (a shed api's
 * stay: its calls in flight in a window). */
static void maps_clear(struct cuda_probes *p, unsigned api)
{
	int fd = bpf_map__fd(p->skel->maps.swap_slots);
	uint32_t tid, next;
	struct { uint32_t tid, api; } k, nk;
	bool any = true;

	while (!bpf_map_get_next_key(fd, NULL, &next)) {
		tid = next;
		if (bpf_map_delete_elem(fd, &tid))
			break;
	}
	if (p->shed[api])
		return;
	fd = bpf_map__fd(p->skel->maps.swap_marks);
	while (any) {
		any = false;
		for (int e = bpf_map_get_next_key(fd, NULL, &nk); !e; e = bpf_map_get_next_key(fd, &k, &nk)) {
			k = nk;
			if (k.api == api && !bpf_map_delete_elem(fd, &k)) {
				any = true;	/* the walk starts again after a delete */
				break;
			}
		}
	}
}

bool cuda_probes__swap_done(struct cuda_probes *p, bool wait, uint64_t *ns)
{
	struct probe_swap *sw = p->swap;
	struct detach_batch *b = sw ? sw->closing : NULL;
	unsigned a;

	if (!b || (!wait && !__atomic_load_n(&b->done, __ATOMIC_ACQUIRE)))
		return false;
	if (b->thread)
		pthread_join(b->thread, NULL);
	/* the old links are gone: one program per api again */
	for (a = 1; a < GT_API__COUNT; a++)
		if (sw->flip[a])
			state_set(p, a, state_of(p, a));
	maps_clear(p, sw->api);
	*ns = clock__mono_ns() - sw->t0;
	free(b->fds);
	free(b->links);
	free(b);
	free(sw);
	p->swap = NULL;
	return true;
}

bool cuda_probes__swapping(const struct cuda_probes *p)
{
	return p->swap != NULL;
}

bool cuda_probes__is_shed(const struct cuda_probes *p, unsigned api)
{
	return api < GT_SW_APIS && p->shed[api];
}
