/* SPDX-License-Identifier: MIT */
/* Finds libcuda files: in the usual install locations, in the mappings of
 * running processes (containers ship their own copy), and when a process
 * opens one; and libnccl files the same way, in mappings and opens (NCCL
 * ships inside frameworks: there are no usual locations). Every candidate
 * is handed to a callback that attaches to it (cuda_probes and nccl_probes
 * dedupe by device + inode; libcuda_finder__is_libnccl tells which). */
#ifndef GTRACE_LIBCUDA_FINDER_H
#define GTRACE_LIBCUDA_FINDER_H

#include <stdbool.h>
#include <sys/types.h>

/* path is openable by the recorder (through /proc/PID/root for other
 * mount namespaces); label is the path as the process sees it. */
typedef int (*libcuda_found_fn)(void *ctx, const char *path, const char *label);

/* True when the file name (last path component) is libcuda.so or libcuda.so.N... */
bool libcuda_finder__is_libcuda(const char *path);
/* The same for libnccl.so, libnccl.so.N... */
bool libcuda_finder__is_libnccl(const char *path);
/* The usual locations of the driver's libcuda. Returns the count offered. */
int libcuda_finder__scan_default(libcuda_found_fn fn, void *ctx);
/* Every libcuda and libnccl mapped by pid. Returns the count offered or
 * -errno (-ESRCH when the process is gone). */
int libcuda_finder__scan_pid(pid_t pid, libcuda_found_fn fn, void *ctx);
/* All processes. Returns the count offered. */
int libcuda_finder__scan_all(libcuda_found_fn fn, void *ctx);
/* The processes want() takes (want NULL: all). Returns the count offered. */
int libcuda_finder__scan_some(bool (*want)(void *wctx, pid_t pid), void *wctx, libcuda_found_fn fn, void *ctx);
/* A process opened path (relative to its cwd and root): offer it if it is a
 * libcuda or libnccl that exists. Returns 1 if offered, 0 if not. */
int libcuda_finder__on_open(pid_t pid, const char *path, libcuda_found_fn fn, void *ctx);

#endif
