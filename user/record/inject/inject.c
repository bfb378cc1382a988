// SPDX-License-Identifier: MIT
/*
 * Loading a library into a running process (inject.h): ptrace, a system
 * call boundary, raw system calls at a `syscall` instruction of the
 * process' libc, a memfd, and one call of dlopen.  Which thread to hold
 * (not one inside the CUDA driver) is threads.c's.
 *
 * Written here rather than taken from a library: the few projects that do
 * this (debuggers, checkpointing tools) do not offer it as one; what it
 * needs is the kernel's ptrace interface and the x86-64 calling convention.
 */
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#if defined(__x86_64__)
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#endif
#include "record/inject/inject.h"
#include "record/inject/inject_int.h"
#include "record/probes/elf_syms.h"

/* A /proc file's first line starting with key ("TracerPid:"): its value. */
static long status_field(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n)) {
			v = strtol(line + n, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* One mapping of /proc/PID/maps. */
struct map {
	uint64_t start, end, pgoff;
	char perms[5];
	char path[256];
};

/* The mappings of pid's libc (its file name libc.so.* or libc-*.so), at
 * most max; also whether a dynamic loader is mapped. Returns the count. */
static int libc_maps(pid_t pid, struct map *out, int max, bool *loader)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	*loader = false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct map m = { 0 };
		const char *base;
		int off = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %*s %n", &m.start, &m.end,
			   m.perms, &m.pgoff, &off) < 4 || !off)
			continue;
		snprintf(m.path, sizeof(m.path), "%s", line + off);
		m.path[strcspn(m.path, "\n")] = 0;
		base = strrchr(m.path, '/') ? strrchr(m.path, '/') + 1 : m.path;
		if (!strncmp(base, "ld-linux", 8) || !strncmp(base, "ld-musl", 7))
			*loader = true;
		if ((!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5)) && n < max)
			out[n++] = m;
	}
	fclose(f);
	return n;
}

/* Where Yama's ptrace_scope is read: the kernel's, or the tests' file
 * (inject__set_yama_path). */
static const char *yama_path = "/proc/sys/kernel/yama/ptrace_scope";

void inject__set_yama_path(const char *path)
{
	yama_path = path ? path : "/proc/sys/kernel/yama/ptrace_scope";
}

int inject__check(pid_t pid, char *why, size_t len)
{
	struct map m[16];
	char path[64], scope[8] = "";
	struct stat st;
	bool loader;
	long tracer;
	FILE *f;
	int n;

#if !defined(__x86_64__)
	return inject__fail(why, len, -ENOTSUP, "loading a library into a running process is built for x86-64 only");
#endif
	if (pid <= 0 || pid == getpid())
		return inject__fail(why, len, -EINVAL, "pid %d: not a process this can load a library into", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st))
		return inject__fail(why, len, -errno, "pid %d: %s", (int)pid,
			    errno == ENOENT ? "no such process" : strerror(errno));
	if (st.st_mode & (S_ISUID | S_ISGID))
		return inject__fail(why, len, -EPERM, "pid %d runs a setuid or setgid program: not attached to",
			    (int)pid);
	f = fopen(yama_path, "re");
	if (f) {
		if (!fgets(scope, sizeof(scope), f))
			scope[0] = 0;
		fclose(f);
	}
	if (scope[0] == '3')
		return inject__fail(why, len, -EPERM, "kernel.yama.ptrace_scope is 3: no process can be attached to "
			    "(lower it to 1 or 2 to attach as root)");
	tracer = status_field(pid, "TracerPid:");
	if (tracer > 0)
		return inject__fail(why, len, -EBUSY, "pid %d is already traced by pid %ld (a debugger or another "
			    "tool): not attached to", (int)pid, tracer);
	n = libc_maps(pid, m, 16, &loader);
	if (n < 0)
		return inject__fail(why, len, n, "pid %d: cannot read its mappings: %s", (int)pid, strerror(-n));
	if (!n || !loader)
		return inject__fail(why, len, -ENOEXEC, "pid %d is a static program (no %s mapped): no library can be "
			    "loaded into it", (int)pid, !n ? "libc" : "dynamic loader");
	return 0;
}

const char *inject__signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGABRT: return "SIGABRT";
	case SIGKILL: return "SIGKILL";
	case SIGTERM: return "SIGTERM";
	default: return "a signal";
	}
}

bool inject__fault_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
}

#if defined(__x86_64__)

#define ERESTARTSYS_		512
#define ERESTARTNOINTR_		513
#define ERESTARTNOHAND_		514
#define ERESTART_RESTARTBLOCK_	516
#define XSTATE_MAX		(64 * 1024)

/* A stopped thread: its registers to put back, how to wait for it. */
struct target {
	pid_t pid;
	uint64_t deadline;		/* CLOCK_MONOTONIC ns */
	struct user_regs_struct back;	/* what it resumes with */
	void *xstate;			/* its vector registers */
	struct iovec xv;
	uint64_t gadget;		/* a `syscall` instruction in its libc */
	int pending_sig;		/* a signal it got meanwhile, given back at the detach */
	int died;			/* gone: the signal that killed it, -1 it exited */
	char fault[192];		/* the first fault of its own in a call of ours: where */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Waits for the next stop of t (until its deadline): 0 and the status, or
 * -ETIMEDOUT, -ESRCH when it is gone. */
static int wait_stop(struct target *t, int *status)
{
	for (;;) {
		pid_t r = waitpid(t->pid, status, __WALL | WNOHANG);

		if (r == t->pid) {
			if (WIFEXITED(*status) || WIFSIGNALED(*status)) {
				t->died = WIFSIGNALED(*status) ? WTERMSIG(*status) : -1;
				return -ESRCH;
			}
			return 0;
		}
		if (r < 0 && errno != EINTR)
			return -errno;
		if (mono_ns() >= t->deadline)
			return -ETIMEDOUT;
		usleep(500);
	}
}

/* Brings t's thread to a system call in which it may be borrowed: t->back
 * is then what it resumes with (the call made again). */
static int to_boundary(struct target *t, char *why, size_t len)
{
	struct user_regs_struct r;
	uint64_t deadline = t->deadline;
	int st, err;

	if (ptrace(PTRACE_INTERRUPT, t->pid, 0, 0))
		return inject__fail(why, len, -errno, "PTRACE_INTERRUPT: %s", strerror(errno));
	if ((err = wait_stop(t, &st)))
		return inject__fail(why, len, err, "pid %d did not stop", (int)t->pid);
	if (ptrace(PTRACE_GETREGS, t->pid, 0, &r))
		return inject__fail(why, len, -errno, "PTRACE_GETREGS: %s", strerror(errno));
	/* stopped inside a call that the kernel would restart */
	if ((long)r.orig_rax >= 0 && !unsafe_call((long)r.orig_rax) &&
	    ((long)r.rax == -ERESTARTSYS_ || (long)r.rax == -ERESTARTNOINTR_ ||
	     (long)r.rax == -ERESTARTNOHAND_ || (long)r.rax == -ERESTART_RESTARTBLOCK_)) {
		t->back = r;
		t->back.rax = (long)r.rax == -ERESTART_RESTARTBLOCK_ ? SYS_restart_syscall : r.orig_rax;
		t->back.rip -= 2;
		t->back.orig_rax = (unsigned long long)-1;
		return 0;
	}
	/* elsewhere: on to its next call, which is skipped now and made
	 * again when it resumes */
	for (;;) {
		int sig = 0;

		if (ptrace(PTRACE_SYSCALL, t->pid, 0, 0))
			return inject__fail(why, len, -errno, "PTRACE_SYSCALL: %s", strerror(errno));
		if ((err = wait_stop(t, &st)))
			return inject__fail(why, len, err, "pid %d made no system call within the wait", (int)t->pid);
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(st);
			if (sig != SIGTRAP && sig != SIGSTOP && (st >> 16) == 0)
				t->pending_sig = sig;	/* given back at the detach */
			continue;
		}
		if (ptrace(PTRACE_GETREGS, t->pid, 0, &r))
			return inject__fail(why, len, -errno, "PTRACE_GETREGS: %s", strerror(errno));
		if (unsafe_call((long)r.orig_rax)) {
			/* let this one run: to its exit stop, then the next */
			if (ptrace(PTRACE_SYSCALL, t->pid, 0, 0) || wait_stop(t, &st))
				return inject__fail(why, len, -ETIMEDOUT, "pid %d: its memory calls did not end",
					    (int)t->pid);
			continue;
		}
		t->back = r;
		t->back.rax = r.orig_rax;
		t->back.rip -= 2;
		t->back.orig_rax = (unsigned long long)-1;
		r.orig_rax = (unsigned long long)-1;	/* skipped: made again at the end */
		if (ptrace(PTRACE_SETREGS, t->pid, 0, &r))
			return inject__fail(why, len, -EIO, "pid %d: cannot hold it at its system call", (int)t->pid);
		/* the skipped call's exit comes at once: its own time for it */
		t->deadline = mono_ns() + 1000000000ull;
		if (ptrace(PTRACE_SYSCALL, t->pid, 0, 0) || wait_stop(t, &st))
			return inject__fail(why, len, -EIO, "pid %d: lost at its system call", (int)t->pid);
		t->deadline = deadline;
		return 0;
	}
}

/* What the last load in this thread borrowed (inject__last). */
static _Thread_local struct inject_last last;

void inject__last(struct inject_last *out)
{
	*out = last;
}

/* Puts t's thread back as it was at its boundary and lets it go. */
static void let_back(struct target *t)
{
	ptrace(PTRACE_SETREGS, t->pid, 0, &t->back);
	ptrace(PTRACE_DETACH, t->pid, 0, t->pending_sig);
	t->pending_sig = 0;
}

/* How long a thread outside the driver is waited for (at most half the
 * whole wait) before a thread waiting in one of the driver's own calls is
 * taken: a program whose only thread launches and synchronizes makes its
 * system calls in the driver alone (its waits), and the agent has been
 * started from such waits without harm; where any other thread waits, it
 * goes first. */
#define INSIDE_AFTER_NS 500000000ull

/* Seizes a thread of pid that may be borrowed and brings it to a system
 * call (t->pid, t->back): outside the driver's libraries, the threads found
 * inside them passed over, the whole process again every 10 ms; after
 * INSIDE_AFTER_NS one inside them too, until t->deadline. 0, or -errno and
 * why: nothing of the process held. */
static int borrow_thread(pid_t pid, struct target *t, char *why, size_t len)
{
	struct drv_ranges d;
	pid_t cand[64];
	int err = 0, skipped = 0, n;
	uint64_t deadline = t->deadline, now = mono_ns(), grace = deadline > now ? (deadline - now) / 2 : 0;
	uint64_t inside_at = now + (grace < INSIDE_AFTER_NS ? grace : INSIDE_AFTER_NS);
	enum drv_where w;
	bool inside;

	memset(&last, 0, sizeof(last));
	for (;;) {
		inside = mono_ns() >= inside_at;
		inject__driver_ranges(pid, &d);
		n = inject__pick_threads(pid, &d, inside, cand, (int)(sizeof(cand) / sizeof(cand[0])), &skipped);
		last.passed_over += skipped;
		if (!n && !skipped)
			cand[n++] = pid;	/* none waits: the main thread, to its next call */
		for (int i = 0; i < n; i++) {
			t->pid = cand[i];
			t->pending_sig = 0;
			if (ptrace(PTRACE_SEIZE, t->pid, 0, PTRACE_O_TRACESYSGOOD)) {
				err = inject__fail(why, len, -errno, "cannot attach to pid %d: %s", (int)pid, strerror(errno));
				if (err == -EPERM)
					break;	/* not a thread's end: the process' */
				continue;
			}
			t->deadline = deadline;
			if ((err = to_boundary(t, why, len)))
				return err;	/* held where it is: let go by the caller */
			w = inject__in_driver(pid, &d, t->back.rsp, t->back.rip);
			if (w != DRV_IN || inside) {
				last.tid = t->pid;
				last.maybe = w == DRV_MAYBE;
				last.inside = w == DRV_IN;
				return 0;
			}
			last.passed_over++;
			let_back(t);
		}
		if (mono_ns() >= deadline)
			break;
		usleep(10000);
	}
	t->pid = 0;
	return err ? err : inject__fail(why, len, -ESRCH, "pid %d: no thread could be held", (int)pid);
}

/* Runs one system call in t at its gadget; its result in *ret. */
static int remote_syscall(struct target *t, long nr, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			  uint64_t e, uint64_t f, long *ret)
{
	struct user_regs_struct r = t->back;
	int st, err;

	t->deadline = mono_ns() + 1000000000ull;	/* one instruction */
	r.rax = (unsigned long long)nr;
	r.rdi = a, r.rsi = b, r.rdx = c, r.r10 = d, r.r8 = e, r.r9 = f;
	r.rip = t->gadget;
	r.orig_rax = (unsigned long long)-1;
	if (ptrace(PTRACE_SETREGS, t->pid, 0, &r) || ptrace(PTRACE_SINGLESTEP, t->pid, 0, 0))
		return -errno;
	for (;;) {
		if ((err = wait_stop(t, &st)))
			return err;
		if (WSTOPSIG(st) == SIGTRAP)
			break;
		t->pending_sig = WSTOPSIG(st);	/* not delivered now: at the detach */
		if (ptrace(PTRACE_SINGLESTEP, t->pid, 0, 0))
			return -errno;
	}
	if (ptrace(PTRACE_GETREGS, t->pid, 0, &r))
		return -errno;
	*ret = (long)r.rax;
	return 0;
}

static int write_remote(pid_t pid, uint64_t addr, const void *buf, size_t n)
{
	struct iovec l = { (void *)buf, n }, r = { (void *)(uintptr_t)addr, n };

	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* The call's two pages: A (read-write) holds the strings, the result and
 * the registers to resume with; B (read-execute) a trampoline the call returns
 * to, which stores the result and resumes the thread as it was, by itself:
 * a call that outlasts the wait (the thread then let go) returns into the
 * program unharmed, leaving these pages and the memfd behind. */
#define PG		4096
#define A_NAME		0	/* "gtrace-agent" */
#define A_PATH		64	/* "/proc/self/fd/N" */
#define A_RESULT	128	/* the call's return value */
#define A_REGS		256	/* rflags, rax, rbx, rcx, rdx, rsi, rdi, rbp, r8 .. r15 */
#define A_FN		512	/* the library function's name (inject__load) */
#define A_ARG		1024	/* ... and its argument */
#define A_SP		(A_REGS + 16 * 8)
#define A_IP		(A_SP + 8)

static size_t put_rip_op(unsigned char *code, size_t at, const unsigned char *op, size_t oplen,
			 uint64_t b, uint64_t target)
{
	int32_t disp = (int32_t)(int64_t)(target - (b + at + oplen + 4));

	memcpy(code + at, op, oplen);
	memcpy(code + at + oplen, &disp, 4);
	return at + oplen + 4;
}

/* The trampoline at b (page A at a) and the registers it resumes with. */
static int write_trampoline(struct target *t, uint64_t a, uint64_t b)
{
	static const unsigned char store_rax[] = { 0x48, 0x89, 0x05 }, lea_rsp[] = { 0x48, 0x8d, 0x25 },
				   load_rsp[] = { 0x48, 0x8b, 0x25 }, jmp_ind[] = { 0xff, 0x25 },
				   pops[] = { 0x9d, 0x58, 0x5b, 0x59, 0x5a, 0x5e, 0x5f, 0x5d, 0x41, 0x58, 0x41,
					      0x59, 0x41, 0x5a, 0x41, 0x5b, 0x41, 0x5c, 0x41, 0x5d, 0x41, 0x5e,
					      0x41, 0x5f };
	const struct user_regs_struct *r = &t->back;
	uint64_t regs[18] = { r->eflags, r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->r8,
			      r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rsp, r->rip };
	unsigned char code[64];
	size_t n = 0;

	n = put_rip_op(code, n, store_rax, sizeof(store_rax), b, a + A_RESULT);
	n = put_rip_op(code, n, lea_rsp, sizeof(lea_rsp), b, a + A_REGS);
	memcpy(code + n, pops, sizeof(pops));
	n += sizeof(pops);
	n = put_rip_op(code, n, load_rsp, sizeof(load_rsp), b, a + A_SP);
	n = put_rip_op(code, n, jmp_ind, sizeof(jmp_ind), b, a + A_IP);
	if (write_remote(t->pid, a + A_REGS, regs, sizeof(regs)) || write_remote(t->pid, b, code, n))
		return -EFAULT;
	return 0;
}

/* addr in pid as "FILE+0xOFFSET" (the file's base name, the offset in the
 * file: what a symbol table or a disassembler takes), else the bare address.
 * The names are the process' own: printable characters only. */
static void where_in(pid_t pid, uint64_t addr, char *out, size_t len)
{
	char path[64], line[512];
	FILE *f;

	snprintf(out, len, "0x%" PRIx64, addr);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, pgoff;
		char *name, *del;
		int off = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &start, &end, &pgoff,
			   &off) < 3 || addr < start || addr >= end)
			continue;
		name = line + off;
		name[strcspn(name, "\n")] = 0;
		if ((del = strstr(name, " (deleted)")))
			*del = 0;
		if (strrchr(name, '/'))
			name = strrchr(name, '/') + 1;
		for (char *c = name; *c; c++)
			if (!isprint((unsigned char)*c))
				*c = '?';
		if (off && *name)
			snprintf(out, len, "%.120s+0x%" PRIx64, name, addr - start + pgoff);
		break;
	}
	fclose(f);
}

/* A signal the borrowed thread got in a call of ours: a fault there (a
 * crash in the loaded library, or in what it called) is noted with where
 * it happened, before it is delivered, while the process can still be
 * looked at. */
static void note_fault(struct target *t, int sig)
{
	struct user_regs_struct r;
	siginfo_t si;
	char at[160];

	if (t->fault[0] || !inject__fault_signal(sig))
		return;
	if (ptrace(PTRACE_GETREGS, t->pid, 0, &r))
		r.rip = 0;
	where_in(t->pid, r.rip, at, sizeof(at));
	if ((sig == SIGSEGV || sig == SIGBUS) && !ptrace(PTRACE_GETSIGINFO, t->pid, 0, &si) && si.si_code > 0)
		snprintf(t->fault, sizeof(t->fault), "%s at %s, address 0x%" PRIxPTR, inject__signal_name(sig), at,
			 (uintptr_t)si.si_addr);
	else
		snprintf(t->fault, sizeof(t->fault), "%s at %s", inject__signal_name(sig), at);
}

/* Why t's process is gone after a call of ours (what) ran in it: the fault
 * it took there, else how it ended (another thread's fault, a kill).
 * -EOWNERDEAD: it died under the call. */
static int died_in(const struct target *t, pid_t pid, const char *what, char *why, size_t len)
{
	char how[64];

	if (t->died > 0)
		snprintf(how, sizeof(how), "killed by %s (%d)", inject__signal_name(t->died), t->died);
	else
		snprintf(how, sizeof(how), "it exited");
	if (t->fault[0])
		return inject__fail(why, len, -EOWNERDEAD, "pid %d died while %s ran in it (thread %d): %s; %s", (int)pid,
				    what, (int)t->pid, t->fault, how);
	return inject__fail(why, len, -EOWNERDEAD, "pid %d died while %s ran in it (thread %d): %s, not by a fault "
			    "of that thread", (int)pid, what, (int)t->pid, how);
}

/* Calls fn(a0, a1) in t on its own stack, below the red zone, returning to
 * the trampoline at b, and waits (until the deadline) for the thread to be back
 * at its own system call: *ret then. -ETIMEDOUT: the call is still running
 * (the caller lets the thread go: the trampoline resumes it). */
static int remote_call(struct target *t, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a, uint64_t b,
		       uint64_t *ret)
{
	struct user_regs_struct r = t->back;
	struct iovec l, rv;
	int st, err;

	r.rsp = ((r.rsp - 512) & ~15ull) - 8;
	l = (struct iovec){ &b, sizeof(b) };
	rv = (struct iovec){ (void *)(uintptr_t)r.rsp, sizeof(b) };
	if (process_vm_writev(t->pid, &l, 1, &rv, 1, 0) != sizeof(b))
		return -errno;
	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1;
	if (ptrace(PTRACE_SETREGS, t->pid, 0, &r) || ptrace(PTRACE_SYSCALL, t->pid, 0, 0))
		return -errno;
	for (;;) {
		int sig = 0;

		if ((err = wait_stop(t, &st)))
			return err;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			/* the call's own system calls, until the trampoline makes the
			 * thread's again: there, at its stack, it is done */
			if (ptrace(PTRACE_GETREGS, t->pid, 0, &r))
				return -errno;
			if (r.rip == t->back.rip + 2 && r.rsp == t->back.rsp)
				break;
		} else if ((st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP) {
			sig = WSTOPSIG(st);	/* its handler runs on top, as anywhere */
			note_fault(t, sig);
		}
		if (ptrace(PTRACE_SYSCALL, t->pid, 0, sig))
			return -errno;
	}
	/* at the entry of its own call again, the trampoline's registers: that call
	 * is skipped (its exit stop next) and made again at the detach */
	r.orig_rax = (unsigned long long)-1;
	t->deadline = mono_ns() + 1000000000ull;
	if (ptrace(PTRACE_SETREGS, t->pid, 0, &r) || ptrace(PTRACE_SYSCALL, t->pid, 0, 0) ||
	    wait_stop(t, &st))
		return -EIO;
	l = (struct iovec){ ret, sizeof(*ret) };
	rv = (struct iovec){ (void *)(uintptr_t)(a + A_RESULT), sizeof(*ret) };
	if (process_vm_readv(t->pid, &l, 1, &rv, 1, 0) != sizeof(*ret))
		return -EFAULT;
	return 0;
}

/* Where pid's libc has what the load calls. */
struct libc_fns {
	uint64_t dlopen, dlerror, dlsym;	/* 0: none (dlopen: then __libc_dlopen_mode) */
	uint64_t gadget;			/* a `syscall` instruction */
};

/* The address in pid of file offset off of a mapping of m (n of them), 0 none. */
static uint64_t at_offset(const struct map *m, int n, uint64_t off)
{
	for (int i = 0; off && i < n; i++)
		if (strchr(m[i].perms, 'x') && off >= m[i].pgoff && off < m[i].pgoff + (m[i].end - m[i].start))
			return m[i].start + off - m[i].pgoff;
	return 0;
}

static int find_libc(pid_t pid, struct libc_fns *fn, char *why, size_t len)
{
	static const char *const names[] = { "dlopen", "__libc_dlopen_mode", "dlerror", "dlsym" };
	uint64_t off[4] = { 0 };
	struct map m[16];
	char file[128];
	bool loader;
	int n, i, got = -1;

	memset(fn, 0, sizeof(*fn));
	n = libc_maps(pid, m, 16, &loader);
	if (n <= 0)
		return inject__fail(why, len, -ENOEXEC, "pid %d: no libc mapped", (int)pid);
	for (i = 0; i < n && got < 0; i++) {
		if (m[i].pgoff)
			continue;
		snprintf(file, sizeof(file), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m[i].start,
			 m[i].end);
		got = elf_syms__resolve(file, names, 4, off);
	}
	if (got <= 0 || (!off[0] && !off[1]))
		return inject__fail(why, len, -ENOENT, "pid %d: its libc (%s) has no dlopen", (int)pid, m[0].path);
	fn->dlopen = at_offset(m, n, off[0] ? off[0] : off[1]);
	fn->dlerror = at_offset(m, n, off[2]);
	fn->dlsym = at_offset(m, n, off[3]);
	for (i = 0; i < n && !fn->gadget; i++) {
		/* a `syscall` (0f 05) in its code */
		size_t sz = m[i].end - m[i].start > (1u << 20) ? (1u << 20) : m[i].end - m[i].start;
		unsigned char *buf;
		struct iovec l, r;
		ssize_t got_b;

		if (!strchr(m[i].perms, 'x') || !(buf = malloc(sz)))
			continue;
		l = (struct iovec){ buf, sz };
		r = (struct iovec){ (void *)(uintptr_t)m[i].start, sz };
		got_b = process_vm_readv(pid, &l, 1, &r, 1, 0);
		for (ssize_t k = 0; k + 1 < got_b; k++)
			if (buf[k] == 0x0f && buf[k + 1] == 0x05) {
				fn->gadget = m[i].start + (uint64_t)k;
				break;
			}
		free(buf);
	}
	if (!fn->dlopen || !fn->gadget)
		return inject__fail(why, len, -ENOENT, "pid %d: its libc's %s not found in its mappings", (int)pid,
			    !fn->dlopen ? "dlopen" : "system call instruction");
	return 0;
}

/* Copies the file at path into fd (another process' memfd, by /proc). */
static int copy_into(const char *path, pid_t pid, long fd)
{
	char dst[64], buf[65536];
	int in, out, err = 0;
	ssize_t n;

	snprintf(dst, sizeof(dst), "/proc/%d/fd/%ld", (int)pid, fd);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CLOEXEC);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	close(in);
	close(out);
	return err;
}

static int load(pid_t pid, const char *path, const char *soname, const char *fn_name, const char *arg,
		unsigned wait_ms, uint64_t *handle, uint64_t *fn_ret, char *why, size_t len)
{
	struct target t = { .pid = pid };
	struct libc_fns fn;
	uint64_t a = 0, h = 0;
	char fdpath[64], msg[160] = "";
	long ret, memfd = -1;
	int err, st;

	*handle = 0;
	if (fn_ret)
		*fn_ret = 0;
	if ((err = inject__check(pid, why, len)))
		return err;
	if (access(path, R_OK))
		return inject__fail(why, len, -errno, "%s: %s", path, strerror(errno));
	if ((fn_name && (strlen(fn_name) >= A_ARG - A_FN || (arg && strlen(arg) >= PG - A_ARG))) ||
	    (soname && (strchr(soname, '/') || strlen(soname) >= 64)))
		return inject__fail(why, len, -EINVAL, "a function name, argument or soname not fit to pass");
	if ((err = find_libc(pid, &fn, why, len)))
		return err;
	if (fn_name && !fn.dlsym)
		return inject__fail(why, len, -ENOENT, "pid %d: its libc has no dlsym", (int)pid);
	t.gadget = fn.gadget;
	t.xstate = calloc(1, XSTATE_MAX);
	if (!t.xstate)
		return inject__fail(why, len, -ENOMEM, "out of memory");
	t.xv = (struct iovec){ t.xstate, XSTATE_MAX };
	t.deadline = mono_ns() + (uint64_t)wait_ms * 1000000ull;
	if ((err = borrow_thread(pid, &t, why, len))) {
		if (t.pid)
			goto let_go;	/* held by to_boundary */
		free(t.xstate);
		return err;
	}
	if (ptrace(PTRACE_GETREGSET, t.pid, (void *)NT_X86_XSTATE, &t.xv))
		t.xv.iov_len = 0;
	/* page A for the strings and registers, B for the trampoline */
	err = remote_syscall(&t, SYS_mmap, 0, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     (uint64_t)-1, 0, &ret);
	if (err || ret < 0 || (ret & (PG - 1))) {
		err = inject__fail(why, len, err ? err : -ENOMEM, "pid %d: no pages for the call", (int)pid);
		goto restore;
	}
	a = (uint64_t)ret;
	if (write_trampoline(&t, a, a + PG) ||
	    remote_syscall(&t, SYS_mprotect, a + PG, PG, PROT_READ | PROT_EXEC, 0, 0, 0, &ret) || ret) {
		err = inject__fail(why, len, -EIO, "pid %d: cannot prepare the call", (int)pid);
		goto restore;
	}
	if (soname) {
		/* loaded by an earlier attach (or at the program's start):
		 * the same copy again, no second one in its memory */
		t.deadline = mono_ns() + (uint64_t)wait_ms * 1000000ull;
		if (write_remote(pid, a + A_PATH, soname, strlen(soname) + 1) ||
		    (err = remote_call(&t, fn.dlopen, a + A_PATH, 2 | 4 /* RTLD_NOW | RTLD_NOLOAD */, a, a + PG,
				       &h))) {
			err = inject__fail(why, len, err == -ETIMEDOUT ? err : -EIO, "pid %d: the call of dlopen failed",
				   (int)pid);
			if (err == -ETIMEDOUT)
				goto let_go;
			goto restore;
		}
		if (h)
			goto loaded;
	}
	if (write_remote(pid, a + A_NAME, "gtrace-agent", 13) ||
	    remote_syscall(&t, SYS_memfd_create, a + A_NAME, 1 /* MFD_CLOEXEC */, 0, 0, 0, 0, &memfd) ||
	    memfd < 0) {
		err = inject__fail(why, len, -EIO, "pid %d: memfd_create failed (%ld)", (int)pid, memfd);
		memfd = -1;
		goto restore;
	}
	if ((err = copy_into(path, pid, memfd))) {
		inject__fail(why, len, err, "cannot copy %s into pid %d: %s", path, (int)pid, strerror(-err));
		goto restore;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%ld", memfd);
	if (write_remote(pid, a + A_PATH, fdpath, strlen(fdpath) + 1)) {
		err = inject__fail(why, len, -EIO, "pid %d: cannot write the path", (int)pid);
		goto restore;
	}
	t.deadline = mono_ns() + (uint64_t)wait_ms * 1000000ull;
	err = remote_call(&t, fn.dlopen, a + A_PATH, 2 /* RTLD_NOW */, a, a + PG, &h);
	if (err == -ETIMEDOUT) {
		inject__fail(why, len, err, "pid %d: dlopen did not return within %u ms: the process goes on "
		     "with it (it resumes where it was when it returns)", (int)pid, wait_ms);
		goto let_go;
	}
	if (err == -ESRCH) {
		err = died_in(&t, pid, "dlopen of the library", why, len);
		goto restore;
	}
	if (err) {
		inject__fail(why, len, err, "pid %d: the call of dlopen failed: %s", (int)pid, strerror(-err));
		goto restore;
	}
	if (!h) {
		uint64_t e = 0;
		struct iovec l = { msg, sizeof(msg) - 1 }, r;

		t.deadline = mono_ns() + 1000000000ull;
		if (fn.dlerror && !remote_call(&t, fn.dlerror, 0, 0, a, a + PG, &e) && e) {
			r = (struct iovec){ (void *)(uintptr_t)e, sizeof(msg) - 1 };
			if (process_vm_readv(pid, &l, 1, &r, 1, 0) <= 0)
				msg[0] = 0;
		}
		err = inject__fail(why, len, -ENOEXEC, "pid %d: dlopen of %s failed: %s", (int)pid, path,
			   msg[0] ? msg : "no reason given");
		goto restore;
	}
loaded:
	if (fn_name) {
		/* the library's function, with its argument: name and string in A */
		uint64_t f = 0;

		t.deadline = mono_ns() + (uint64_t)wait_ms * 1000000ull;
		if (write_remote(pid, a + A_FN, fn_name, strlen(fn_name) + 1) ||
		    (arg && write_remote(pid, a + A_ARG, arg, strlen(arg) + 1)) ||
		    (err = remote_call(&t, fn.dlsym, h, a + A_FN, a, a + PG, &f))) {
			err = inject__fail(why, len, err == -ETIMEDOUT ? err : -EIO, "pid %d: dlsym of %s failed", (int)pid,
				   fn_name);
			goto restore;
		}
		if (!f) {
			err = inject__fail(why, len, -ENOENT, "pid %d: %s has no function %s", (int)pid, path, fn_name);
			goto restore;
		}
		t.deadline = mono_ns() + (uint64_t)wait_ms * 1000000ull;
		err = remote_call(&t, f, arg ? a + A_ARG : 0, 0, a, a + PG, fn_ret ? fn_ret : &f);
		if (err == -ETIMEDOUT) {
			inject__fail(why, len, err, "pid %d: %s did not return within %u ms: the process goes on with "
			     "it", (int)pid, fn_name, wait_ms);
			goto let_go;
		}
		if (err == -ESRCH) {
			err = died_in(&t, pid, fn_name, why, len);
			goto restore;
		}
		if (err) {
			inject__fail(why, len, err, "pid %d: the call of %s failed: %s", (int)pid, fn_name, strerror(-err));
			goto restore;
		}
	}
restore:
	if (memfd >= 0)
		remote_syscall(&t, SYS_close, (uint64_t)memfd, 0, 0, 0, 0, 0, &ret);
	if (a)
		remote_syscall(&t, SYS_munmap, a, 2 * PG, 0, 0, 0, 0, &ret);
	if (t.xv.iov_len)
		ptrace(PTRACE_SETREGSET, t.pid, (void *)NT_X86_XSTATE, &t.xv);
	ptrace(PTRACE_SETREGS, t.pid, 0, &t.back);
	ptrace(PTRACE_DETACH, t.pid, 0, t.pending_sig);
	free(t.xstate);
	if (!err)
		*handle = h;
	return err;
let_go:
	/* no state of ours to take back: stopped, it is let go as it is */
	t.deadline = mono_ns() + 1000000000ull;
	if (ptrace(PTRACE_DETACH, t.pid, 0, t.pending_sig) &&
	    !ptrace(PTRACE_INTERRUPT, t.pid, 0, 0) && !wait_stop(&t, &st))
		ptrace(PTRACE_DETACH, t.pid, 0, t.pending_sig);
	free(t.xstate);
	return err;
}

int inject__load(pid_t pid, const char *path, const char *fn_name, const char *arg, unsigned wait_ms,
		 uint64_t *handle, uint64_t *fn_ret, char *why, size_t len)
{
	return load(pid, path, NULL, fn_name, arg, wait_ms, handle, fn_ret, why, len);
}

int inject__load_once(pid_t pid, const char *path, const char *soname, const char *fn_name, const char *arg,
		      unsigned wait_ms, uint64_t *handle, uint64_t *fn_ret, char *why, size_t len)
{
	return load(pid, path, soname, fn_name, arg, wait_ms, handle, fn_ret, why, len);
}

#else

void inject__last(struct inject_last *out)
{
	memset(out, 0, sizeof(*out));
}

int inject__load_once(pid_t pid, const char *path, const char *soname, const char *fn_name, const char *arg,
		      unsigned wait_ms, uint64_t *handle, uint64_t *fn_ret, char *why, size_t len)
{
	(void)soname;
	return inject__load(pid, path, fn_name, arg, wait_ms, handle, fn_ret, why, len);
}

int inject__load(pid_t pid, const char *path, const char *fn_name, const char *arg, unsigned wait_ms,
		 uint64_t *handle, uint64_t *fn_ret, char *why, size_t len)
{
	(void)path;
	(void)fn_name;
	(void)arg;
	(void)wait_ms;
	*handle = 0;
	if (fn_ret)
		*fn_ret = 0;
	return inject__check(pid, why, len);
}

#endif

int inject__dlopen(pid_t pid, const char *path, unsigned wait_ms, uint64_t *handle, char *why,
		   size_t len)
{
	return inject__load(pid, path, NULL, NULL, wait_ms, handle, NULL, why, len);
}
