// SPDX-License-Identifier: MIT
/*
 * A crash's native place, for jobs on the GPU machine that die under an
 * attach (attach_check.sh builds it; attach_jobs.py loads it with ctypes
 * when CRASH_REPORT_LIB names it, after Python's faulthandler is on, and
 * calls crash_report_install): it catches SIGSEGV, SIGBUS, SIGILL, SIGFPE
 * and SIGABRT and writes to stderr the signal, the faulting thread (tid and
 * name), the faulting address, pc, sp and the caller chain as
 * module+offset (libgcc's unwinder, then a scan of the stack's words that
 * point into executable code: libcuda and CUPTI may have no unwind
 * tables), then hands the signal to the handler it replaced (faulthandler:
 * the Python tracebacks) or to the default action.
 *
 *   cc -O2 -shared -fPIC -o crash_report.so tools/gpu/crash_report.c
 *
 * Modules are named from /proc/self/maps, read in the handler with plain
 * system calls: dladdr could wait on the loader's lock a crash in dlopen
 * holds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#define MAPS_MAX (1 << 20)
static char maps[MAPS_MAX];
static struct sigaction prev[32];
static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

static void out(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(2, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static size_t read_maps(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return 0;
	while (n < MAPS_MAX - 1 && (r = read(fd, maps + n, MAPS_MAX - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	maps[n] = 0;
	return n;
}

/* "module+0xOFF" (offset from the module's first mapping) for an address
 * in executable code, or 0 when it is in none. */
static int where(uintptr_t a, char *buf, size_t len)
{
	uintptr_t base = 0;
	char prev_path[256] = "";
	const char *p = maps;

	while (*p) {
		unsigned long lo, hi, off;
		char perm[8], path[256] = "";
		const char *nl = strchr(p, '\n');
		int n = 0;

		if (sscanf(p, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perm, &off, &n) >= 4) {
			if (n) {
				size_t k = 0;

				while (p[n + k] && p[n + k] != '\n' && k < sizeof(path) - 1) {
					path[k] = p[n + k];
					k++;
				}
				path[k] = 0;
			}
			if (strcmp(path, prev_path)) {
				base = lo - off;
				snprintf(prev_path, sizeof(prev_path), "%s", path);
			}
			if (a >= lo && a < hi && perm[2] == 'x') {
				const char *b = strrchr(path, '/');

				snprintf(buf, len, "%s+0x%lx", b ? b + 1 : (*path ? path : "[anon]"),
					 (unsigned long)(a - base));
				return 1;
			}
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

static void on_fatal(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	char line[512], w[300], name[17] = "";
	void *bt[48];
	int n;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP], sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];

	read_maps();
	prctl(PR_GET_NAME, name, 0, 0, 0);
	n = snprintf(line, sizeof(line), "crash_report: signal %d (code %d) in thread %ld '%s' (pid %d): addr %p, pc %s, sp %#lx\n",
		     sig, si->si_code, (long)syscall(SYS_gettid), name, (int)getpid(), si->si_addr,
		     where(pc, w, sizeof(w)) ? w : "?", (unsigned long)sp);
	out(line, (size_t)n);
	n = backtrace(bt, 48);
	for (int i = 0; i < n; i++) {
		int k = snprintf(line, sizeof(line), "crash_report:   #%d %s\n", i,
				 where((uintptr_t)bt[i], w, sizeof(w)) ? w : "?");
		out(line, (size_t)k);
	}
	/* the stack's words into code, nearest first: a call chain through
	 * code without unwind tables (and some stale values) */
	/* read with a system call: the stack may end before 16 KiB */
	static uintptr_t words[2048];
	struct iovec l = { words, sizeof(words) }, r = { (void *)sp, sizeof(words) };
	ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);

	for (int i = 0, shown = 0; got > 0 && i < (int)(got / 8) && shown < 40; i++) {
		uintptr_t v = words[i];
		int k;

		if (!where(v, w, sizeof(w)))
			continue;
		k = snprintf(line, sizeof(line), "crash_report:   sp+%#x %s\n", i * 8, w);
		out(line, (size_t)k);
		shown++;
	}
	/* on to the handler replaced, or the default action */
	if (sig < 32 && (prev[sig].sa_flags & SA_SIGINFO) && prev[sig].sa_sigaction) {
		prev[sig].sa_sigaction(sig, si, ucv);
		return;
	}
	if (sig < 32 && prev[sig].sa_handler != SIG_DFL && prev[sig].sa_handler != SIG_IGN && prev[sig].sa_handler) {
		prev[sig].sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void crash_report_install(void)
{
	static char altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_sigaction = on_fatal, .sa_flags = SA_SIGINFO | SA_ONSTACK };
	void *bt[2];

	backtrace(bt, 2);	/* loads libgcc's unwinder now, not in the handler */
	sigaltstack(&ss, NULL);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, &prev[sigs[i]]);
}
