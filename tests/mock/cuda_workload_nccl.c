// SPDX-License-Identifier: MIT
/*
 * cuda_workload's NCCL phase (--nccl, cuda_workload.c says what it does):
 * libnccl loaded with dlopen, the unique id shared through a file, the
 * rounds of collectives, each call counted.
 */
#include "cuda_workload.h"

/* ------------------------------------------------------------------ */
/* NCCL (--nccl)                                                        */

#define NC_APIS(X) \
	X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclAllReduce) X(ncclGroupStart) \
	X(ncclAllGather) X(ncclReduceScatter) X(ncclGroupEnd) X(ncclBroadcast) X(ncclReduce) \
	X(ncclSend) X(ncclRecv) X(ncclCommDestroy) X(ncclGetErrorString)

static struct {
#define NC_PTR(n) __typeof__(&n) n;
	NC_APIS(NC_PTR)
#undef NC_PTR
} nc;

enum nc_api {
#define NC_ENUM(n) NC_##n,
	NC_APIS(NC_ENUM)
#undef NC_ENUM
	NC__COUNT
};

static const char *const nc_names[NC__COUNT] = {
#define NC_NAME(n) #n,
	NC_APIS(NC_NAME)
#undef NC_NAME
};
static unsigned long nc_counts[NC__COUNT];

void nccl_load(void)
{
	const char *path = getenv("GT_LIBNCCL");
	void *h;

	if (!path || !*path)
		path = "libnccl.so.2";
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		die("cannot load %s: %s", path, dlerror());
#define NC_SYM(n) \
	*(void **)&nc.n = dlsym(h, #n); \
	if (!nc.n) \
		die("%s has no symbol %s", path, #n);
	NC_APIS(NC_SYM)
#undef NC_SYM
}

/* NC(): the NCCL call, counted, exiting on an error. */
#define NC(n, ...) do { \
		ncclResult_t r_ = nc.n(__VA_ARGS__); \
		nc_counts[NC_##n]++; \
		if (r_ != ncclSuccess) \
			die("%s failed: %s (%d)", #n, nc.ncclGetErrorString(r_), (int)r_); \
	} while (0)

long env_long(const char *name, long max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		die("invalid %s=%s", name, s);
	return v;
}

/* Rank 0 makes the id and puts it in place whole; the others wait for it. */
static void nccl_id(const char *file, long rank, ncclUniqueId *id)
{
	char tmp[4096];
	FILE *f;

	if (rank == 0) {
		NC(ncclGetUniqueId, id);
		snprintf(tmp, sizeof(tmp), "%s.%d", file, (int)getpid());
		f = fopen(tmp, "wxe");
		if (!f || fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) || rename(tmp, file))
			die("cannot write %s: %s", file, strerror(errno));
		return;
	}
	for (int i = 0; i < 30000; i++) {
		f = fopen(file, "re");
		if (f) {
			size_t n = fread(id, sizeof(*id), 1, f);

			fclose(f);
			if (n == 1)
				return;
		}
		usleep(1000);
	}
	die("no NCCL unique id in %s after 30 s", file);
}

void nccl_phase(const struct opts *o, long rank, long world, CUstream s, long *out_rank,
		       unsigned long long *out_comm)
{
	size_t n = (size_t)N_ELEMS;
	ncclUniqueId id;
	ncclComm_t comm;

	nccl_id(o->nccl_id, rank, &id);
	NC(ncclCommInitRank, &comm, (int)world, id, (int)rank);
	for (long i = 0; i < o->nccl; i++) {
		if (rank == o->late_rank && o->late_ms)
			usleep((useconds_t)o->late_ms * 1000);
		NC(ncclAllReduce, (void *)d_a[0], (void *)d_a[0], n, ncclFloat32, ncclSum, comm, s);
		NC(ncclGroupStart);
		NC(ncclAllGather, (void *)d_a[0], (void *)d_b[0], n / (size_t)world, ncclFloat32, comm, s);
		NC(ncclReduceScatter, (void *)d_b[0], (void *)d_c[0], n / (size_t)world, ncclFloat32,
		   ncclSum, comm, s);
		NC(ncclGroupEnd);
		NC(ncclBroadcast, (void *)d_c[0], (void *)d_c[0], n / 4, ncclBfloat16, 0, comm, s);
		NC(ncclReduce, (void *)d_a[0], (void *)d_b[0], n / 4, ncclFloat32, ncclMax, 0, comm, s);
		NC(ncclGroupStart);
		NC(ncclSend, (void *)d_a[0], n / 8, ncclFloat32, (int)((rank + 1) % world), comm, s);
		NC(ncclRecv, (void *)d_b[0], n / 8, ncclFloat32, (int)((rank + world - 1) % world), comm, s);
		NC(ncclGroupEnd);
	}
	NC(ncclCommDestroy, comm);
	*out_rank = rank;
	*out_comm = (unsigned long long)(uintptr_t)comm;
}

void nccl_print_calls(void)
{
	bool first = true;

	putchar('{');
	for (int k = 0; k < NC__COUNT; k++) {
		if (!nc_counts[k])
			continue;
		printf("%s\"%s\":%lu", first ? "" : ",", nc_names[k], nc_counts[k]);
		first = false;
	}
	putchar('}');
}
