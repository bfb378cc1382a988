/* SPDX-License-Identifier: MIT */
/*
 * Loading a library into a running process (x86-64): the first part of
 * attaching the CUPTI agent to a job that was not started with it.
 *
 * A thread of the process (the main thread when it can) is stopped with
 * ptrace at a system call (one in which it waits, not one of the memory
 * calls malloc makes with its lock held, and not inside the CUDA driver,
 * CUPTI or the agent), the library is copied into a memfd the process creates, dlopen of
 * /proc/self/fd/N runs in the thread as a call of its own, and every
 * register is put back, the interrupted call restarted: the program goes
 * on where it was. Nothing is left in the process but the library's
 * mapping; the memfd is closed again.
 *
 * Refused, with one line saying why and nothing done, where that is unsafe
 * or impossible: Yama's ptrace_scope 3, a process already traced, a static
 * or setuid program, a libc without dlopen, another architecture.
 */
#ifndef GTRACE_INJECT_H
#define GTRACE_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGKILL, SIGTERM by name, any
 * other as "a signal". */
const char *inject__signal_name(int sig);
/* Whether sig is a crash's: SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT. */
bool inject__fault_signal(int sig);

/* 0 when pid can take a library now; else -errno and why (one line). */
int inject__check(pid_t pid, char *why, size_t len);
/* For the unit tests (Yama's ptrace_scope 3 cannot be set back without a
 * reboot): the file read as kernel.yama.ptrace_scope; NULL: the kernel's. */
void inject__set_yama_path(const char *path);

/* Loads the library at path (a file of ours, read here) into pid: waits at
 * most wait_ms for its main thread to reach a system call and as long for
 * dlopen to return. 0 and the handle dlopen gave in *handle; -errno and
 * why (one line) when nothing was loaded. The process is left running in
 * every case but one: -EOWNERDEAD, it died under the call (a fault in the
 * library or in what it called, or another thread's; why says which
 * signal, and for a fault of the held thread the file and offset of the
 * instruction and the address it touched). */
int inject__dlopen(pid_t pid, const char *path, unsigned wait_ms, uint64_t *handle, char *why,
		   size_t len);

/* The same, then fn_name(arg) of the library (arg a string, NULL: a null
 * pointer), its return value in *fn_ret (may be NULL): how a library is
 * started in a process that has no other way to call it. The name and the
 * argument: under 512 and 3072 bytes. */
int inject__load(pid_t pid, const char *path, const char *fn_name, const char *arg, unsigned wait_ms,
		 uint64_t *handle, uint64_t *fn_ret, char *why, size_t len);

/* inject__load, where a library of that soname (no '/', under 64 bytes)
 * already in pid (an earlier load, RTLD_NOLOAD finds it by its DT_SONAME) is
 * used as it is: loading it again from a new memfd would map a second copy
 * each time. */
int inject__load_once(pid_t pid, const char *path, const char *soname, const char *fn_name, const char *arg,
		      unsigned wait_ms, uint64_t *handle, uint64_t *fn_ret, char *why, size_t len);

/* What the last load made by this thread borrowed: tid, the thread its
 * calls ran in (0: none); passed_over, how many times a thread was found
 * inside the CUDA driver's libraries, CUPTI or the agent (its blocking
 * call made by them) and passed over: the agent's start would enter the
 * driver again from within its own call; inside, no other thread waited
 * and the borrowed thread was taken in such a call all the same (after
 * half a second, or half the wait); maybe, the borrowed thread's stack
 * held a word pointing into them further up (a call in progress, or a
 * function pointer: threads without one go first). */
struct inject_last {
	pid_t tid;
	int passed_over;
	bool maybe, inside;
};
void inject__last(struct inject_last *out);

#endif
