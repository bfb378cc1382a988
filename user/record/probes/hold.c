// SPDX-License-Identifier: MIT
/*
 * Holding a process until the probes of the library it opened are attached
 * (hold.h): the files map, the slots, the release and the watchdog.
 *
 * Why a process of its own for the watchdog: a thread dies with a recorder
 * that is SIGKILLed, and a BPF timer cannot continue another task. The
 * watchdog has the shared slots (an mmap of the BPF map, which keeps the
 * map alive by itself) and the read end of a pipe whose write end only the
 * recorder holds: when that end closes, the recorder is gone, whatever
 * killed it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "format/records.h"
#include "lib/clock.h"
#include "lib/kdev.h"
#include "lib/log.h"
#include "record/probes/hold.h"
#include "record/procs/procfs.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434		/* the same number on every architecture */
#endif
#ifndef SYS_close_range
#define SYS_close_range 436		/* the same number on every architecture */
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424	/* the same number on every architecture */
#endif

#define WATCHDOG_POLL_MS	50	/* how often the watchdog looks at the slots */
#define WATCHDOG_LINGER_NS	100000000ull	/* after the recorder: a hold that began as it
						 * ended is still continued */
#define SLOT_FORGET_NS		10000000000ull	/* a continued slot whose record never came */

struct hold {
	struct hold_opts o;
	struct gt_hold_slot *slots;	/* the shared mapping, GT_HOLD_SLOTS of them */
	size_t map_len;
	int pipe_wr;			/* the recorder's end: closed = the recorder is gone */
	pid_t watchdog;			/* its pid, -1 when there is none */
	bool enabled;			/* hold__enable() was called */
	bool gone_said;			/* the watchdog's end was reported */
	struct hold_stats st;
};

static uint64_t slot_load(const __u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Takes the slot's word from HELD (as read in w) to CONTINUED; true for
 * the one caller that did. */
static bool slot_take(struct gt_hold_slot *s, uint64_t w)
{
	__u64 want = (w & ~0xffffffffull) | GT_SLOT_CONTINUED, expect = w;

	return __atomic_compare_exchange_n(&s->word, &expect, want, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

bool hold__same_start(const char *f, uint64_t start_boottime, long tck)
{
	unsigned long long start;

	/* starttime is the 22nd field of the line, the 20th after the
	 * command name (state is the first of those) */
	if (!f || tck <= 0 || sscanf(f, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
				     "%*d %*d %*d %*d %llu", &start) != 1)
		return false;
	return start == start_boottime / (1000000000ull / (uint64_t)tck);
}

int hold__continue_pid(pid_t pid, uint64_t start_boottime)
{
	char buf[1024];
	int fd, err = 0;

	/* the pidfd first: the process it names cannot change under it, so
	 * the start time read after it is the one the signal goes to */
	fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	if (!hold__same_start(procfs__stat_fields(pid, buf, sizeof(buf)), start_boottime,
			      sysconf(_SC_CLK_TCK)))
		err = -ESRCH;
	else if (syscall(SYS_pidfd_send_signal, fd, SIGCONT, NULL, 0))
		err = -errno;
	close(fd);
	return err;
}

/* Continues the process of slot s (word w, HELD) when it wins the slot:
 * cont_ts is set first, so that a loser reads the winner's. */
static bool slot_continue(struct gt_hold_slot *s, uint64_t w, uint64_t now)
{
	pid_t pid = (pid_t)__atomic_load_n(&s->pid, __ATOMIC_ACQUIRE);
	uint64_t start = __atomic_load_n(&s->start_boottime, __ATOMIC_ACQUIRE);

	/* pid and start belong to hold w only when the word did not change
	 * while they were read */
	if (slot_load(&s->word) != w || !pid)
		return false;
	__atomic_store_n(&s->cont_ts, now, __ATOMIC_RELEASE);
	if (!slot_take(s, w))
		return false;
	hold__continue_pid(pid, start);
	return true;
}

/* ---- the watchdog (its own process) ---- */

/* Continues what is held past the bound, or everything once the recorder
 * is gone; returns how many it continued. */
static unsigned watchdog_scan(struct gt_hold_slot *slots, uint64_t bound_ns, bool gone)
{
	uint64_t now = clock__mono_ns();
	unsigned n = 0;

	for (unsigned i = 0; i < GT_HOLD_SLOTS; i++) {
		struct gt_hold_slot *s = &slots[i];
		uint64_t w = slot_load(&s->word);

		if (GT_SLOT_STATE(w) != GT_SLOT_HELD)
			continue;
		if (!gone && now - __atomic_load_n(&s->stop_ts, __ATOMIC_ACQUIRE) < bound_ns)
			continue;
		n += slot_continue(s, w, now);
	}
	return n;
}

static void __attribute__((noreturn)) watchdog_main(int rfd, struct gt_hold_slot *slots,
						     volatile __u64 *heartbeat, uint64_t bound_ns)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU,
				       SIGPIPE, SIGUSR1, SIGUSR2 };
	uint64_t gone_at = 0;
	unsigned after = 0;
	int null;
	sigset_t none;

	/* the recorder's signals (Ctrl-C, systemd's SIGTERM, a trigger's
	 * SIGUSR1 to every gtrace-bpf) are not for it: it ends with the
	 * recorder, after the holds */
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "gtrace-watchdog");
	/* only the pipe and stderr (for its one line): no BPF link, ring
	 * buffer, trace file or socket of the recorder's stays open here */
	if (rfd != 3) {
		dup2(rfd, 3);
		rfd = 3;
	}
	syscall(SYS_close_range, 4u, ~0u, 0u);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (null > 3)
			close(null);
	}
	/* nothing of it depends on the directory: it just keeps no mount busy */
	null = chdir("/");
	(void)null;
	for (;;) {
		struct pollfd p = { .fd = rfd, .events = POLLIN };
		char c;

		if (poll(&p, 1, WATCHDOG_POLL_MS) > 0 && !gone_at && read(rfd, &c, 1) <= 0)
			gone_at = clock__mono_ns();
		after += watchdog_scan(slots, bound_ns, gone_at != 0);
		if (gone_at) {
			uint64_t now = clock__mono_ns(), hb = *heartbeat;

			/* no hold begins once the heartbeat is 0 (a clean end) or
			 * stale (a killed recorder): one more look after that */
			if (now >= gone_at + WATCHDOG_LINGER_NS &&
			    (!hb || now >= hb + GT_HOLD_STALE_NS + WATCHDOG_LINGER_NS)) {
				after += watchdog_scan(slots, bound_ns, true);
				break;
			}
		}
	}
	if (after && *heartbeat)
		pr_err("the recorder is gone: continued %u held process%s", after,
			after == 1 ? "" : "es");
	_exit(0);
}

/* ---- the recorder's side ---- */

int hold__new(const struct hold_opts *o, struct hold **out)
{
	struct hold *h = calloc(1, sizeof(*h));
	int fds[2] = { -1, -1 }, err = 0;
	pid_t pid;

	*out = h;
	if (!h)
		return -ENOMEM;
	h->o = *o;
	h->pipe_wr = -1;
	h->watchdog = -1;
	h->map_len = (sizeof(struct gt_hold_table) + 4095) & ~4095ul;
	h->slots = mmap(NULL, h->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, o->slots_fd, 0);
	if (h->slots == MAP_FAILED) {
		h->slots = NULL;
		err = -errno;
		pr_warn("failed to map the hold slots: %s; processes that open a libcuda without probes "
			"are not held, their first calls may be missing", strerror(-err));
		return 0;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		err = -errno;
	} else {
		pid = fork();
		if (pid == 0) {
			close(fds[1]);
			watchdog_main(fds[0], h->slots, o->heartbeat, o->bound_ns);
		}
		if (pid < 0)
			err = -errno;
		close(fds[0]);
		if (!err) {
			h->watchdog = pid;
			h->pipe_wr = fds[1];
			h->st.watchdog = true;
			return 0;
		}
		close(fds[1]);
	}
	pr_warn("failed to start the hold watchdog: %s; processes that open a libcuda without probes are "
		"not held, their first calls may be missing", strerror(-err));
	return 0;
}

void hold__enable(struct hold *h, uint64_t now)
{
	if (!h || h->watchdog < 0)
		return;
	h->enabled = true;
	*h->o.heartbeat = now;
	*h->o.hold_on = 1;
}

void hold__heartbeat(struct hold *h, uint64_t now)
{
	if (h && h->enabled)
		*h->o.heartbeat = now;
}

void hold__tick(struct hold *h)
{
	uint64_t now = clock__mono_ns();
	int status;

	if (!h)
		return;
	if (h->watchdog > 0 && waitpid(h->watchdog, &status, WNOHANG) == h->watchdog) {
		/* without it a SIGKILLed recorder would leave a process stopped */
		*h->o.hold_on = 0;
		h->watchdog = -1;
		h->st.watchdog = false;
		pr_warn("the hold watchdog ended (%s %d): processes that open a libcuda without probes are "
			"no longer held, their first calls may be missing",
			WIFSIGNALED(status) ? "signal" : "status",
			WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	/* a slot the watchdog continued whose record never came (none is
	 * submitted without one, but a slot must not be lost for good) */
	for (unsigned i = 0; h->slots && i < GT_HOLD_SLOTS; i++) {
		struct gt_hold_slot *s = &h->slots[i];
		__u64 w = slot_load(&s->word);

		if (GT_SLOT_STATE(w) == GT_SLOT_CONTINUED && now - s->stop_ts > SLOT_FORGET_NS &&
		    __atomic_compare_exchange_n(&s->word, &w, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			__atomic_store_n(&s->pid, 0, __ATOMIC_RELEASE);
	}
}

bool hold__file_state(struct hold *h, const struct gt_file_key *k, struct gt_file_state *st)
{
	return h && !bpf_map_lookup_elem(h->o.files_fd, k, st);
}

static void note_key(struct hold *h, const struct gt_file_key *k, uint32_t kind, uint64_t since)
{
	struct gt_file_state st = { .since = since, .kind = kind }, old;

	if (!bpf_map_lookup_elem(h->o.files_fd, k, &old) && old.kind == GT_FILE_PROBED)
		return;
	/* a full map only costs holds that are not needed: the recorder finds
	 * the file attached and continues the process at once */
	bpf_map_update_elem(h->o.files_fd, k, &st, BPF_ANY);
}

void hold__note_file(struct hold *h, const char *path, const struct gt_file_key *seen, uint32_t kind,
		     uint64_t since)
{
	struct gt_file_key k = { 0 };
	struct stat sb;

	if (!h)
		return;
	if (path && !stat(path, &sb)) {
		k.ino = sb.st_ino;
		k.dev = kdev__of(sb.st_dev);
		note_key(h, &k, kind, since);
	}
	/* the file as the opener's kernel saw it: an overlay's or a btrfs
	 * subvolume's device is not the one stat gives */
	if (seen && (seen->ino || seen->dev))
		note_key(h, seen, kind, since);
}

/* True when pid is stopped, or its SIGSTOP still pending: a stop that a
 * kernel ignored (one that refuses it to a PID namespace's init, say)
 * leaves neither, and the process ran on. */
static bool stopped(pid_t pid)
{
	char buf[2048], *p;
	unsigned long long mask;
	const char *f = procfs__stat_fields(pid, buf, sizeof(buf));
	FILE *st;
	bool pending = false;

	if (f && (f[1] == 'T' || f[1] == 't'))
		return true;
	snprintf(buf, sizeof(buf), "/proc/%d/status", (int)pid);
	st = fopen(buf, "re");
	if (!st)
		return false;
	while (!pending && fgets(buf, sizeof(buf), st)) {
		if (strncmp(buf, "ShdPnd:", 7) && strncmp(buf, "SigPnd:", 7))
			continue;
		p = buf + 7;
		pending = sscanf(p, "%llx", &mask) == 1 && (mask & (1ull << (SIGSTOP - 1)));
	}
	fclose(st);
	return pending;
}

void hold__release(struct hold *h, struct gt_libload *l)
{
	struct gt_hold_slot *s = NULL;
	uint64_t now = clock__mono_ns(), w;

	if (!h || !h->slots || (l->outcome != GT_LL_HELD && l->outcome != GT_LL_ATTACH_FAILED))
		return;
	for (unsigned i = 0; i < GT_HOLD_SLOTS && !s; i++) {
		struct gt_hold_slot *c = &h->slots[i];

		if (__atomic_load_n(&c->pid, __ATOMIC_ACQUIRE) == l->hdr.pid && c->stop_ts == l->hdr.ts &&
		    GT_SLOT_STATE(slot_load(&c->word)) != GT_SLOT_FILLING)
			s = c;
	}
	if (!s)
		return;	/* an open of a file that failed before: never held */
	w = slot_load(&s->word);
	if (GT_SLOT_STATE(w) == GT_SLOT_HELD && l->outcome == GT_LL_HELD && !stopped(l->hdr.pid)) {
		/* it never stopped: what it ran before the probes is a gap */
		slot_continue(s, w, now);
		l->outcome = GT_LL_SIGNAL;
		l->cont_ts = 0;
	} else if (GT_SLOT_STATE(w) == GT_SLOT_HELD && slot_continue(s, w, now)) {
		l->cont_ts = now;
	} else {
		/* the watchdog was first: at the bound */
		l->cont_ts = __atomic_load_n(&s->cont_ts, __ATOMIC_ACQUIRE);
		if (!l->cont_ts)
			l->cont_ts = now;
		if (l->outcome == GT_LL_HELD && (!l->end_ts || l->end_ts > l->cont_ts))
			l->outcome = GT_LL_TIMEOUT;
	}
	__atomic_store_n(&s->word, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->pid, 0, __ATOMIC_RELEASE);
}

void hold__count(struct hold *h, const struct gt_libload *l)
{
	uint64_t from, to;

	if (!h)
		return;
	switch (l->outcome) {
	case GT_LL_HELD:
		h->st.held++;
		if (l->cont_ts > l->hdr.ts) {
			h->st.hold_ns_sum += l->cont_ts - l->hdr.ts;
			if (l->cont_ts - l->hdr.ts > h->st.hold_ns_max)
				h->st.hold_ns_max = l->cont_ts - l->hdr.ts;
		}
		break;
	case GT_LL_TIMEOUT:
		h->st.timeouts++;
		break;
	case GT_LL_ATTACH_FAILED:
		h->st.attach_failed++;
		break;
	default:
		h->st.not_held++;
		break;
	}
	if (!gt_libload__gap(l, UINT64_MAX, &from, &to))
		return;
	if (!h->st.gaps++) {
		h->st.first_pid = l->hdr.pid;
		h->st.first_outcome = l->outcome;
		snprintf(h->st.first_path, sizeof(h->st.first_path), "%.*s", (int)l->len, l->path);
	}
}

void hold__stats(const struct hold *h, struct hold_stats *s)
{
	if (!h) {
		memset(s, 0, sizeof(*s));
		return;
	}
	*s = h->st;
}

void hold__free(struct hold *h)
{
	if (!h)
		return;
	if (h->slots) {
		/* no hold begins from here on, and none is left behind */
		*h->o.hold_on = 0;
		*h->o.heartbeat = 0;
		for (unsigned i = 0; i < GT_HOLD_SLOTS; i++) {
			struct gt_hold_slot *s = &h->slots[i];
			uint64_t w = slot_load(&s->word);

			if (GT_SLOT_STATE(w) == GT_SLOT_HELD)
				slot_continue(s, w, clock__mono_ns());
		}
		munmap(h->slots, h->map_len);
	}
	/* the watchdog sees its pipe close, looks once more and ends; it is
	 * not waited for (it outlives us by its linger at most) */
	if (h->pipe_wr >= 0)
		close(h->pipe_wr);
	free(h);
}
