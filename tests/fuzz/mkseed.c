// SPDX-License-Identifier: MIT
/*
 * mkseed: seeds for the fuzz harnesses from recorded (or generated) traces.
 *
 *   mkseed OUTDIR TRACE...
 *
 * For each TRACE it writes OUTDIR/fuzz_{trace,stats,export,report,diff}/NAME (the file
 * as it is), NAME.killed (without its trailer, as a recorder killed with
 * SIGKILL leaves it), NAME.cut (cut in the middle of its last chunk) and
 * NAME.recipe (its first MAX_RECS records as a recipe, fuzz_common.h), and
 * OUTDIR/fuzz_spool/NAME.spool: a CUPTI spool whose GPU records answer the
 * trace's launches and copies, so that the merger links them, and
 * NAME.cut.spool, the same cut in the middle of its last record (an agent
 * killed while writing).
 */
#include <errno.h>
#include <sys/stat.h>
#include "fuzz_common.h"
#include "decode/decode.h"
#include "cupti/gtrace_cupti.h"

#define MAX_RECS 400
#define BUF_MAX (1 << 20)

static const char *const trace_harnesses[] = { "fuzz_trace", "fuzz_stats", "fuzz_export", "fuzz_report",
						"fuzz_diff" };

struct buf {
	uint8_t *p;	/* bytes */
	size_t n;	/* used */
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > BUF_MAX)
		return;		/* a seed need not be whole */
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static int save(const char *dir, const char *sub, const char *name, const struct buf *b)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	return fuzz_write_file(path, b->p, b->n) ? 0 : -EIO;
}

/* b's first n bytes as dir/sub/NAMESUFFIX. */
static int save_cut(const char *dir, const char *sub, const char *name, const char *suffix,
		    const struct buf *b, size_t n)
{
	char full[512];

	snprintf(full, sizeof(full), "%s%s", name, suffix);
	return save(dir, sub, full, &(struct buf){ b->p, n < b->n ? n : b->n });
}

/* Where, in a trace file's bytes, its last data chunk and its trailer
 * begin (0 when it has none), by docs/FORMAT.md: the header's length at
 * byte 12, then chunks of a 40-byte header (its kind at +4, 1 data and 2
 * the trailer, its compressed size at +8) and the frame. */
static void data_chunks(const struct buf *f, size_t *last, size_t *trailer)
{
	uint32_t hlen, csize;
	uint16_t kind;
	size_t off;

	*last = *trailer = 0;
	if (f->n < 16)
		return;
	memcpy(&hlen, f->p + 12, 4);
	for (off = hlen; off + 40 <= f->n; off += 40 + csize) {
		memcpy(&kind, f->p + off + 4, 2);
		memcpy(&csize, f->p + off + 8, 4);
		if (kind != 1) {
			if (kind == 2)
				*trailer = off;
			return;
		}
		*last = off;
	}
}

static void spool_answer(struct buf *sp, const struct gt_hdr *rec, uint32_t *corr)
{
	static _Alignas(8) uint8_t r[256];
	struct gt_gpu_api a = { .hdr = { .ts = rec->ts + 200, .pid = rec->pid, .tid = rec->tid,
					 .type = GT_REC_GPU_API, .size = sizeof(a) },
				.dur = 2000, .correlation = ++*corr };
	const char *kname = "_Z6vecAddPfS_S_i";

	put(sp, &a, sizeof(a));
	memset(r, 0, sizeof(r));
	if (rec->type == GT_REC_LAUNCH) {
		struct gt_gpu_kernel *k = (void *)r;
		size_t len = strlen(kname) + 1;

		k->hdr = (struct gt_hdr){ .ts = rec->ts + 5000, .pid = rec->pid,
					  .type = GT_REC_GPU_KERNEL,
					  .size = (sizeof(*k) + len + 7) & ~7u };
		k->dur = 10000;
		k->correlation = *corr;
		k->grid[0] = k->block[0] = 1;
		k->grid[1] = k->grid[2] = k->block[1] = k->block[2] = 1;
		k->len = len;
		memcpy(k->name, kname, len);
		put(sp, k, k->hdr.size);
	} else {
		struct gt_gpu_copy *c = (void *)r;

		c->hdr = (struct gt_hdr){ .ts = rec->ts + 5000, .pid = rec->pid,
					  .type = GT_REC_GPU_MEMCPY, .size = sizeof(*c) };
		c->dur = 3000;
		c->bytes = 4096;
		c->correlation = *corr;
		c->kind = 1;
		put(sp, c, sizeof(*c));
	}
}

static int one(const char *dir, const char *path)
{
	struct buf file = { malloc(BUF_MAX), 0 }, rcp = { malloc(BUF_MAX), 0 }, sp = { malloc(BUF_MAX), 0 };
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path, *why;
	const struct gt_file_info *info;
	const struct gt_hdr *rec;
	struct trace_reader *r;
	uint8_t head[FUZZ_RECIPE_HDR] = { FUZZ_FLAG_TRAILER };
	uint32_t corr = 0, nrec = 0;
	size_t last = 0, trailer = 0, last_rec = 0;
	char rname[512];
	FILE *f;
	int err = 0;

	if (!file.p || !rcp.p || !sp.p)
		return -ENOMEM;
	f = fopen(path, "r");
	if (!f) {
		err = -errno;
		goto out;
	}
	file.n = fread(file.p, 1, BUF_MAX, f);
	fclose(f);
	if (trace_reader__open(path, &r, &why)) {
		fprintf(stderr, "mkseed: failed to read %s: %s\n", path, why);
		err = -EINVAL;
		goto out;
	}
	info = trace_reader__info(r);
	memcpy(head + 1, &info->start_ts, 8);
	memcpy(head + 9, &info->realtime_offset_ns, 8);
	put(&rcp, head, sizeof(head));
	put(&sp, GT_CUPTI_MAGIC, GT_CUPTI_MAGIC_LEN);
	while (trace_reader__next(r, &rec) > 0) {
		if (nrec++ < MAX_RECS)
			put(&rcp, rec, rec->size);
		if (rec->type == GT_REC_LAUNCH ||
		    (rec->type == GT_REC_CALL && gt_api__class(rec->api) == GT_CLS_MEMCPY)) {
			last_rec = sp.n;
			spool_answer(&sp, rec, &corr);
		}
	}
	if (trace_reader__trailer(r))
		memcpy(rcp.p + 17, &trace_reader__trailer(r)->end_ts, 8);
	trace_reader__close(r);
	/* the damaged tails every reader must survive: no trailer, and the
	 * last data chunk cut short */
	data_chunks(&file, &last, &trailer);
	snprintf(rname, sizeof(rname), "%s.recipe", name);
	for (size_t i = 0; i < sizeof(trace_harnesses) / sizeof(trace_harnesses[0]) && !err; i++) {
		err = save(dir, trace_harnesses[i], name, &file);
		if (!err)
			err = save(dir, trace_harnesses[i], rname, &rcp);
		if (!err && trailer)
			err = save_cut(dir, trace_harnesses[i], name, ".killed", &file, trailer);
		if (!err && last)
			err = save_cut(dir, trace_harnesses[i], name, ".cut", &file,
				       last + (trailer ? trailer - last : file.n - last) / 2);
	}
	snprintf(rname, sizeof(rname), "%s.spool", name);
	if (!err)
		err = save(dir, "fuzz_spool", rname, &sp);
	snprintf(rname, sizeof(rname), "%s.cut.spool", name);
	if (!err && last_rec)
		err = save_cut(dir, "fuzz_spool", rname, "", &sp, last_rec + (sp.n - last_rec) / 2);
out:
	if (err)
		fprintf(stderr, "mkseed: failed to write the seeds of %s: %s\n", path, strerror(-err));
	free(file.p);
	free(rcp.p);
	free(sp.p);
	return err;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: mkseed OUTDIR TRACE...\n");
		return 2;
	}
	if (mkdir(argv[1], 0755) && errno != EEXIST) {
		fprintf(stderr, "mkseed: failed to create %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (int i = 2; i < argc; i++)
		if (one(argv[1], argv[i]))
			rc = 1;
	return rc;
}
