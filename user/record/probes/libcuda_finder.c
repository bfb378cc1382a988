// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "record/probes/libcuda_finder.h"

/* The file name is NAME.so or NAME.so.<anything>, name being 10 bytes. */
static bool is_lib(const char *path, const char *name)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, name, 10) == 0 && (base[10] == 0 || base[10] == '.');
}

bool libcuda_finder__is_libcuda(const char *path)
{
	return is_lib(path, "libcuda.so");
}

bool libcuda_finder__is_libnccl(const char *path)
{
	return is_lib(path, "libnccl.so");
}

static bool wanted(const char *path)
{
	return libcuda_finder__is_libcuda(path) || libcuda_finder__is_libnccl(path);
}

/* Where drivers install libcuda. Stub libraries of the toolkit (…/stubs/)
 * are link-time only and never loaded, so they are not listed. */
static const char *const default_paths[] = {
	"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
	"/usr/lib64/libcuda.so.1",
	"/usr/lib/libcuda.so.1",
	"/usr/local/nvidia/lib64/libcuda.so.1",
	"/usr/local/nvidia/lib/libcuda.so.1",
	"/usr/lib/wsl/lib/libcuda.so.1",
	"/run/opengl-driver/lib/libcuda.so.1",
};

int libcuda_finder__scan_default(libcuda_found_fn fn, void *ctx)
{
	char real[PATH_MAX];
	int n = 0;
	size_t i;

	for (i = 0; i < sizeof(default_paths) / sizeof(default_paths[0]); i++) {
		if (!realpath(default_paths[i], real))
			continue;
		fn(ctx, real, default_paths[i]);
		n++;
	}
	return n;
}

int libcuda_finder__scan_pid(pid_t pid, libcuda_found_fn fn, void *ctx)
{
	char mp[64], line[PATH_MAX + 256], path[PATH_MAX + 64];
	int n = 0, err;
	FILE *f;

	snprintf(mp, sizeof(mp), "/proc/%d/maps", pid);
	f = fopen(mp, "re");
	if (!f) {
		err = -errno;
		return err == -ENOENT ? -ESRCH : err;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *nl;

		if (!p || (!strstr(p, "libcuda.so") && !strstr(p, "libnccl.so")))
			continue;
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		/* a file replaced on disk (driver upgrade) cannot be probed by path */
		if (strstr(p, " (deleted)") || !wanted(p))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, p);
		if (fn(ctx, path, p) >= 0)
			n++;
	}
	fclose(f);
	return n;
}

int libcuda_finder__scan_all(libcuda_found_fn fn, void *ctx)
{
	return libcuda_finder__scan_some(NULL, NULL, fn, ctx);
}

int libcuda_finder__scan_some(bool (*want)(void *wctx, pid_t pid), void *wctx, libcuda_found_fn fn, void *ctx)
{
	struct dirent *de;
	int n = 0, r;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (want && !want(wctx, atoi(de->d_name)))
			continue;
		r = libcuda_finder__scan_pid(atoi(de->d_name), fn, ctx);
		if (r > 0)
			n += r;
	}
	closedir(d);
	return n;
}

int libcuda_finder__on_open(pid_t pid, const char *path, libcuda_found_fn fn, void *ctx)
{
	char full[PATH_MAX + 64];

	if (!wanted(path))
		return 0;
	if (path[0] == '/')
		snprintf(full, sizeof(full), "/proc/%d/root%s", pid, path);
	else
		snprintf(full, sizeof(full), "/proc/%d/cwd/%s", pid, path);
	if (access(full, R_OK))
		return 0;	/* a failed open along the library search path */
	return fn(ctx, full, path) >= 0;
}
