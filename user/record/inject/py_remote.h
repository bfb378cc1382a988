/* SPDX-License-Identifier: MIT */
/*
 * Loading a library into a running CPython 3.14 process the interpreter's
 * own way (PEP 768, what sys.remote_exec does): a script is put where the
 * process can read it, its path and a pending flag written into the main
 * thread's state, and the interpreter runs the script at its next check of
 * the eval breaker, in its own thread, with the GIL held: no thread is
 * stopped, no register touched. The script copies the library into a memfd,
 * loads it (or takes the copy already there, by its soname), calls the
 * function and leaves its return value for the recorder; the files go.
 *
 * Who runs the script is decided by who removes it first: the script
 * removes itself before it does anything, and a recorder that waited in
 * vain removes it to call the attempt off. An attempt called off leaves
 * nothing done, and the recorder may take the ptrace path (inject.h).
 */
#ifndef GTRACE_PY_REMOTE_H
#define GTRACE_PY_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Loads the library at path (a file of ours) into pid through its
 * interpreter, unless a library of that soname is there already, and calls
 * fn_name(arg) of it (arg a string under 3072 bytes): 0 and its return value
 * in *fn_ret, the thread that ran it in *tid. Waits at most wait_ms for the
 * interpreter to take the script, as long again for the call.
 *   -ENOTSUP   not a CPython 3.14 process, or one that does not allow it
 *              (remote debugging switched off, finalizing): why says so;
 *   -ETIMEDOUT the interpreter ran no Python code in the wait: called off,
 *              nothing done;
 *   -EINPROGRESS the script was taken and did not finish in the wait: the
 *              library may still be loading (no other path may be tried);
 *   other -errno: nothing done. */
int py_remote__load(pid_t pid, const char *path, const char *soname, const char *fn_name, const char *arg,
		    unsigned wait_ms, uint64_t *fn_ret, pid_t *tid, char *why, size_t len);

#endif
