// SPDX-License-Identifier: MIT
/*
 * The kernel lookups' probes dropped (cuda_probes__drop_lookups): the CUDA
 * runtime turns a kernel into the function it launches with
 * cuKernelGetFunction, several times a step in PyTorch, and those probes
 * serve only the kernel's name; once the recorder has checked that the
 * driver's function structures give the names (record/procs/kname_recovery),
 * their traps are taken away, the groups closed by a thread and left out of
 * every later attach (light mode's windows, new files, the budget's swaps).
 */
#include <stdlib.h>
#include "record/probes/cuda_probes_int.h"
#include "format/api.h"
#include "lib/log.h"

bool probes__lookup_api(unsigned api)
{
	return gt_api__class(api) == GT_CLS_KERNEL_FUNC;
}

static bool group_lookup(const struct probe_group *g)
{
	return g->lookup;
}

/* The dropped groups (their links gone) out of f's list. */
static void forget_lookup_groups(struct attached_file *f)
{
	size_t i, n = 0;

	for (i = 0; i < f->ngroups; i++) {
		struct probe_group *g = &f->groups[i];

		if (g->lookup) {
			free(g->offs);
			free(g->cookies);
			free(g->links);
			continue;
		}
		f->groups[n++] = f->groups[i];
	}
	f->ngroups = n;
}

int cuda_probes__drop_lookups(struct cuda_probes *p)
{
	size_t i, j, n = 0;
	uint64_t ns;

	if (p->lookups_off)
		return 0;
	for (i = 0; i < p->nfiles; i++)
		for (j = 0; j < p->files[i].ngroups; j++)
			n += p->files[i].groups[j].lookup ? p->files[i].groups[j].nlive : 0;
	p->lookups_off = true;
	p->lookup_batch = probes__detach_batch(p, group_lookup, &ns);
	for (i = 0; i < p->nfiles; i++)
		forget_lookup_groups(&p->files[i]);
	if (!p->lookup_batch) {
		p->lookup_ns = ns;
		p->lookup_reported = false;
	}
	pr_verbose("kernel lookups: %zu probes detaching (names from the driver's function "
		   "structures from now on)", n);
	return 0;
}

bool cuda_probes__lookups_done(struct cuda_probes *p, bool wait, uint64_t *ns)
{
	if (!p->lookups_off || p->lookup_reported)
		return false;
	if (p->lookup_batch) {
		if (!wait && !__atomic_load_n(&p->lookup_batch->done, __ATOMIC_ACQUIRE))
			return false;
		p->lookup_ns = probes__batch_join(p->lookup_batch);
		p->lookup_batch = NULL;
	}
	p->lookup_reported = true;
	*ns = p->lookup_ns;
	return true;
}

bool cuda_probes__lookups_dropped(const struct cuda_probes *p)
{
	return p->lookups_off;
}
