// SPDX-License-Identifier: MIT
/*
 * The merger's GPU-side inputs: the spool files of the CUPTI agent, listed
 * (a directory gives its *.spool in name order), mapped and indexed; and the
 * agent's records a trace of cupti=inline holds itself, kept by the first
 * pass and indexed as one more spool.  merge.c runs the merge.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/log.h"
#include "lib/vec.h"
#include "merge/merge_int.h"
#include "format/records.h"
#include "lib/cmp.h"

int mg__add_spool_file(struct merger *m, const char *path)
{
	char *p;

	if (m->nspools >= MAX_SPOOLS) {
		pr_err("too many spool files (at most %d)", MAX_SPOOLS);
		return -E2BIG;
	}
	p = strdup(path);
	if (!p || vec__reserve(&m->spools, &m->spools_cap, m->nspools, 1, VEC_MIN)) {
		free(p);
		pr_err("failed to list %s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	m->spools[m->nspools++] = (struct spool){ .path = p };
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.spool of a directory, in name order (a stable merge order). */
int mg__add_spool_dir(struct merger *m, const char *dir)
{
	size_t n = 0, cap = 0, i, sl = strlen(GT_CUPTI_SPOOL_SUFFIX);
	char **names = NULL, *path;
	struct dirent *de;
	int err = 0;
	DIR *d = opendir(dir);

	if (!d) {
		err = -errno;
		pr_err("cannot read %s: %s", dir, strerror(-err));
		return err;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *s;

		if (len <= sl || strcmp(de->d_name + len - sl, GT_CUPTI_SPOOL_SUFFIX))
			continue;
		s = strdup(de->d_name);
		if (!s || VEC_PUSH(names, n, cap, s)) {
			free(s);
			err = -ENOMEM;
			break;
		}
	}
	closedir(d);
	/* names is NULL in an empty directory, which qsort does not take */
	if (!err && n > 1)
		cmp__sort(names, n, sizeof(*names), name_cmp);
	if (err)
		pr_err("failed to list %s: %s", dir, strerror(-err));
	for (i = 0; i < n; i++) {
		if (!err) {
			if (asprintf(&path, "%s/%s", dir, names[i]) < 0) {
				err = -ENOMEM;
				pr_err("failed to list %s: %s", dir, strerror(-err));
			} else {
				err = mg__add_spool_file(m, path);
				free(path);
			}
		}
		free(names[i]);
	}
	free(names);
	return err;
}

/* Maps a spool file. Returns 0, 1 when it is left out (one warning line:
 * not a regular file, or not written by root or by us), or a negative
 * errno with one error line. */
static int map_spool(struct spool *s)
{
	const char *why = NULL;
	struct stat st;
	int fd, err = 0;

	/* a spool directory may be writable by the traced programs: no link
	 * is followed, and a FIFO does not block the merge */
	fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno == ELOOP) {
		pr_warn("%s: left out: it is a symbolic link", s->path);
		return 1;
	}
	if (fd < 0) {
		err = -errno;
		pr_err("cannot read %s: %s", s->path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		pr_err("cannot read %s: %s", s->path, strerror(-err));
	} else if (!S_ISREG(st.st_mode)) {
		why = "it is not a regular file";
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		/* the agents run as root under a root recorder: another
		 * user's file would put their records in our trace */
		why = "it is owned by another user";
	} else if (st.st_size > 0) {
		void *p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED) {
			err = -errno;
			pr_err("cannot read %s: %s", s->path, strerror(-err));
		} else {
			s->map = p;
			s->len = st.st_size;
		}
	}
	close(fd);
	if (why) {
		pr_warn("%s: left out: %s", s->path, why);
		return 1;
	}
	return err;
}

/* Takes one record of a spool into the index. */
static int index_spool_rec(struct merger *m, const struct gt_hdr *h, uint64_t loc)
{
	const struct gt_gpu_copy *cp = (const void *)h;
	const struct gt_gpu_kernel *k = (const void *)h;
	const struct gt_gpu_api *a = (const void *)h;
	struct merge_gpu g;

	/* types the agent does not write (BPF's, the merger's) would pass for
	 * eBPF records in a reader: left out */
	if (h->type < GT_REC_GPU_KERNEL || h->type == GT_REC_MERGE_STATS || h->type > GT_REC_MAX ||
	    !gt_rec__size_ok(h)) {
		m->res.spool_bad++;
		return 0;
	}
	if (m->o->want_pid && !m->o->want_pid(m->o->want_ctx, h->pid)) {
		m->res.spool_other_pids++;
		return 0;
	}
	/* the agent's flush marks say when what came before was handed over
	 * (a daemon reads them): nothing for a trace */
	if (h->type == GT_REC_CUPTI_MARK)
		return 0;
	m->res.spool_records++;
	switch (h->type) {
	case GT_REC_GPU_KERNEL:
	case GT_REC_GPU_MEMCPY:
	case GT_REC_GPU_MEMSET:
		g = (struct merge_gpu){
			.ts = h->ts, .loc = loc, .pid = h->pid, .type = h->type,
			.correlation = h->type == GT_REC_GPU_KERNEL ? k->correlation : cp->correlation,
			.flags = h->type == GT_REC_GPU_KERNEL ? k->flags : cp->flags,
			.call = MERGE_NO_CALL,
			.stream = h->type == GT_REC_GPU_KERNEL ? k->stream : cp->stream,
			.shape = h->type != GT_REC_GPU_KERNEL ? cp->bytes :
				 merge__shape_known(k->grid, k->block),
		};
		return VEC_PUSH(m->gpu, m->ngpu, m->gpu_cap, g);
	case GT_REC_GPU_API: {
		struct merge_api e = {
			.start = h->ts, .dur = a->dur, .loc = loc, .pid = h->pid, .tid = h->tid,
			.correlation = a->correlation,
		};

		return VEC_PUSH(m->apis, m->napis, m->apis_cap, e);
	}
	case GT_REC_CUPTI_STATS:
		return VEC_PUSH(m->stats, m->nstats, m->stats_cap, loc);
	case GT_REC_GPU_GRAPH_NODE: {
		const struct gt_gpu_graph_node *gn = (const void *)h;
		struct merge_node n = {
			.node = gn->node, .original = (gn->flags & GT_GRAPH_NODE_CLONED) ? gn->original : 0,
			.ts = h->ts, .pid = h->pid, .tid = h->tid, .call = MERGE_NO_CALL,
		};
		struct tail_ent t = { .ts = h->ts, .loc = loc };

		/* a clone of nothing known is no clone: left out of the chain */
		if ((gn->flags & GT_GRAPH_NODE_CLONED) && !gn->original)
			return VEC_PUSH(m->tail, m->ntail, m->tail_cap, t);
		/* indexed, and kept in the trace by time, as it came */
		return VEC_PUSH(m->nodes, m->nnodes, m->nodes_cap, n) ?:
		       VEC_PUSH(m->tail, m->ntail, m->tail_cap, t);
	}
	default: {
		/* NVTX, and later record types of the agent: by time after the trace */
		struct tail_ent t = { .ts = h->ts, .loc = loc };

		return VEC_PUSH(m->tail, m->ntail, m->tail_cap, t);
	}
	}
}

/* Indexes the records of spool fi from off on.  A record cut short at the
 * end (the process died while writing) or a damaged one ends the file: what
 * came before is kept, and one warning line says so. */
static int index_spool_recs(struct merger *m, size_t fi, uint64_t off)
{
	struct spool *s = &m->spools[fi];
	uint64_t nrec = 0;
	int err;

	if (s->len - 1 > LOC_OFF_MASK) {
		pr_err("%s is too large (%zu bytes)", s->path, s->len);
		return -EFBIG;
	}
	while (off < s->len) {
		const struct gt_hdr *h = (const void *)(s->map + off);
		size_t left = s->len - off;

		if (left < sizeof(*h) || h->size > left) {
			m->res.spool_cut++;
			pr_warn("%s: the last record is cut short (%zu bytes at offset %llu): the process "
				"ended while writing; merged the %llu records before it", s->path, left,
				(unsigned long long)off, (unsigned long long)nrec);
			return 0;
		}
		if (h->size < sizeof(*h) || h->size % 8) {
			m->res.spool_bad++;
			pr_warn("%s: damaged record at offset %llu (size %u); merged the %llu records "
				"before it", s->path, (unsigned long long)off, h->size,
				(unsigned long long)nrec);
			return 0;
		}
		err = index_spool_rec(m, h, (uint64_t)fi << LOC_OFF_BITS | off);
		if (err)
			return err;
		nrec++;
		off += h->size;
	}
	return 0;
}

/* Maps and indexes one spool file. */
int mg__index_spool(struct merger *m, size_t fi)
{
	struct spool *s = &m->spools[fi];
	int err;

	err = map_spool(s);
	if (err == 1) {
		m->res.spool_refused++;
		return 0;
	}
	if (err)
		return err;
	m->res.spool_files++;
	if (s->len < GT_CUPTI_MAGIC_LEN) {
		if (memcmp(s->map ? (const char *)s->map : "", GT_CUPTI_MAGIC, s->len)) {
			pr_err("%s is not a CUPTI spool file (bad magic)", s->path);
			return -EBADMSG;
		}
		m->res.spool_cut++;
		pr_warn("%s: cut short (%zu bytes, no records): the process ended as it started",
			s->path, s->len);
		return 0;
	}
	if (memcmp(s->map, GT_CUPTI_MAGIC, GT_CUPTI_MAGIC_LEN)) {
		pr_err("%s is not a CUPTI spool file (bad magic)", s->path);
		return -EBADMSG;
	}
	return index_spool_recs(m, fi, GT_CUPTI_MAGIC_LEN);
}

/* The agent's records (what a spool file holds), as a trace of cupti=inline
 * holds them too. */
bool mg__agent_rec(const struct gt_hdr *h)
{
	return (h->type >= GT_REC_GPU_KERNEL && h->type <= GT_REC_CUPTI_STATS) ||
	       h->type == GT_REC_CUPTI_MARK || h->type == GT_REC_GPU_GRAPH_NODE;
}

#define INL_CHUNK	(1u << 20)	/* the first pass' agent records go out in writes of this */

/* The file the first pass writes the trace's agent records to: unnamed, in
 * $TMPDIR (or /tmp), so that a long recording's GPU records are in the page
 * cache, not in the merger's memory; -1 where no such file can be made (the
 * records then stay in memory). */
static int inl_file(void)
{
	const char *tmp = getenv("TMPDIR");
	int fd = open(tmp && tmp[0] == '/' ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	return fd < 0 ? -1 : fd;
}

/* What the first pass holds of the agent records, out to the file. */
static int inl_spill(struct merger *m)
{
	const uint8_t *p = m->inl;
	size_t left = m->inl_len;

	while (left) {
		ssize_t n = write(m->inl_fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		left -= (size_t)n;
	}
	m->inl_spilled += m->inl_len;
	m->inl_len = 0;
	return 0;
}

/* First pass of a cupti=inline trace: one of its agent records, kept. */
int mg__keep_inline(struct merger *m, const struct gt_hdr *h)
{
	int err;

	if (!m->inl_cap && !m->inl_spilled)
		m->inl_fd = inl_file();
	if (m->inl_fd >= 0 && m->inl_len + h->size > INL_CHUNK && (err = inl_spill(m))) {
		pr_err("failed to write the GPU records of %s aside: %s", m->o->trace, strerror(-err));
		return err;
	}
	if (vec__reserve(&m->inl, &m->inl_cap, m->inl_len, h->size, INL_CHUNK))
		return -ENOMEM;
	memcpy(m->inl + m->inl_len, h, h->size);
	m->inl_len += h->size;
	m->res.inline_records++;
	return 0;
}

/* After the first pass: what mg__keep_inline kept, indexed as one more spool. */
int mg__index_inline(struct merger *m)
{
	char what[PATH_MAX + 32];
	struct spool *s;
	int err;

	if (!m->inl_len && !m->inl_spilled)
		return 0;
	snprintf(what, sizeof(what), "the GPU records of %s", m->o->trace);
	err = mg__add_spool_file(m, what);
	if (err)
		return err;
	s = &m->spools[m->nspools - 1];
	if (m->inl_fd >= 0) {
		void *p;

		if ((err = inl_spill(m))) {
			pr_err("failed to write the GPU records of %s aside: %s", m->o->trace, strerror(-err));
			return err;
		}
		p = mmap(NULL, m->inl_spilled, PROT_READ, MAP_PRIVATE, m->inl_fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			pr_err("failed to read the GPU records of %s back: %s", m->o->trace, strerror(-err));
			return err;
		}
		s->map = p;
		s->len = m->inl_spilled;
		free(m->inl);
	} else {
		s->map = m->inl;
		s->len = m->inl_len;
		s->owned = true;
	}
	m->inl = NULL;
	m->inl_len = m->inl_cap = 0;
	return index_spool_recs(m, m->nspools - 1, 0);
}
