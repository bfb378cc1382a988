/* SPDX-License-Identifier: MIT */
/*
 * A file written under a private temporary name next to its target and
 * renamed into place only once complete and on disk, so that a writer that
 * fails (disk full, damaged input, Ctrl-C) never leaves a file that looks
 * finished, nor destroys the one it would have replaced.  Used by export and
 * merge, whose outputs are read by people and tools that trust a name.
 */
#ifndef GTRACE_INSTALLER_H
#define GTRACE_INSTALLER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct installer;

/*
 * Why target must not be replaced, NULL when it may be (absent, or a regular
 * file of our effective uid): a writer running as root must not turn a
 * device (/dev/null) or a FIFO into a file, rename over a symbolic link, nor
 * take over a name another user planted to read what we write.  Judged with
 * lstat: a link is refused, not followed.  An lstat failure other than the
 * target's absence is left to the creation or the rename to report.
 */
const char *installer__refusal(const char *target);

/*
 * Creates "DIR/.BASE<tag>.XXXXXX" next to target: in its directory so that
 * the rename stays in one filesystem, hidden so that a leftover does not
 * pass for an output.  tag may be "" or NULL.  mode is what the installed
 * file gets, less the umask, as open(2) would give a new file (0600 keeps
 * mkstemp's own).  Returns 0, -EPERM when installer__refusal(target) has a
 * reason (checked before any work is done), -ENOMEM, or the -errno of the
 * creation.
 */
int installer__create(const char *target, const char *tag, mode_t mode, struct installer **out);

/* The temporary file, open for writing; it stays the installer's (dup it
 * to hand it to a FILE). */
int installer__fd(const struct installer *in);

/* The temporary file's name, for writers that open by name. */
const char *installer__path(const struct installer *in);

/*
 * Syncs the temporary file and renames it onto the target.  Without force it
 * never replaces a file, even one created since the caller's own check:
 * RENAME_NOREPLACE, and where the filesystem lacks it, a refusal of any file
 * there now rather than a plain rename.  With force, the target is judged
 * again (installer__refusal) just before the rename: what appeared there
 * while the file was written is refused too.  Returns 0, -EEXIST, -EPERM
 * (refused), or another -errno (the temporary file is then still there, for
 * installer__free).
 */
int installer__commit(struct installer *in, bool force);

/* Closes the temporary file and, unless it was installed, removes it. */
void installer__free(struct installer *in);

/* ---- a whole output file, for the readers' commands (export, report) ---- */

/* path with its ending old (".gtrace") replaced by ext, or ext appended
 * when it has none: the default output name.  NULL when out of memory. */
char *installer__sibling_name(const char *path, const char *old, const char *ext);

/*
 * Refuses out before any work is done: the input itself, a name that may
 * not be replaced (installer__refusal: --force would not help, so it is not
 * asked for) or a file that exists without force.  Returns 0, or 1 after
 * one line on err ("gtrace-bpf: ...").  The installer catches a file that
 * appears meanwhile.
 */
int installer__check(const char *out, const char *input, bool force, FILE *err);

/* What fills the temporary file f: 0, or a negative errno with *why (may
 * stay NULL) saying what failed when it is not a write error. */
typedef int (*installer_fill_fn)(void *ctx, FILE *f, const char **why);

/*
 * Writes out as a file of the owner only (0600: outputs hold the traced
 * programs' command lines, as the trace does) through a temporary file that
 * fill writes and that is installed once complete.  Returns 0, or 1 after
 * one line on err: "cannot write OUT: ..." (a write error, a refusal, a name
 * that appeared), or "failed to VERB INPUT: why" for fill's own failures.
 */
int installer__write(const char *out, bool force, installer_fill_fn fill, void *ctx,
		     const char *verb, const char *input, FILE *err);

#endif
