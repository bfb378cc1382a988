// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "bpf/gtrace_events.h"
#include "cupti/gtrace_cupti.h"
#include "record/cupti_session.h"
#include "lib/log.h"
#include "lib/vec.h"

/* GTRACE_CUPTI_RUN_DIR (cupti/gtrace_cupti.h): where a running --all or -p
 * recorder lets programs started with the CUPTI agent join. */
#define CUPTI_RUN_DIR		GTRACE_CUPTI_RUN_DIR
#define CUPTI_AGENT		"libgtrace-cupti.so"
#define CUPTI_WAIT_NS		2000000000ull	/* agents get this long to flush after "stop" */
#define CUPTI_QUIET_NS		1000000000ull	/* ... or until no spool grew for this long */

struct cupti_session {
	bool private_dir;		/* -- CMD: the spool directory is ours alone */
	bool live;			/* the daemon's: live spooling, spool files taken over */
	const char *nvtx_capture;	/* GTRACE_NVTX_CAPTURE for the agents, NULL = none */
	char lib[PATH_MAX];		/* the agent library, absolute */
	char dir[PATH_MAX];		/* the agents' spool directory, "" while none */
	int dir_fd;			/* CUPTI_RUN_DIR, locked against a second recorder; -1 */
	char **old;			/* spool files in CUPTI_RUN_DIR before we started */
	size_t nold, old_cap;		/* their count; room in old */
	uint64_t stop_ts;		/* when "stop" was created, 0 = not yet */
};


static bool regular_file(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return false;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return false;
	}
	return !access(path, R_OK);
}

/* The agent library: --cupti-lib, else next to our own binary: the same
 * directory, ../lib/gtrace-bpf (installed), .output (the build tree).
 * CUDA_INJECTION64_PATH wants an absolute path. */
static int cupti_find_agent(struct cupti_session *s, const struct cupti_session_opts *o)
{
	static const char *const rel[] = {
		"/" CUPTI_AGENT, "/../lib/gtrace-bpf/" CUPTI_AGENT, "/.output/" CUPTI_AGENT,
	};
	char exe[PATH_MAX], cand[PATH_MAX + 64], *slash;
	ssize_t n;
	size_t i;

	if (o->lib) {
		if (!regular_file(o->lib) || !realpath(o->lib, s->lib)) {
			pr_err("cannot use the CUPTI agent library %s: %s", o->lib,
			       errno == EINVAL ? "not a regular file" : strerror(errno));
			return -ENOENT;
		}
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		pr_err("failed to find the CUPTI agent library: /proc/self/exe: %s; pass --cupti-lib PATH",
		       n ? strerror(errno) : "empty");
		return -ENOENT;
	}
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(cand, sizeof(cand), "%s%s", exe, rel[i]);
		if (regular_file(cand) && realpath(cand, s->lib))
			return 0;
	}
	pr_err("the CUPTI agent library %s is not in %s, %s/../lib/gtrace-bpf or %s/.output: "
	       "build it (make) or pass --cupti-lib PATH", CUPTI_AGENT, exe, exe, exe);
	return -ENOENT;
}

int cupti_session__new(const struct cupti_session_opts *o, struct cupti_session **out)
{
	struct cupti_session *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s) {
		err = -ENOMEM;
		pr_err("failed to allocate the CUPTI session: %s", strerror(-err));
		return err;
	}
	s->private_dir = o->private_dir;
	s->live = o->live;
	s->nvtx_capture = o->nvtx_capture;
	s->dir_fd = -1;
	err = cupti_find_agent(s, o);
	if (err) {
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

const char *cupti_session__dir(const struct cupti_session *s)
{
	return s && s->dir[0] ? s->dir : NULL;
}

int cupti_session__setenv(const struct cupti_session *s)
{
	if (s->dir[0] &&
	    (setenv("CUDA_INJECTION64_PATH", s->lib, 1) ||
	     setenv(GT_CUPTI_ENV_DIR, s->dir, 1) ||
	     /* the agent hands NVTX to CUPTI only while a recording wants
	      * the process: cheaper than naming libcupti itself */
	     setenv("NVTX_INJECTION64_PATH", s->lib, 1) ||
	     /* capture ranges: the agent calls out when one opens or closes */
	     (s->nvtx_capture && setenv(GT_CUPTI_ENV_NVTX_CAPTURE, s->nvtx_capture, 1))))
		return -errno;
	return 0;
}

static bool spool_name(const char *name)
{
	size_t n = strlen(name), sl = strlen(GT_CUPTI_SPOOL_SUFFIX);

	return n > sl && !strcmp(name + n - sl, GT_CUPTI_SPOOL_SUFFIX);
}

/* The process a spool file belongs to, from its name; 0 if it does not say. */
pid_t cupti_session__spool_pid(const char *name)
{
	size_t pl = strlen(GT_CUPTI_SPOOL_PREFIX);
	unsigned long v;
	char *end;

	if (strncmp(name, GT_CUPTI_SPOOL_PREFIX, pl))
		return 0;
	errno = 0;
	v = strtoul(name + pl, &end, 10);
	if (errno || end == name + pl || strcmp(end, GT_CUPTI_SPOOL_SUFFIX) || !v || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

static bool cupti_old_spool(const struct cupti_session *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nold; i++) {
		if (!strcmp(s->old[i], name))
			return true;
	}
	return false;
}

/* -- CMD: a private directory for its agents, named in its environment.
 * --all, -p: CUPTI_RUN_DIR, where agents of programs started with
 * CUDA_INJECTION64_PATH find us; root's only (0700), locked so that a
 * second recorder does not take the first one's spool files. */
int cupti_session__open_dir(struct cupti_session *s)
{
	const char *tmp = getenv("TMPDIR");
	struct dirent *de;
	struct stat st;
	DIR *d;
	int err;

	if (s->private_dir) {
		snprintf(s->dir, sizeof(s->dir), "%s/gtrace-cupti.XXXXXX",
			 tmp && tmp[0] == '/' ? tmp : "/tmp");
		if (!mkdtemp(s->dir)) {
			err = -errno;
			pr_err("failed to create a spool directory for the CUPTI agent (%s): %s",
			       s->dir, strerror(-err));
			s->dir[0] = 0;
			return err;
		}
		pr_verbose("CUPTI agent %s (also the NVTX injection), spool directory %s",
			   s->lib, s->dir);
		return 0;
	}
	if ((mkdir("/run/gtrace-bpf", 0755) && errno != EEXIST) ||
	    (mkdir(CUPTI_RUN_DIR, 0700) && errno != EEXIST)) {
		err = -errno;
		pr_err("failed to create %s: %s", CUPTI_RUN_DIR, strerror(-err));
		return err;
	}
	s->dir_fd = open(CUPTI_RUN_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0) {
		err = -errno;
		pr_err("cannot open %s: %s", CUPTI_RUN_DIR, strerror(-err));
		return err;
	}
	if (fstat(s->dir_fd, &st)) {
		err = -errno;
		pr_err("cannot open %s: %s", CUPTI_RUN_DIR, strerror(-err));
		return err;
	}
	if (st.st_uid != geteuid()) {
		pr_err("%s belongs to uid %u, not to us: remove it", CUPTI_RUN_DIR, (unsigned)st.st_uid);
		return -EPERM;
	}
	if (flock(s->dir_fd, LOCK_EX | LOCK_NB)) {
		err = -errno;
		pr_err("%s is in use%s", CUPTI_RUN_DIR,
		       err == -EWOULDBLOCK ? ": another gtrace-bpf records with --cupti" : "");
		return err;
	}
	if (fchmod(s->dir_fd, 0700)) {
		err = -errno;
		pr_err("failed to restrict %s to its owner: %s", CUPTI_RUN_DIR, strerror(-err));
		return err;
	}
	/* a crashed recorder's leftovers: its "stop" would stop the new agents,
	 * its "live" ask them for flushes no one reads, its spool files are
	 * not this recording's (a daemon takes them over) */
	if (unlinkat(s->dir_fd, GT_CUPTI_STOP_FILE, 0) && errno != ENOENT)
		pr_warn("failed to remove %s/%s: %s", CUPTI_RUN_DIR, GT_CUPTI_STOP_FILE, strerror(errno));
	if (s->live) {
		int fd = openat(s->dir_fd, GT_CUPTI_LIVE_FILE,
				O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);

		if (fd < 0) {
			err = -errno;
			pr_err("failed to create %s/%s: %s", CUPTI_RUN_DIR, GT_CUPTI_LIVE_FILE,
			       strerror(-err));
			return err;
		}
		close(fd);
		snprintf(s->dir, sizeof(s->dir), "%s", CUPTI_RUN_DIR);
		return 0;
	}
	if (unlinkat(s->dir_fd, GT_CUPTI_LIVE_FILE, 0) && errno != ENOENT)
		pr_warn("failed to remove %s/%s: %s", CUPTI_RUN_DIR, GT_CUPTI_LIVE_FILE, strerror(errno));
	d = opendir(CUPTI_RUN_DIR);
	while (d && (de = readdir(d))) {
		char *name;

		if (!spool_name(de->d_name))
			continue;
		name = vec__reserve(&s->old, &s->old_cap, s->nold, 1, 16) ? NULL : strdup(de->d_name);
		if (name)
			s->old[s->nold++] = name;
	}
	if (d)
		closedir(d);
	if (s->nold)
		pr_warn("%s holds %zu spool files of an earlier recording: they are left out",
			CUPTI_RUN_DIR, s->nold);
	snprintf(s->dir, sizeof(s->dir), "%s", CUPTI_RUN_DIR);
	pr_verbose("CUPTI: programs started with CUDA_INJECTION64_PATH=%s join through %s",
		   s->lib, s->dir);
	return 0;
}

/* Asks the agents to flush and stop. */
void cupti_session__stop(struct cupti_session *s)
{
	char path[PATH_MAX + 16];
	int fd;

	if (!s || !s->dir[0] || s->stop_ts)
		return;
	s->stop_ts = clock__ns(CLOCK_MONOTONIC);
	snprintf(path, sizeof(path), "%s/%s", s->dir, GT_CUPTI_STOP_FILE);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0)
		pr_warn("failed to create %s: %s; agents still running may not flush", path,
			strerror(errno));
	else
		close(fd);
}

/* A spool is complete once its process is gone or it ends with the agent's
 * last record (its counters). */
static bool spool_complete(const char *dir, const char *name, off_t *size)
{
	char path[PATH_MAX + 256];
	struct gt_cupti_stats last;
	struct stat st;
	pid_t pid = cupti_session__spool_pid(name);
	bool done = false;
	int fd;

	*size = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* O_NONBLOCK: a FIFO under a spool's name must not stop the wait */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return true;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		/* nothing the merge will take: nothing to wait for */
		close(fd);
		return true;
	}
	*size = st.st_size;
	done = st.st_size >= (off_t)(GT_CUPTI_MAGIC_LEN + sizeof(last)) &&
	       pread(fd, &last, sizeof(last), st.st_size - sizeof(last)) == sizeof(last) &&
	       last.hdr.type == GT_REC_CUPTI_STATS && last.hdr.size == sizeof(last);
	close(fd);
	return done || (pid > 0 && kill(pid, 0) && errno == ESRCH);
}

/* Waits until every spool is complete, none grew for CUPTI_QUIET_NS, or
 * CUPTI_WAIT_NS passed since "stop". */
static void cupti_wait(struct cupti_session *s)
{
	uint64_t last_sum = UINT64_MAX, quiet_since = clock__ns(CLOCK_MONOTONIC);

	for (;;) {
		uint64_t sum = 0, now;
		bool all_done = true;
		struct dirent *de;
		DIR *d = opendir(s->dir);

		while (d && (de = readdir(d))) {
			off_t size;

			if (!spool_name(de->d_name) || cupti_old_spool(s, de->d_name))
				continue;
			if (!spool_complete(s->dir, de->d_name, &size))
				all_done = false;
			sum += size;
		}
		if (d)
			closedir(d);
		now = clock__ns(CLOCK_MONOTONIC);
		if (sum != last_sum) {
			last_sum = sum;
			quiet_since = now;
		}
		if (all_done || now - quiet_since >= CUPTI_QUIET_NS ||
		    now - s->stop_ts >= CUPTI_WAIT_NS) {
			if (!all_done)
				pr_verbose("CUPTI agents still running after stop: merging what they wrote");
			return;
		}
		usleep(50000);
	}
}

/* Whether name in the spool directory is this recording's to remove: all
 * of a private directory; in the run directory our "stop" and the spool
 * files that were not there before us, which open_dir said it leaves out
 * (another recording's, still to be merged). */
static bool cupti_ours(const struct cupti_session *s, const char *name)
{
	if (s->private_dir)
		return true;
	if (!strcmp(name, GT_CUPTI_STOP_FILE) || (s->live && !strcmp(name, GT_CUPTI_LIVE_FILE)))
		return true;
	return spool_name(name) && !cupti_old_spool(s, name);
}

/* Empties and removes the spool directory: of the run directory only what
 * is ours, and the directory when nothing else is left. */
void cupti_session__remove_dir(struct cupti_session *s)
{
	struct dirent *de;
	DIR *d;

	if (!s->dir[0])
		return;
	d = opendir(s->dir);
	while (d && (de = readdir(d))) {
		if (de->d_type == DT_DIR || !cupti_ours(s, de->d_name))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) && errno != ENOENT)
			pr_warn("failed to remove %s/%s: %s", s->dir, de->d_name, strerror(errno));
	}
	if (d)
		closedir(d);
	if (rmdir(s->dir) && errno != ENOENT && (s->private_dir || errno != ENOTEMPTY))
		pr_warn("failed to remove %s: %s", s->dir, strerror(errno));
	s->dir[0] = 0;
}


/* After the recording: stops and waits for the agents, then lists what the
 * merge takes. */
int cupti_session__spools(struct cupti_session *s, char ***files, size_t *nfiles)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int err = 0;

	*files = NULL;
	*nfiles = 0;
	cupti_session__stop(s);
	cupti_wait(s);
	if (s->private_dir) {
		names = calloc(1, sizeof(*names));
		if (names)
			names[n++] = strdup(s->dir);
		if (!names || !names[0])
			err = -ENOMEM;
	} else {
		/* the run directory: this recording's spool files */
		d = opendir(s->dir);
		while (!err && d && (de = readdir(d))) {
			char *path;

			if (!spool_name(de->d_name) || cupti_old_spool(s, de->d_name))
				continue;
			if (vec__reserve(&names, &cap, n, 1, 16) ||
			    asprintf(&path, "%s/%s", s->dir, de->d_name) < 0) {
				err = -ENOMEM;
				break;
			}
			names[n++] = path;
		}
		if (d)
			closedir(d);
	}
	if (err) {
		pr_err("failed to list %s: %s", s->dir, strerror(-err));
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return err;
	}
	*files = names;
	*nfiles = n;
	return 0;
}

size_t cupti_session__nspools(const struct cupti_session *s)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(s->dir);

	while (d && (de = readdir(d))) {
		if (spool_name(de->d_name) && !cupti_old_spool(s, de->d_name))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

const char *cupti_session__lib(const struct cupti_session *s)
{
	return s->lib;
}

bool cupti_session__private(const struct cupti_session *s)
{
	return s->private_dir;
}

void cupti_session__free(struct cupti_session *s)
{
	size_t i;

	if (!s)
		return;
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	for (i = 0; i < s->nold; i++)
		free(s->old[i]);
	free(s->old);
	free(s);
}
