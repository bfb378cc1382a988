/* SPDX-License-Identifier: MIT */
/*
 * The agent's side of the contract of cupti/gtrace_cupti.h, apart from CUPTI:
 * where the agent spools, whether a recorder wants it now, and its spool file
 * with the file system's and the unread part's bounds.  Plain system calls, no
 * CUPTI: agent.c drives CUPTI from what these say, and the unit tests run them
 * alone.
 */
#ifndef GTRACE_CUPTI_AGENT_CTL_H
#define GTRACE_CUPTI_AGENT_CTL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum gt_ctl_mode {
	GT_CTL_NONE = 0,	/* nothing asks for this process: the agent stays out */
	GT_CTL_PRIVATE,		/* GTRACE_CUPTI_DIR: record until the recording ends, once */
	GT_CTL_RUN,		/* the run directory: armed, records while a recorder wants it */
};

/* What the recorder wants now. */
enum gt_want {
	GT_WANT_RECORD = 0,	/* record */
	GT_WANT_WAIT,		/* a recorder is live but has not listed this process (yet):
				 * be there (the spool file), do not record */
	GT_WANT_PAUSE,		/* no recorder, or it asked to pause: record no more for now */
	GT_WANT_END,		/* the private recording ended: stop for good */
};

struct gt_ctl {
	enum gt_ctl_mode mode;
	pid_t pid;		/* the process (its go file) */
	char dir[PATH_MAX];	/* the spool directory */
	char session[PATH_MAX];	/* the run directory's session file */
	uint64_t seen[3];	/* the session file at the last look: inode, mtime, size */
	bool detach_idle;	/* the last session that wanted agents said GT_CUPTI_DETACH_IDLE */
};

/* Where this process spools, from its environment: GTRACE_CUPTI_DIR, else the
 * run directory when it exists.  Returns the mode (GT_CTL_NONE: stay out). */
enum gt_ctl_mode gt_ctl__init(struct gt_ctl *c, pid_t pid);
/* The same in the run directory dir (its spool directory), named by the
 * recorder that loaded the agent into a running process (gt_agent_attach). */
enum gt_ctl_mode gt_ctl__init_dir(struct gt_ctl *c, pid_t pid, const char *dir);
/* What the recorder wants now (cupti/gtrace_cupti.h says how it says so). */
enum gt_want gt_ctl__want(struct gt_ctl *c);
/* True when the run directory holds this process' detach file (a trusted
 * one: root's or the directory owner's): an attached agent detaches. */
bool gt_ctl__detach_asked(const struct gt_ctl *c);
/* A cheap look (one stat): true when the run directory's session file
 * changed since gt_ctl__want last looked (a recorder began, ended, or
 * listed more processes). */
bool gt_ctl__changed(const struct gt_ctl *c);

/* A spool file being written. */
struct gt_spool {
	int fd;			/* -1 while none */
	char path[PATH_MAX];	/* its name, for messages */
	uint64_t wpos;		/* where the next chunk goes: the end of the last whole one */
	uint64_t max_unread;	/* the most bytes it may hold on disk beyond the reserve */
	bool reserve;		/* the file system keeps GT_CUPTI_RESERVE allocated past wpos */
	bool full;		/* the last chunk did not fit on the file system */
	bool backlog;		/* the last chunk would have gone past max_unread */
	uint64_t lost_disk;	/* records of chunks that did not fit, since gt_spool__recount */
	uint64_t lost_backlog;	/* ... that would have gone past max_unread */
	uint64_t flags;		/* GT_CUPTI_ST_DISK_FULL, GT_CUPTI_ST_BACKLOG seen since then */
};

/* What a chunk's write came to. */
enum gt_spool_wr {
	GT_SPOOL_OK = 0,
	GT_SPOOL_FULL,		/* not written: the file system is full (counted by the caller) */
	GT_SPOOL_BACKLOG,	/* not written: too much is unread */
	GT_SPOOL_ERR,		/* not written: an error that will not go away (errno set) */
};

void gt_spool__init(struct gt_spool *s);
/* Creates c's spool file (O_EXCL, 0600; another name when the usual one is
 * taken), writes its magic and allocates its reserve.  Returns 0 or a negative
 * errno (s->path names the file it tried). */
int gt_spool__open(struct gt_spool *s, const struct gt_ctl *c);
/* Appends len bytes of whole records, nrec of them the program's, or none
 * of them (a chunk the file system refused half-way is taken back), counting
 * what is lost to the file system or the bound.  reserve: the agent's
 * counters, which may go into the room kept for them (at most
 * GT_CUPTI_RESERVE). */
enum gt_spool_wr gt_spool__write(struct gt_spool *s, const void *buf, size_t len, uint64_t nrec,
				 bool reserve);
/* The losses counted from 0 again (a new stretch of recording). */
void gt_spool__recount(struct gt_spool *s);
/* True when the file is no longer in its directory (a recorder removed it):
 * what is written into it is lost. */
bool gt_spool__unlinked(const struct gt_spool *s);
/* fsync and close. */
void gt_spool__close(struct gt_spool *s, bool sync);
/* Closes and removes a file that holds nothing yet. */
void gt_spool__discard(struct gt_spool *s);

/* agent.c: starts the agent, once, when a recording may want this process
 * (cuInit, or NVTX's first call with capture ranges asked for); the
 * GTRACE_NVTX_CAPTURE spec, NULL when unset or empty. */
void gt_agent__init_once(void);
const char *gt_agent__capture_spec(void);

#endif /* GTRACE_CUPTI_AGENT_CTL_H */
