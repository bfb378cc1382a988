// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/clock.h"
#include "cupti/gtrace_cupti.h"
#include "record/cupti_session.h"
#include "record/probes/elf_syms.h"
#include "lib/log.h"

#define CUPTI_AGENT		"libgtrace-cupti.so"
#define CUPTI_AGENT_ENTRY	"InitializeInjection"	/* what the CUDA driver calls */
#define RUN_DIR_DEFAULT		"/run/gtrace-bpf"	/* GTRACE_RUN_DIR says another */

struct cupti_session {
	bool private_dir;	/* -- CMD: the spool directory is ours alone */
	bool listed;		/* run directory: go files say which processes */
	bool detach_idle;	/* the session says GT_CUPTI_DETACH_IDLE */
	const char *nvtx_capture;	/* GTRACE_NVTX_CAPTURE for the agents, NULL = none */
	char lib[PATH_MAX];	/* the agent library, absolute */
	char dir[PATH_MAX];	/* the spool directory's path, "" while none */
	int dir_fd;		/* the spool directory, -1 while none */
	int parent_fd;		/* private: the directory holding it, for its removal */
	char base[64];		/* private: its name there */
	int lock_fd;		/* run directory: GT_CUPTI_RECORDER_FILE, OFD-locked; -1 */
	uint64_t start_ts;	/* the agents let in (run directory), 0 = all records ours */
	uint64_t stop_ts;	/* when "stop" was created, 0 = not yet */
	uint64_t published;	/* when the session file went up (run directory), 0 = not */
	bool ended;		/* cupti_session__end ran */
};

/* The agent library: --cupti-lib, else next to our own binary: the same
 * directory, ../lib/gtrace-bpf (installed), .output (the build tree).
 * CUDA_INJECTION64_PATH wants an absolute path. */
static int cupti_find_agent(struct cupti_session *s, const struct cupti_session_opts *o)
{
	static const char *const rel[] = {
		"/" CUPTI_AGENT, "/../lib/gtrace-bpf/" CUPTI_AGENT, "/.output/" CUPTI_AGENT,
	};
	char exe[PATH_MAX], cand[PATH_MAX + 64], *slash;
	struct stat st;
	ssize_t n;
	size_t i;

	if (o->lib) {
		/* the programs will load it as they find it: the file it names
		 * now, checked */
		if (!realpath(o->lib, s->lib)) {
			pr_err("cannot use the CUPTI agent library %s: %s", o->lib, strerror(errno));
			return -ENOENT;
		}
		if (stat(s->lib, &st) || !S_ISREG(st.st_mode)) {
			pr_err("cannot use the CUPTI agent library %s: not a regular file", o->lib);
			return -EINVAL;
		}
		int ex = elf_syms__exports(s->lib, CUPTI_AGENT_ENTRY);

		switch (ex) {
		case 1:
			return 0;
		case 0:
			pr_err("cannot use the CUPTI agent library %s: not a shared object exporting %s "
			       "(build it with make: .output/%s)", o->lib, CUPTI_AGENT_ENTRY, CUPTI_AGENT);
			return -ENOEXEC;
		case -ENOEXEC:
			pr_err("cannot use the CUPTI agent library %s: not an ELF file", o->lib);
			return -ENOEXEC;
		default:
			pr_err("cannot use the CUPTI agent library %s: %s", o->lib, strerror(-ex));
			return ex;
		}
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
		if (!stat(cand, &st) && S_ISREG(st.st_mode) && !access(cand, R_OK) && realpath(cand, s->lib))
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
	s->listed = !o->private_dir && o->listed;
	s->nvtx_capture = o->nvtx_capture;
	s->detach_idle = o->detach_idle;
	s->dir_fd = s->parent_fd = s->lock_fd = -1;
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

int cupti_session__dirfd(const struct cupti_session *s)
{
	return s ? s->dir_fd : -1;
}

uint64_t cupti_session__start(const struct cupti_session *s)
{
	return s ? s->start_ts : 0;
}

bool cupti_session__listed(const struct cupti_session *s)
{
	return s && s->listed;
}

uint64_t cupti_session__stop_ts(const struct cupti_session *s)
{
	return s ? s->stop_ts : 0;
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

pid_t cupti_session__spool_pid(const char *name)
{
	size_t pl = strlen(GT_CUPTI_SPOOL_PREFIX);
	unsigned long v, tag;
	char *end, *e2;

	if (strncmp(name, GT_CUPTI_SPOOL_PREFIX, pl))
		return 0;
	errno = 0;
	v = strtoul(name + pl, &end, 10);
	if (errno || end == name + pl || !v || v > INT_MAX || name[pl] < '1' || name[pl] > '9')
		return 0;
	/* gtrace-cupti.PID.N.spool: the agent's next name when PID's was taken */
	if (*end == '.' && end[1] >= '1' && end[1] <= '9') {
		tag = strtoul(end + 1, &e2, 10);
		if (!errno && e2 != end + 1 && tag < 1000)
			end = e2;
	}
	return strcmp(end, GT_CUPTI_SPOOL_SUFFIX) ? 0 : (pid_t)v;
}

/* ------------------------------------------------------------ the files that speak to the agents */

/* Creates name in the spool directory as a new file of ours (mode 0644: the
 * agents of every user read it), with content; one of that name that is not
 * ours (a user may create names in the run directory) is removed first. */
static int put_file(struct cupti_session *s, const char *name, const char *content)
{
	char tmp[64];
	size_t len = content ? strlen(content) : 0;
	int fd, err = 0;

	/* whole or not at all: written under another name, renamed over */
	snprintf(tmp, sizeof(tmp), ".%s.new", name);
	if (unlinkat(s->dir_fd, tmp, 0) && errno != ENOENT)
		return -errno;
	fd = openat(s->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) || (len && write(fd, content, len) != (ssize_t)len))
		err = errno ? -errno : -EIO;
	close(fd);
	if (!err && renameat(s->dir_fd, tmp, s->dir_fd, name))
		err = -errno;
	if (err)
		unlinkat(s->dir_fd, tmp, 0);
	return err;
}

static void remove_file(struct cupti_session *s, const char *name)
{
	if (unlinkat(s->dir_fd, name, 0) && errno != ENOENT)
		pr_warn("failed to remove %s/%s: %s", s->dir, name, strerror(errno));
}

/* Every go file, and the names of the protocol that are not ours: from a
 * recorder that did not end cleanly, or planted. */
static void remove_stale(struct cupti_session *s)
{
	int fd = dup(s->dir_fd);
	struct dirent *de;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* a dup shares the offset: from the start, whoever read it last */
	rewinddir(d);
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, "go.", 3) || !strncmp(de->d_name, "detach.", 7) ||
		    !strcmp(de->d_name, GT_CUPTI_STOP_FILE) ||
		    !strcmp(de->d_name, "live") || (de->d_name[0] == '.' && strstr(de->d_name, ".new")))
			remove_file(s, de->d_name);
	}
	closedir(d);
}

int cupti_session__detach(struct cupti_session *s, pid_t pid, bool on)
{
	char name[32];

	if (!s || s->dir_fd < 0 || s->private_dir)
		return -EINVAL;
	snprintf(name, sizeof(name), GT_CUPTI_DETACH_FMT, (int)pid);
	if (!on) {
		remove_file(s, name);
		return 0;
	}
	return put_file(s, name, "");
}

/* What the run directory's session file says while s records. */
static const char *session_text(const struct cupti_session *s)
{
	if (s->listed)
		return s->detach_idle ? GT_CUPTI_SCOPE_LISTED "\n" GT_CUPTI_DETACH_IDLE "\n" : GT_CUPTI_SCOPE_LISTED "\n";
	return s->detach_idle ? GT_CUPTI_SCOPE_ALL "\n" GT_CUPTI_DETACH_IDLE "\n" : GT_CUPTI_SCOPE_ALL "\n";
}

int cupti_session__admit(struct cupti_session *s, pid_t pid)
{
	char name[32];
	int err;

	if (!s || !s->listed || s->dir_fd < 0 || s->stop_ts)
		return 0;
	snprintf(name, sizeof(name), GT_CUPTI_GO_FMT, (int)pid);
	err = put_file(s, name, NULL);
	/* the session file made anew: waiting agents look at once */
	return err ? err : put_file(s, GT_CUPTI_SESSION_FILE, session_text(s));
}

/* ------------------------------------------------------------ the directories */

/* The private directory of -- CMD: made in TMPDIR (or /tmp) under a random
 * name, opened at once and checked to be the one made (the parent may be
 * writable by others, who could put their own in its place). */
static int open_private(struct cupti_session *s)
{
	const char *tmp = getenv("TMPDIR");
	const char *parent = tmp && tmp[0] == '/' ? tmp : "/tmp";
	unsigned char rnd[6];
	struct stat st;
	int err;

	s->parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->parent_fd < 0) {
		err = -errno;
		pr_err("failed to create a spool directory for the CUPTI agent in %s: %s", parent,
		       strerror(-err));
		return err;
	}
	for (int tries = 0; tries < 16; tries++) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -EIO;
		snprintf(s->base, sizeof(s->base), "gtrace-cupti.%02x%02x%02x%02x%02x%02x", rnd[0],
			 rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
		if (!mkdirat(s->parent_fd, s->base, 0700))
			break;
		if (errno != EEXIST) {
			err = -errno;
			pr_err("failed to create a spool directory for the CUPTI agent in %s: %s", parent,
			       strerror(-err));
			return err;
		}
		s->base[0] = 0;
	}
	if (!s->base[0])
		return -EEXIST;
	s->dir_fd = openat(s->parent_fd, s->base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0 || fstat(s->dir_fd, &st) || st.st_uid != geteuid() ||
	    (st.st_mode & 07777) != 0700) {
		err = s->dir_fd < 0 ? -errno : -EPERM;
		pr_err("the spool directory %s/%s changed under us: %s", parent, s->base,
		       err == -EPERM ? "not ours" : strerror(-err));
		return err;
	}
	snprintf(s->dir, sizeof(s->dir), "%s/%s", parent, s->base);
	pr_verbose("CUPTI agent %s (also the NVTX injection), spool directory %s", s->lib, s->dir);
	return 0;
}

/* dir (made when missing, mode), opened without following a link and
 * checked to be ours. Returns the descriptor or a negative errno (said). */
static int own_dir(int at, const char *shown, const char *name, mode_t mode)
{
	struct stat st;
	int fd, err;

	if (mkdirat(at, name, mode) && errno != EEXIST) {
		err = -errno;
		pr_err("failed to create %s: %s", shown, strerror(-err));
		return err;
	}
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot open %s: %s", shown, errno == ELOOP || errno == ENOTDIR ?
		       "not a directory (a link?): remove it" : strerror(-err));
		return err;
	}
	if (fstat(fd, &st) || st.st_uid != geteuid()) {
		pr_err("%s belongs to uid %u, not to us: remove it", shown, (unsigned)st.st_uid);
		close(fd);
		return -EPERM;
	}
	/* the mode asked for, whatever the umask or an older version left */
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode)) {
		err = -errno;
		pr_err("failed to set the mode of %s: %s", shown, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

/* The run directory: $GTRACE_RUN_DIR/cupti, mode 1733 (every user's agent
 * creates its file there, none lists or removes what is not theirs). */
static int open_run(struct cupti_session *s)
{
	const char *env = getenv(GT_RUN_DIR_ENV);
	const char *base = env && env[0] == '/' ? env : RUN_DIR_DEFAULT;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct stat st;
	int base_fd, err;

	snprintf(s->dir, sizeof(s->dir), "%s/" GT_CUPTI_RUN_SUBDIR, base);
	base_fd = own_dir(AT_FDCWD, base, base, 0755);
	if (base_fd < 0)
		return base_fd;
	s->dir_fd = own_dir(base_fd, s->dir, GT_CUPTI_RUN_SUBDIR, 01733);
	close(base_fd);
	if (s->dir_fd < 0)
		return s->dir_fd;
	/* the lock says a recorder is live: ours, made by us */
	for (int tries = 0; tries < 2; tries++) {
		s->lock_fd = openat(s->dir_fd, GT_CUPTI_RECORDER_FILE,
				    O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
		if (s->lock_fd >= 0 && !fstat(s->lock_fd, &st) && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid())
			break;
		if (s->lock_fd >= 0)
			close(s->lock_fd);
		s->lock_fd = -1;
		unlinkat(s->dir_fd, GT_CUPTI_RECORDER_FILE, 0);
	}
	if (s->lock_fd < 0 || fchmod(s->lock_fd, 0644)) {
		err = -errno;
		pr_err("failed to create %s/%s: %s", s->dir, GT_CUPTI_RECORDER_FILE, strerror(-err));
		return err;
	}
	if (fcntl(s->lock_fd, F_OFD_SETLK, &fl)) {
		err = -errno;
		pr_err("%s is in use%s", s->dir, err == -EAGAIN || err == -EACCES ?
		       ": another gtrace-bpf records with --cupti" : "");
		close(s->lock_fd);
		s->lock_fd = -1;
		return err;
	}
	/* what a recorder that did not end left: its pause request would
	 * hold the agents, its go files admit processes we may not want */
	remove_stale(s);
	/* until cupti_session__begin, everything they record is before */
	s->start_ts = UINT64_MAX;
	err = put_file(s, GT_CUPTI_SESSION_FILE, session_text(s));
	s->published = clock__ns(CLOCK_MONOTONIC);
	if (err) {
		pr_err("failed to create %s/%s: %s", s->dir, GT_CUPTI_SESSION_FILE, strerror(-err));
		return err;
	}
	pr_verbose("CUPTI: programs started with CUDA_INJECTION64_PATH=%s join through %s (%s)", s->lib,
		   s->dir, s->listed ? "the processes this recording traces" : "every process");
	return 0;
}

int cupti_session__open_dir(struct cupti_session *s)
{
	int err = s->private_dir ? open_private(s) : open_run(s);

	if (err) {
		if (s->dir_fd >= 0)
			close(s->dir_fd);
		s->dir_fd = -1;
		s->dir[0] = 0;
	}
	return err;
}

#define SETTLE_MAX	16		/* agents waited for at the start */
#define SETTLE_NS	1000000000ull	/* ... at most this long */

static void sleep_until(uint64_t t)
{
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	struct timespec ts;

	if (now >= t)
		return;
	ts.tv_sec = (time_t)((t - now) / 1000000000ull);
	ts.tv_nsec = (long)((t - now) % 1000000000ull);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The agents there now, of processes that run and that the recording wants:
 * admitted (a listed session), and waited for until each wrote something
 * (an agent that begins to record writes a flush mark at once), or
 * SETTLE_NS passed. */
static void settle(struct cupti_session *s, bool (*wants)(void *ctx, pid_t pid), void *ctx)
{
	struct { char name[64]; off_t size; } a[SETTLE_MAX];
	int fd = dup(s->dir_fd), n = 0, left;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	uint64_t end = clock__ns(CLOCK_MONOTONIC) + SETTLE_NS;
	struct dirent *de;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while (n < SETTLE_MAX && (de = readdir(d))) {
		pid_t pid = cupti_session__spool_pid(de->d_name);

		if (!pid || (kill(pid, 0) && errno == ESRCH) || (wants && !wants(ctx, pid)) ||
		    fstatat(s->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    strlen(de->d_name) >= sizeof(a[0].name))
			continue;
		cupti_session__admit(s, pid);
		snprintf(a[n].name, sizeof(a[n].name), "%s", de->d_name);
		a[n++].size = st.st_size;
	}
	closedir(d);
	for (left = n; left && clock__ns(CLOCK_MONOTONIC) < end;) {
		sleep_until(clock__ns(CLOCK_MONOTONIC) + 10000000ull);
		left = 0;
		for (int i = 0; i < n; i++)
			left += !fstatat(s->dir_fd, a[i].name, &st, AT_SYMLINK_NOFOLLOW) &&
				st.st_size == a[i].size;
	}
	if (left)
		pr_verbose("CUPTI: %d agent%s did not answer within %llu ms: their first GPU records may come "
			   "after their first calls", left, left == 1 ? "" : "s", SETTLE_NS / 1000000);
}

void cupti_session__begin(struct cupti_session *s, bool (*wants)(void *ctx, pid_t pid), void *ctx)
{
	if (!s || !s->start_ts)
		return;
	/* the armed agents look at the session file every GT_CUPTI_POLL_GO_MS:
	 * by twice that they made their files (a thread woken late); then
	 * they record before the calls are, or a launch made meanwhile
	 * would have no GPU record */
	if (s->published) {
		sleep_until(s->published + 2 * GT_CUPTI_POLL_GO_MS * 1000000ull);
		settle(s, wants, ctx);
	}
	s->start_ts = clock__ns(CLOCK_MONOTONIC);
}

/* Asks the agents to hand over what they hold, then stop or pause. */
void cupti_session__stop(struct cupti_session *s)
{
	int err;

	if (!s || s->dir_fd < 0 || s->stop_ts)
		return;
	s->stop_ts = clock__ns(CLOCK_MONOTONIC);
	err = s->private_dir ? put_file(s, GT_CUPTI_STOP_FILE, NULL) :
			       put_file(s, GT_CUPTI_SESSION_FILE, GT_CUPTI_PAUSE "\n");
	if (err)
		pr_warn("failed to ask the CUPTI agents in %s to hand over: %s; agents still running may "
			"not flush", s->dir, strerror(-err));
}

/* Empties and removes the private directory: what is in it through its
 * descriptor, the directory itself only when the name still is it. */
static void remove_private(struct cupti_session *s)
{
	struct stat mine, now;
	int fd = dup(s->dir_fd);
	struct dirent *de;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0)
		close(fd);
	if (d)
		rewinddir(d);
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(s->dir_fd, de->d_name, 0) && errno != ENOENT)
			pr_warn("failed to remove %s/%s: %s", s->dir, de->d_name, strerror(errno));
	}
	if (d)
		closedir(d);
	if (fstat(s->dir_fd, &mine) || fstatat(s->parent_fd, s->base, &now, AT_SYMLINK_NOFOLLOW) ||
	    mine.st_dev != now.st_dev || mine.st_ino != now.st_ino) {
		pr_warn("the spool directory %s is not where it was made: left alone", s->dir);
		return;
	}
	if (unlinkat(s->parent_fd, s->base, AT_REMOVEDIR))
		pr_warn("failed to remove %s: %s", s->dir, strerror(errno));
}

void cupti_session__end(struct cupti_session *s)
{
	if (!s || s->dir_fd < 0 || s->ended)
		return;
	s->ended = true;
	if (s->private_dir) {
		remove_private(s);
		return;
	}
	/* the session first: with it gone the agents pause whatever comes
	 * next; the go files, "stop", then the lock */
	remove_file(s, GT_CUPTI_SESSION_FILE);
	remove_stale(s);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	s->lock_fd = -1;
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
	if (!s)
		return;
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	if (s->parent_fd >= 0)
		close(s->parent_fd);
	free(s);
}
