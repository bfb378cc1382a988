// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/clock.h"
#include "cuda.skel.h"
#include "record/probes/cuda_probes_int.h"
#include "record/probes/elf_syms.h"
#include "format/api.h"
#include "lib/log.h"
#include "lib/vec.h"

/* The probed symbols are apis 1..NAPI of the table; probe i is api i + 1. */
#define NAPI ((size_t)GT_API__COUNT - 1)

_Static_assert(GT_API__COUNT <= GT_SW_APIS, "api_state holds every api");

/* Closes link fds, each in a thread of its own: a uprobe link's close waits
 * for the kernel's synchronization (tens of ms on the CI VM), and waits
 * that run together share it; one after the other they were ~300 ms of
 * every recording's end. Where a thread cannot start, its fd is closed
 * here. */
#define CLOSE_THREADS_MAX 64

static void *close_main(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

static void close_together(const int *fds, size_t n)
{
	pthread_t th[CLOSE_THREADS_MAX];
	bool started[CLOSE_THREADS_MAX];
	size_t i, k = 0;

	while (k < n) {
		size_t m = n - k < CLOSE_THREADS_MAX ? n - k : CLOSE_THREADS_MAX;

		for (i = 0; i < m; i++) {
			started[i] = !pthread_create(&th[i], NULL, close_main, (void *)(intptr_t)fds[k + i]);
			if (!started[i])
				close(fds[k + i]);
		}
		for (i = 0; i < m; i++) {
			if (started[i])
				pthread_join(th[i], NULL);
		}
		k += m;
	}
}

void *probes__detach_main(void *arg)
{
	struct detach_batch *b = arg;
	uint64_t t0 = clock__mono_ns();
	size_t i;

	if (b->delay_ms)	/* tests: a detach as slow as a loaded machine's */
		usleep(b->delay_ms * 1000);
	/* the return probes first, then the entries: a call can meet an exit
	 * program only while its entry program is attached too (one that
	 * met the exit alone would be recorded without its entry) */
	close_together(b->fds, b->nret_fds);
	for (i = 0; i < b->nret_links; i++)
		bpf_link__destroy(b->links[i]);
	close_together(b->fds + b->nret_fds, b->nfds - b->nret_fds);
	for (i = b->nret_links; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	b->ns = clock__mono_ns() - t0;
	__atomic_store_n(&b->done, true, __ATOMIC_RELEASE);
	return NULL;
}

uint64_t probes__batch_join(struct detach_batch *b)
{
	uint64_t ns;

	pthread_join(b->thread, NULL);
	ns = b->ns;
	free(b->fds);
	free(b->links);
	free(b);
	return ns;
}

struct cuda_probes *cuda_probes__new(struct cuda_bpf *skel, const struct cuda_probes_opts *opts)
{
	struct cuda_probes *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->skel = skel;
	if (opts)
		p->opts = *opts;
	p->hot = !p->opts.hot_detached;
	p->range_fds[0] = p->range_fds[1] = -1;
	p->detach_reported = true;
	return p;
}

static struct bpf_program *entry_prog(struct cuda_bpf *s, int prog)
{
	switch (prog) {
	case GT_P_LAUNCH: return s->progs.launch_entry;
	case GT_P_LAUNCH_EX: return s->progs.launch_ex_entry;
	case GT_P_CALL_STR: return s->progs.call_str_entry;
	case GT_P_MEMCPY2D: return s->progs.memcpy2d_entry;
	case GT_P_MEMCPY3D: return s->progs.memcpy3d_entry;
	default: return s->progs.call_entry;
	}
}

bool cuda_probes__has_file(const struct cuda_probes *p, const char *path)
{
	struct stat st;
	size_t i;

	if (stat(path, &st))
		return false;
	for (i = 0; i < p->nfiles; i++) {
		if (p->files[i].dev == st.st_dev && p->files[i].ino == st.st_ino)
			return true;
	}
	return false;
}

/* The uprobe_multi link (kernel 6.6+) is created with the raw syscall:
 * the libbpf of Debian 12 predates it. Field offsets of union bpf_attr's
 * link_create as in the kernel's uapi. */
#define GT_BPF_LINK_CREATE		28
#define GT_BPF_TRACE_UPROBE_MULTI	48
#define GT_BPF_F_UPROBE_MULTI_RETURN	1

int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offs,
			 const uint64_t *cookies, uint32_t cnt, bool ret)
{
	union {
		uint8_t b[64];
		struct {
			uint32_t prog_fd, target_fd, attach_type, flags;
			uint64_t path, offsets, ref_ctr_offsets, cookies;
			uint32_t cnt, um_flags, pid, _pad;
		} f;
	} attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.f.prog_fd = prog_fd;
	attr.f.attach_type = GT_BPF_TRACE_UPROBE_MULTI;
	attr.f.path = (uintptr_t)path;
	attr.f.offsets = (uintptr_t)offs;
	attr.f.cookies = (uintptr_t)cookies;
	attr.f.cnt = cnt;
	attr.f.um_flags = ret ? GT_BPF_F_UPROBE_MULTI_RETURN : 0;
	fd = syscall(__NR_bpf, GT_BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

void uprobe_multi__prepare(struct bpf_program *prog, bool multi)
{
	bpf_program__set_expected_attach_type(prog, multi ? GT_BPF_TRACE_UPROBE_MULTI : 0);
}

static void fd_path(const struct attached_file *f, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", f->path_fd);
}

/* Attaches group g of file f: one uprobe_multi link with all its offsets
 * (detaching then costs one synchronization, not one per probe: with
 * per-probe links, detaching ~270 probes took about a minute), or one link
 * per probe. Returns the probes attached. */
size_t probes__group_attach(struct cuda_probes *p, struct attached_file *f, struct probe_group *g)
{
	char path[64];
	size_t i;

	if (g->nlive)
		return 0;
	fd_path(f, path, sizeof(path));
	if (p->opts.multi) {
		int fd = uprobe_multi__attach(bpf_program__fd(g->prog), path, g->offs, g->cookies,
					      g->n, g->ret);

		if (fd < 0) {
			p->nfailed += g->n;
			pr_verbose("failed to attach %zu %s to %s for %s: %s", g->n,
				   g->ret ? "uretprobes" : "uprobes", f->label,
				   bpf_program__name(g->prog), strerror(-fd));
			return 0;
		}
		g->fd = fd;
		g->nlive = g->n;
	} else {
		for (i = 0; i < g->n; i++) {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = g->cookies[i], .retprobe = g->ret);

			/* pid -1: a uprobe on a file applies to every process
			 * mapping it; the pid filter, when asked for, is in BPF */
			g->links[i] = bpf_program__attach_uprobe_opts(g->prog, -1, path, g->offs[i], &o);
			if (!g->links[i]) {
				p->nfailed++;
				pr_verbose("failed to attach %s at 0x%llx of %s: %s",
					   bpf_program__name(g->prog), (unsigned long long)g->offs[i],
					   f->label, strerror(errno));
				continue;
			}
			g->nlive++;
		}
	}
	p->nprobes += g->nlive;
	return g->nlive;
}

void probes__group_detach(struct cuda_probes *p, struct probe_group *g)
{
	size_t i;

	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	for (i = 0; g->links && i < g->n; i++) {
		bpf_link__destroy(g->links[i]);
		g->links[i] = NULL;
	}
	p->nprobes -= g->nlive;
	g->nlive = 0;
}

static void detach_file(struct cuda_probes *p, struct attached_file *f)
{
	size_t i;

	for (i = 0; i < f->ngroups; i++) {
		probes__group_detach(p, &f->groups[i]);
		free(f->groups[i].offs);
		free(f->groups[i].cookies);
		free(f->groups[i].links);
	}
	free(f->groups);
	free(f->pr);
	if (f->path_fd >= 0)
		close(f->path_fd);
	free(f->label);
}

/* Where a probe of api goes now: its group's hotness and shed api. */
static bool probe_hot(const struct cuda_probes *p, unsigned api, uint16_t *shed_api)
{
	*shed_api = p->shed[api] ? (uint16_t)api : 0;
	return gt_api__hot(api) || p->shed[api];
}

/* The cookie of a probe as attached now: its call's hotness, and with the
 * budget's swaps (opts.swap) the SWAP bit and the api's generation gen. */
static uint64_t probe_cookie(const struct cuda_probes *p, const struct probe *pr, unsigned gen)
{
	uint64_t c = pr->cookie;

	if (gt_api__hot(pr->api) || p->shed[pr->api])
		c |= GT_COOKIE_HOT;
	if (p->opts.swap && !gt_api__hot(pr->api))
		c |= GT_COOKIE_SWAP | (gen ? GT_COOKIE_GEN : 0);
	return c;
}

void probes__groups_free(struct probe_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(g[i].offs);
		free(g[i].cookies);
		free(g[i].links);
	}
	free(g);
}

int probes__make_groups(struct cuda_probes *p, const struct attached_file *f, const uint8_t *gen,
			bool (*keep)(const struct cuda_probes *, const struct probe *, void *), void *ctx,
			struct probe_group **out, size_t *nout)
{
	struct probe_group *groups = calloc(f->npr + 1, sizeof(*groups));
	size_t i, j, ng = 0;

	if (!groups)
		return -ENOMEM;
	for (i = 0; i < f->npr; i++) {
		const struct probe *pr = &f->pr[i];
		struct probe_group *g = NULL;
		uint16_t shed_api;
		bool hot = probe_hot(p, pr->api, &shed_api), lookup = probes__lookup_api(pr->api);

		if (keep && !keep(p, pr, ctx))
			continue;
		if (lookup && p->lookups_off)
			continue;
		for (j = 0; j < ng && !g; j++) {
			if (groups[j].prog == pr->prog && groups[j].ret == pr->ret && groups[j].hot == hot &&
			    groups[j].shed_api == shed_api && groups[j].lookup == lookup)
				g = &groups[j];
		}
		if (!g) {
			g = &groups[ng++];
			*g = (struct probe_group){ .prog = pr->prog, .ret = pr->ret, .hot = hot,
						   .shed_api = shed_api, .lookup = lookup, .fd = -1 };
			g->offs = calloc(f->npr, sizeof(*g->offs));
			g->cookies = calloc(f->npr, sizeof(*g->cookies));
			g->links = p->opts.multi ? NULL : calloc(f->npr, sizeof(*g->links));
			if (!g->offs || !g->cookies || (!p->opts.multi && !g->links)) {
				probes__groups_free(groups, ng);
				return -ENOMEM;
			}
		}
		g->offs[g->n] = pr->off;
		g->cookies[g->n++] = probe_cookie(p, pr, gen[pr->api]);
	}
	*out = groups;
	*nout = ng;
	return 0;
}

/* --stacks sync: the calls a host waits in or that change memory and
 * modules (never the hot ones: launches, async copies, records, queries). */
static bool stack_class(unsigned api, const struct gt_api_info *d)
{
	if (gt_api__hot(api))
		return false;
	switch (d->cls) {
	case GT_CLS_SYNC: case GT_CLS_ALLOC: case GT_CLS_FREE: case GT_CLS_MODULE_LOAD:
		return true;
	case GT_CLS_MEMCPY: case GT_CLS_MEMCPY2D: case GT_CLS_MEMCPY3D: case GT_CLS_MEMSET:
		return d->d == GT_NA;	/* no stream: blocking */
	default:
		return false;
	}
}

/* The cookie of api i: what the BPF side needs to know of the call. */
static uint64_t api_cookie(const struct cuda_probes *p, unsigned api, bool *entry_only)
{
	const struct gt_api_info *d = gt_api__info(api);
	uint64_t cookie = GT_COOKIE_MAKE(api, d->out, d->str, d->d);

	if (d->cls == GT_CLS_LAUNCH && d->kind == 1)	/* a cooperative launch */
		cookie |= GT_COOKIE_COOP;
	*entry_only = !p->opts.launch_exit && (d->prog == GT_P_LAUNCH || d->prog == GT_P_LAUNCH_EX);
	if (*entry_only)
		cookie |= GT_COOKIE_NOEXIT;
	if (p->opts.profiler_ranges && api == GT_API_cuProfilerStart)
		cookie |= GT_COOKIE_RANGE_OPEN;
	if (p->opts.profiler_ranges && api == GT_API_cuProfilerStop)
		cookie |= GT_COOKIE_RANGE_CLOSE;
	if (p->opts.stacks_sync && stack_class(api, d))
		cookie |= GT_COOKIE_STACK;
	if (p->opts.stacks_all)
		cookie |= GT_COOKIE_STACK | (gt_api__hot(api) ? GT_COOKIE_STACK_CACHE : 0);
	if (p->opts.stacks_sync || p->opts.stacks_all)
		cookie |= GT_COOKIE_STACK_FAIL;
	return cookie;
}

int cuda_probes__attach_file(struct cuda_probes *p, const char *path, const char *label)
{
	const char *names[NAPI];
	uint64_t offs[NAPI];
	struct probe *pr = calloc(2 * NAPI, sizeof(*pr));
	struct attached_file f = { .path_fd = -1, .pr = pr };
	struct stat st;
	size_t i, j, n = 0, live = 0, failed = p->nfailed, tried = 0;
	uint64_t t0 = clock__mono_ns();
	char fdp[64];
	int found, err;

	if (!pr)
		return -ENOMEM;
	if (cuda_probes__has_file(p, path)) {
		free(pr);
		return 0;
	}
	f.path_fd = open(path, O_PATH | O_CLOEXEC);
	if (f.path_fd < 0 || fstat(f.path_fd, &st)) {
		err = -errno;
		goto fail;
	}
	f.dev = st.st_dev;
	f.ino = st.st_ino;
	f.label = strdup(label ? label : path);
	if (!f.label) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < NAPI; i++)
		names[i] = gt_api__name(i + 1);
	fd_path(&f, fdp, sizeof(fdp));
	found = elf_syms__resolve(fdp, names, NAPI, offs);
	if (found <= 0) {
		err = found ? found : -ENOEXEC;
		goto fail;
	}
	/* for the overhead budget: what a hit of each probe costs */
	{
		uint8_t cls[NAPI];

		memset(cls, 0xff, sizeof(cls));
		elf_syms__insn_classes(fdp, offs, NAPI, cls);
		for (i = 0; i < NAPI; i++)
			if (cls[i] != 0xff)
				p->insn[i + 1] = cls[i] + 1;
	}
	for (i = 0; i < NAPI; i++) {
		const struct gt_api_info *d = gt_api__info(i + 1);
		bool alias = false, entry_only;
		uint64_t cookie;

		if (!offs[i]) {
			pr_debug("%s: no %s", f.label, d->name);
			continue;
		}
		/* two names at one address would report each call twice */
		for (j = 0; j < i; j++)
			alias |= offs[j] == offs[i];
		if (alias) {
			pr_verbose("%s: %s is an alias of an earlier symbol, not probed", f.label, d->name);
			continue;
		}
		cookie = api_cookie(p, i + 1, &entry_only);
		pr[n++] = (struct probe){ entry_prog(p->skel, d->prog), false, offs[i], cookie, i + 1 };
		if (d->ret == GT_R_NONE || entry_only)
			continue;
		pr[n++] = (struct probe){ d->ret == GT_R_RET_STR ? p->skel->progs.call_exit_str :
					  p->skel->progs.call_exit, true, offs[i], cookie, i + 1 };
	}
	f.npr = n;
	/* a swap in progress: the committed generations, and the file's own
	 * swap at the commit (cuda_probes__swap_commit) */
	err = probes__make_groups(p, &f, p->gen, NULL, NULL, &f.groups, &f.ngroups);
	if (err)
		goto fail;
	for (i = 0; i < f.ngroups; i++) {
		if (!f.groups[i].hot || p->hot) {
			tried += f.groups[i].n;
			live += probes__group_attach(p, &f, &f.groups[i]);
		}
	}
	if (!live) {
		err = -ENOEXEC;
		goto fail;
	}
	if (p->nfailed > failed)
		pr_warn("%zu of %zu probes could not be attached to %s: those calls are not recorded "
			"(-v tells which)", p->nfailed - failed, tried, f.label);
	if (vec__reserve(&p->files, &p->files_cap, p->nfiles, 1, 4)) {
		err = -ENOMEM;
		goto fail;
	}
	p->files[p->nfiles++] = f;
	pr_verbose("attached %zu probes to %s in %.2f ms (%d of %zu symbols present%s)", live, f.label,
		   (clock__mono_ns() - t0) / 1e6, found, NAPI,
		   p->hot ? "" : "; hot calls detached until a window or range");
	return live;
fail:
	detach_file(p, &f);
	return err;
}

/* The hot links' detach thread joined: its time kept to be reported. */
static void join_detach(struct cuda_probes *p)
{
	p->last_detach_ns = probes__batch_join(p->detaching);
	p->detaching = NULL;
	p->detach_reported = false;
}

/* A test's slow detach (GTRACE_TEST_DETACH_DELAY_MS): what a loaded
 * machine's kernel synchronization takes, on demand. */
static unsigned test_detach_delay_ms(void)
{
	const char *s = getenv("GTRACE_TEST_DETACH_DELAY_MS");

	return s ? (unsigned)strtoul(s, NULL, 10) : 0;
}

static bool group_hot(const struct probe_group *g)
{
	return g->hot;
}

/* Moves g's links into b, or without b closes them here. */
static void batch_take(struct cuda_probes *p, struct detach_batch *b, struct probe_group *g)
{
	size_t k;

	if (!b || !b->fds || !b->links) {
		probes__group_detach(p, g);
		return;
	}
	if (g->fd >= 0)
		b->fds[b->nfds++] = g->fd;
	for (k = 0; g->links && k < g->n; k++)
		if (g->links[k])
			b->links[b->nlinks++] = g->links[k];
	g->fd = -1;
	for (k = 0; g->links && k < g->n; k++)
		g->links[k] = NULL;
	p->nprobes -= g->nlive;
	g->nlive = 0;
}

struct detach_batch *probes__detach_batch(struct cuda_probes *p,
					  bool (*which)(const struct probe_group *), uint64_t *ns)
{
	struct detach_batch *b;
	size_t i, j, n = 0;
	int ret;

	*ns = 0;
	for (i = 0; i < p->nfiles; i++)
		for (j = 0; j < p->files[i].ngroups; j++)
			if (which(&p->files[i].groups[j]))
				n += p->files[i].groups[j].n;
	b = calloc(1, sizeof(*b));
	if (b) {
		b->fds = calloc(n + 1, sizeof(*b->fds));
		b->links = calloc(n + 1, sizeof(*b->links));
		b->delay_ms = test_detach_delay_ms();
	}
	/* the return probes' links first (probes__detach_main closes them
	 * before the entries'; without a batch they are closed here first) */
	for (ret = 1; ret >= 0; ret--) {
		for (i = 0; i < p->nfiles; i++) {
			for (j = 0; j < p->files[i].ngroups; j++) {
				struct probe_group *g = &p->files[i].groups[j];

				if (which(g) && g->ret == ret)
					batch_take(p, b, g);
			}
		}
		if (ret && b) {
			b->nret_fds = b->nfds;
			b->nret_links = b->nlinks;
		}
	}
	if (!b || !b->fds || !b->links || pthread_create(&b->thread, NULL, probes__detach_main, b)) {
		if (b && b->fds && b->links) {
			uint64_t t0 = clock__mono_ns();

			probes__detach_main(b);
			*ns = clock__mono_ns() - t0;
		}
		if (b) {
			free(b->fds);
			free(b->links);
			free(b);
		}
		return NULL;
	}
	return b;
}

/* Moves the links of the detached hot groups into a batch closed by a
 * thread; without a thread they are closed here. */
static int detach_hot(struct cuda_probes *p)
{
	uint64_t ns;

	if (p->detaching)
		join_detach(p);
	p->detaching = probes__detach_batch(p, group_hot, &ns);
	if (!p->detaching) {
		p->last_detach_ns = ns;
		p->detach_reported = false;
	}
	return 0;
}

int cuda_probes__set_hot(struct cuda_probes *p, bool on)
{
	size_t i, j, want = 0, live = 0;

	p->hot = on;
	if (!on)
		return detach_hot(p);
	/* the last window's links gone first: while they were still attached
	 * beside the new ones, each hot call would be recorded by both (their
	 * detach can outlast the gap between windows: a loaded machine) */
	if (p->detaching) {
		uint64_t t0 = clock__mono_ns();

		join_detach(p);
		p->detach_waits++;
		pr_verbose("the hot probes waited %.2f ms for the last window's detach",
			   (clock__mono_ns() - t0) / 1e6);
	}
	/* the entries first, then the return probes (probes__detach_main) */
	for (int ret = 0; ret <= 1; ret++) {
		for (i = 0; i < p->nfiles; i++) {
			struct attached_file *f = &p->files[i];

			for (j = 0; j < f->ngroups; j++) {
				struct probe_group *g = &f->groups[j];

				if (!g->hot || g->ret != ret)
					continue;
				want += g->n;
				live += probes__group_attach(p, f, g);
			}
		}
	}
	return live < want ? -EIO : 0;
}

bool cuda_probes__detach_done(struct cuda_probes *p, bool wait, uint64_t *ns)
{
	if (p->detaching && (wait || __atomic_load_n(&p->detaching->done, __ATOMIC_ACQUIRE)))
		join_detach(p);
	if (p->detaching || p->detach_reported)
		return false;
	p->detach_reported = true;
	*ns = p->last_detach_ns;
	return true;
}

static void range_link_free(struct cuda_probes *p, int i)
{
	if (p->range_fds[i] >= 0)
		close(p->range_fds[i]);
	bpf_link__destroy(p->range_links[i]);
}

int cuda_probes__attach_ranges(struct cuda_probes *p, const char *path, uint32_t source)
{
	static const char *const names[2] = { "gtrace_capture_open", "gtrace_capture_close" };
	struct bpf_program *progs[2] = { p->skel->progs.range_open_entry, p->skel->progs.range_close_entry };
	uint64_t offs[2];
	int found = elf_syms__resolve(path, names, 2, offs), i;

	if (found < 0)
		return found;
	if (!offs[0] || !offs[1])
		return -ENOEXEC;
	for (i = 0; i < 2; i++) {
		uint64_t cookie = source;
		int fd;

		if (p->opts.multi) {
			fd = uprobe_multi__attach(bpf_program__fd(progs[i]), path, &offs[i], &cookie, 1, false);
			if (fd < 0)
				return fd;
			p->range_fds[i] = fd;
		} else {
			LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = cookie);

			p->range_links[i] = bpf_program__attach_uprobe_opts(progs[i], -1, path, offs[i], &o);
			if (!p->range_links[i])
				return -errno;
		}
	}
	return 0;
}

int cuda_probes__insn_class(const struct cuda_probes *p, unsigned api)
{
	return api < GT_API__COUNT ? (int)p->insn[api] - 1 : -1;
}

size_t cuda_probes__nfiles(const struct cuda_probes *p) { return p->nfiles; }
size_t cuda_probes__nprobes(const struct cuda_probes *p) { return p->nprobes; }
size_t cuda_probes__nfailed(const struct cuda_probes *p) { return p->nfailed; }
uint32_t cuda_probes__detach_waits(const struct cuda_probes *p) { return p->detach_waits; }

const char *cuda_probes__file_label(const struct cuda_probes *p, size_t i)
{
	return i < p->nfiles ? p->files[i].label : NULL;
}

/* The multi-mode links of every file, closed together (close_together);
 * their groups then hold none. */
static void close_links(struct cuda_probes *p)
{
	size_t i, j, n = 0;
	int *fds;

	for (i = 0; i < p->nfiles; i++)
		for (j = 0; j < p->files[i].ngroups; j++)
			n += p->files[i].groups[j].fd >= 0;
	if (n < 2 || !(fds = malloc(n * sizeof(*fds))))
		return;		/* detach_file closes them one by one */
	n = 0;
	for (i = 0; i < p->nfiles; i++) {
		for (j = 0; j < p->files[i].ngroups; j++) {
			struct probe_group *g = &p->files[i].groups[j];

			if (g->fd < 0)
				continue;
			fds[n++] = g->fd;
			g->fd = -1;
			p->nprobes -= g->nlive;
			g->nlive = 0;
		}
	}
	close_together(fds, n);
	free(fds);
}

void cuda_probes__free(struct cuda_probes *p)
{
	uint64_t t0 = clock__mono_ns();
	size_t i, n;

	if (!p)
		return;
	n = p->nprobes;
	if (p->detaching)
		probes__batch_join(p->detaching);
	if (p->lookup_batch)
		probes__batch_join(p->lookup_batch);
	if (p->swap) {
		uint64_t ns;

		if (!p->swap->closing)
			cuda_probes__swap_commit(p);
		cuda_probes__swap_done(p, true, &ns);
	}
	close_links(p);
	for (i = 0; i < p->nfiles; i++)
		detach_file(p, &p->files[i]);
	if (p->nfiles)
		pr_verbose("detached %zu probes in %.2f ms", n, (clock__mono_ns() - t0) / 1e6);
	for (i = 0; i < 2; i++)
		range_link_free(p, i);
	free(p->files);
	free(p);
}

void cuda_probes__prepare_multi(struct cuda_bpf *s, bool multi)
{
	struct bpf_program *progs[] = {
		s->progs.call_entry, s->progs.launch_entry, s->progs.launch_ex_entry,
		s->progs.call_str_entry, s->progs.memcpy2d_entry, s->progs.memcpy3d_entry,
		s->progs.call_exit, s->progs.call_exit_str, s->progs.range_open_entry,
		s->progs.range_close_entry,
	};
	size_t i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		uprobe_multi__prepare(progs[i], multi);
}
