/* SPDX-License-Identifier: MIT */
/*
 * Where execvp would find a program: itself when its name has a slash,
 * else the first executable regular file of that name along PATH (an
 * empty entry is the current directory; no PATH: /bin:/usr/bin), where a
 * candidate that cannot be run does not hide a later one. The command line
 * checks `-- CMD` with it; the stacks' Python setup finds the interpreter
 * the program will run with it.
 */
#ifndef GTRACE_LIB_PATH_FIND_H
#define GTRACE_LIB_PATH_FIND_H

#include <stddef.h>

/* 0 when path is a regular file we may execute, else -errno (-EISDIR,
 * -EACCES for another kind of file or no permission). */
int path__executable(const char *path);
/* prog's file into out (n bytes): 0, or -ENOENT (none), -EACCES/-EISDIR
 * (only candidates that cannot be run), -ENAMETOOLONG. path_env: PATH's
 * value, NULL when unset. */
int path__find(const char *prog, const char *path_env, char *out, size_t n);

#endif
