/* SPDX-License-Identifier: MIT */
/*
 * Internal to the libcuda uprobes (cuda_probes.h): the state their files
 * share. cuda_probes.c finds the probe points of each file, groups them,
 * attaches and detaches the groups (light mode's hot ones included);
 * cuda_probes_swap.c is the overhead budget's swaps of always-on links.
 */
#ifndef GTRACE_CUDA_PROBES_INT_H
#define GTRACE_CUDA_PROBES_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "record/probes/cuda_probes.h"
#include "format/api.h"

struct bpf_link;

/* Probes of one file that share a program and an entry/exit side: one
 * uprobe_multi link (or one link per probe), attached and detached whole.
 * Hot groups (GT_COOKIE_HOT) come and go in light mode; so do the groups of
 * an api the budget has shed (one group per shed api and side). */
struct probe_group {
	struct bpf_program *prog;
	bool ret;			/* return probes */
	bool hot;			/* in the window set: detachable */
	uint16_t shed_api;		/* the shed api whose window group this is, 0 = none */
	bool lookup;			/* kernel lookups (probes__lookup_api): dropped together */
	uint64_t *offs, *cookies;	/* n probe points */
	size_t n;
	int fd;				/* multi mode: the link, -1 while detached */
	struct bpf_link **links;	/* per-probe mode: n links, NULL while detached */
	size_t nlive;			/* probes attached now */
};

/* One probe point: which program, where, with which cookie. */
struct probe {
	struct bpf_program *prog;
	bool ret;
	uint64_t off;
	uint64_t cookie;		/* without the HOT, SWAP and GEN bits (probe_cookie) */
	uint16_t api;
};

struct attached_file {
	dev_t dev;
	ino_t ino;
	char *label;
	int path_fd;			/* O_PATH: /proc/self/fd/N re-attaches the same file */
	struct probe_group *groups;
	size_t ngroups;
	struct probe *pr;		/* its probe points, to group them anew at a swap */
	size_t npr;
	uint32_t swap_seq;		/* the swap whose new links it has (swap in progress) */
};

/* A swap in progress (cuda_probes__swap_begin). */
struct probe_swap {
	unsigned api;			/* the api shed or given back */
	bool shed;
	uint32_t seq;			/* swap_seq in BPF */
	bool flip[GT_SW_APIS];		/* apis whose probes change generation */
	struct detach_batch *closing;	/* the old links, once committed */
	int *fds;			/* ... gathered here until then */
	struct bpf_link **links;
	size_t nfds, nlinks, cap_fds, cap_links;
	uint64_t t0;			/* when it began */
};

struct cuda_probes {
	struct cuda_bpf *skel;
	struct cuda_probes_opts opts;
	struct attached_file *files;
	size_t nfiles, files_cap;	/* files attached; room in files */
	size_t nprobes;			/* probes attached now */
	size_t nfailed;
	bool hot;			/* hot groups wanted attached */
	uint64_t last_detach_ns;	/* how long the last detach of the hot groups took */
	bool detach_reported;		/* ... and cuda_probes__detach_done() said so */
	struct detach_batch *detaching;	/* hot links being closed by a thread, NULL = none */
	uint32_t detach_waits;		/* hot attaches that waited for that thread */
	uint8_t insn[GT_API__COUNT];	/* 1 + enum uprobe_insn of each api's probed
					 * instruction, 0 = not probed */
	int range_fds[2];		/* -c nvtx: the agent's open and close (multi mode) */
	struct bpf_link *range_links[2];/* the same in per-probe mode */
	bool shed[GT_SW_APIS];		/* apis the budget moved to the window set */
	uint8_t gen[GT_SW_APIS];	/* the generation each api's probes record in now */
	struct probe_swap *swap;	/* a swap in progress, NULL = none */
	bool lookups_off;		/* the kernel lookups' probes dropped (cuda_probes__drop_lookups) */
	struct detach_batch *lookup_batch;/* ... their links being closed by a thread */
	uint64_t lookup_ns;		/* how long that took, once done */
	bool lookup_reported;		/* ... and cuda_probes__lookups_done() said so */
};

/* Links whose detach runs in a thread: closing a uprobe link waits for the
 * kernel's synchronization (measured at ~300 ms on the CI VM), which would
 * stall the consumer. What they cost stops once the gate in BPF is shut;
 * the thread only takes the traps away. */
struct detach_batch {
	pthread_t thread;
	int *fds;
	struct bpf_link **links;
	size_t nfds, nlinks;
	/* the first nret_fds fds and nret_links links are return probes,
	 * closed before the rest (probes__detach_batch) */
	size_t nret_fds, nret_links;
	uint64_t ns;			/* how long the detach took */
	bool done;			/* set by the thread when finished */
	unsigned delay_ms;		/* tests: GTRACE_TEST_DETACH_DELAY_MS, waited first */
};

/* cuda_probes.c */

/* The thread's body (run here when there is no thread): closes b's links,
 * sets b->ns and b->done. */
void *probes__detach_main(void *arg);
/* Attaches group g of file f (one uprobe_multi link, or one per probe).
 * Returns the probes attached. */
size_t probes__group_attach(struct cuda_probes *p, struct attached_file *f, struct probe_group *g);
/* Moves the links of the groups which picks into a batch closed by a
 * thread (returned); NULL when no thread could be started: they were closed
 * here, in *ns. */
struct detach_batch *probes__detach_batch(struct cuda_probes *p,
					  bool (*which)(const struct probe_group *), uint64_t *ns);
/* Waits for b's thread, frees b; returns how long its detach took. */
uint64_t probes__batch_join(struct detach_batch *b);
/* The per-launch kernel lookups (cuKernelGetFunction) whose probes serve
 * only names once the driver's function structures are known to give them. */
bool probes__lookup_api(unsigned api);
/* Closes g's links here and now. */
void probes__group_detach(struct cuda_probes *p, struct probe_group *g);
void probes__groups_free(struct probe_group *g, size_t n);
/* Sorts the probe points of f into groups by (program, side, hotness, shed
 * api) into *out; gen: the generation of each api's cookies. With keep, only
 * the probes keep says (the cold ones, the shed api's). */
int probes__make_groups(struct cuda_probes *p, const struct attached_file *f, const uint8_t *gen,
			bool (*keep)(const struct cuda_probes *, const struct probe *, void *), void *ctx,
			struct probe_group **out, size_t *nout);

#endif
