// SPDX-License-Identifier: MIT
/*
 * Loading a library through CPython 3.14's remote debugging interface
 * (py_remote.h). The interpreter describes itself: _Py_DebugOffsets, the
 * first bytes of _PyRuntime, give where the interpreters, their threads and
 * each thread's pending-script fields are; only the layout of that table
 * itself is taken from 3.14's headers (Include/internal/
 * pycore_debug_offsets.h), and a version other than 3.14 is left to the
 * ptrace path. Written here: the interpreter's own client (sys.remote_exec)
 * runs in a Python of the same version, which the recorder is not.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include "record/inject/inject_int.h"
#include "record/inject/py_remote.h"
#include "record/probes/elf_syms.h"

/* _Py_DebugOffsets of 3.14: each field a u64, in this order. */
#define DBG_VERSION		8
#define DBG_RT_FINALIZING	32	/* runtime_state.finalizing */
#define DBG_RT_INTERPS		40	/* runtime_state.interpreters_head */
#define DBG_IS_THREADS_HEAD	72	/* interpreter_state.threads_head */
#define DBG_IS_THREADS_MAIN	80	/* interpreter_state.threads_main */
#define DBG_TS_NATIVE_ID	224	/* thread_state.native_thread_id */
#define DBG_EVAL_BREAKER	712	/* debugger_support.eval_breaker (in PyThreadState) */
#define DBG_REMOTE_SUPPORT	720	/* .remote_debugger_support (in PyThreadState) */
#define DBG_REMOTE_ENABLED	728	/* .remote_debugging_enabled (in PyInterpreterState) */
#define DBG_PENDING_CALL	736	/* .debugger_pending_call (in _PyRemoteDebuggerSupport) */
#define DBG_SCRIPT_PATH		744	/* .debugger_script_path (in _PyRemoteDebuggerSupport) */
#define DBG_SCRIPT_PATH_SIZE	752	/* .debugger_script_path_size */
#define DBG_SIZE		760
#define EVAL_PLEASE_STOP_BIT	(1u << 5)	/* pycore_ceval.h: _PY_EVAL_PLEASE_STOP_BIT */
#define OFF_MAX			(1u << 20)	/* an offset past this is not a 3.14 table */

static int rd(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec l = { buf, n }, r = { (void *)(uintptr_t)addr, n };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

static int wr(pid_t pid, uint64_t addr, const void *buf, size_t n)
{
	struct iovec l = { (void *)buf, n }, r = { (void *)(uintptr_t)addr, n };

	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

static int rd64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return rd(pid, addr, v, sizeof(*v));
}

/* _PyRuntime's address in pid, when the file mapped at start (its offset 0)
 * defines it. */
static bool runtime_in(pid_t pid, const char *path, uint64_t start, uint64_t *addr)
{
	char p[PATH_MAX + 32];
	uint64_t value, base;

	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, path);
	if (elf_syms__data(p, "_PyRuntime", &value, &base))
		return false;
	*addr = start - base + value;
	return true;
}

/* The interpreter's runtime in pid: the first file mapped at offset 0 whose
 * name holds "python" and which defines _PyRuntime. */
static bool find_runtime(pid_t pid, uint64_t *addr)
{
	char path[64], line[4352], file[4096];
	unsigned long long start, end, off;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *base;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095[^\n]", &start, &end, &off, file) != 4 ||
		    off || file[0] != '/' || strstr(file, " (deleted)"))
			continue;
		base = strrchr(file, '/') + 1;
		if (strstr(base, "python"))
			found = runtime_in(pid, file, start, addr);
	}
	fclose(f);
	return found;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void hex_of(char *out, const char *s)
{
	static const char digits[] = "0123456789abcdef";

	for (; *s; s++) {
		*out++ = digits[(unsigned char)*s >> 4];
		*out++ = digits[(unsigned char)*s & 15];
	}
	*out = 0;
}

/* The script: it claims the attempt by removing itself, loads the library
 * (the copy there by its soname, else a memfd copy of agent.so) and leaves
 * "result N" (fn's return) or "error ..." in result. Every string comes in
 * hex: nothing of the caller's is Python source. */
static char *script_text(const char *dir, const char *soname, const char *fn, const char *arg)
{
	static const char fmt[] =
		"def _gtrace_attach(h=bytes.fromhex):\n"
		"    import os\n"
		"    d, soname, fn, arg = h('%s').decode(), h('%s').decode(), h('%s').decode(), h('%s')\n"
		"    try:\n"
		"        os.unlink(d + '/attach.py')\n"
		"    except OSError:\n"
		"        return\n"
		"    try:\n"
		"        import ctypes\n"
		"        try:\n"
		"            lib = ctypes.CDLL(soname, mode=os.RTLD_NOW | os.RTLD_NOLOAD)\n"
		"        except OSError:\n"
		"            src = os.open(d + '/agent.so', os.O_RDONLY | os.O_CLOEXEC)\n"
		"            mfd = os.memfd_create('gtrace-agent', os.MFD_CLOEXEC)\n"
		"            try:\n"
		"                while os.sendfile(mfd, src, None, 1 << 20) > 0:\n"
		"                    pass\n"
		"                lib = ctypes.CDLL('/proc/self/fd/%%d' %% mfd, mode=os.RTLD_NOW)\n"
		"            finally:\n"
		"                os.close(mfd)\n"
		"                os.close(src)\n"
		"        f = getattr(lib, fn)\n"
		"        f.restype, f.argtypes = ctypes.c_int, [ctypes.c_char_p]\n"
		"        out = 'result %%d' %% f(arg)\n"
		"    except BaseException as e:\n"
		"        out = 'error ' + repr(e)[:200]\n"
		"    fd = os.open(d + '/result.tmp', os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)\n"
		"    try:\n"
		"        os.write(fd, out.encode('utf-8', 'replace') + b'\\n')\n"
		"    finally:\n"
		"        os.close(fd)\n"
		"    os.rename(d + '/result.tmp', d + '/result')\n"
		"try:\n"
		"    _gtrace_attach()\n"
		"finally:\n"
		"    del _gtrace_attach\n";
	size_t n = sizeof(fmt) + 2 * (strlen(dir) + strlen(soname) + strlen(fn) + strlen(arg)) + 8;
	char *hd = malloc(2 * strlen(dir) + 1), *hs = malloc(2 * strlen(soname) + 1);
	char *hf = malloc(2 * strlen(fn) + 1), *ha = malloc(2 * strlen(arg) + 1), *out = malloc(n);

	if (hd && hs && hf && ha && out) {
		hex_of(hd, dir);
		hex_of(hs, soname);
		hex_of(hf, fn);
		hex_of(ha, arg);
		snprintf(out, n, fmt, hd, hs, hf, ha);
	} else {
		free(out);
		out = NULL;
	}
	free(hd);
	free(hs);
	free(hf);
	free(ha);
	return out;
}

/* The effective uid and gid of pid (the script's files are theirs). */
static int owner_of(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64], line[256];
	unsigned long r, e;
	int got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Uid: %lu %lu", &r, &e) == 2) {
			*uid = (uid_t)e;
			got |= 1;
		} else if (sscanf(line, "Gid: %lu %lu", &r, &e) == 2) {
			*gid = (gid_t)e;
			got |= 2;
		}
	}
	fclose(f);
	return got == 3 ? 0 : -EIO;
}

/* A file of ours in the attempt's directory, the target's: n bytes of buf,
 * or the file at src when buf is NULL. */
static int put_file(int dfd, const char *name, const char *buf, size_t n, const char *src, uid_t uid, gid_t gid)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600), in = -1, err = 0;
	char b[65536];
	ssize_t k;

	if (fd < 0)
		return -errno;
	if (fchown(fd, uid, gid))
		err = -errno;
	if (!err && buf) {
		if (write(fd, buf, n) != (ssize_t)n)
			err = -EIO;
	} else if (!err) {
		in = open(src, O_RDONLY | O_CLOEXEC);
		if (in < 0)
			err = -errno;
		while (!err && (k = read(in, b, sizeof(b))) != 0)
			if (k < 0 || write(fd, b, (size_t)k) != k)
				err = -EIO;
	}
	if (in >= 0)
		close(in);
	if (close(fd) && !err)
		err = -EIO;
	return err;
}

/* What the script left in result: 0 and the value, -EAGAIN when nothing
 * yet, -EIO with why when it failed. */
static int read_result(int dfd, uint64_t *ret, char *why, size_t len)
{
	char b[320];
	long long v;
	ssize_t n;
	int fd = openat(dfd, "result", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -EAGAIN;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	b[n > 0 ? n : 0] = 0;
	b[strcspn(b, "\n")] = 0;
	if (sscanf(b, "result %lld", &v) == 1) {
		*ret = (uint64_t)v;
		return 0;
	}
	return inject__fail(why, len, -EIO, "the interpreter's script failed: %s", b[0] ? b : "(nothing said)");
}

static void remove_dir(int tmp, const char *name, int dfd)
{
	static const char *const files[] = { "attach.py", "agent.so", "result", "result.tmp" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlinkat(dfd, files[i], 0);
	close(dfd);
	unlinkat(tmp, name, AT_REMOVEDIR);
}

int py_remote__load(pid_t pid, const char *path, const char *soname, const char *fn_name, const char *arg,
		    unsigned wait_ms, uint64_t *fn_ret, pid_t *tid, char *why, size_t len)
{
	uint8_t dbg[DBG_SIZE];
	uint64_t rt, v, interp, ts, off[DBG_SIZE / 8], t0, breaker;
	char tmp_path[64], name[64], spath[160], *text;
	int32_t enabled, one = 1, zero = 0;
	unsigned char rnd[8];
	uid_t uid = 0;
	gid_t gid = 0;
	int tmp, dfd, err;

	*tid = 0;
	if (!find_runtime(pid, &rt))
		return inject__fail(why, len, -ENOTSUP, "pid %d: no Python runtime mapped", (int)pid);
	if (rd(pid, rt, dbg, sizeof(dbg)) || memcmp(dbg, "xdebugpy", 8))
		return inject__fail(why, len, -ENOTSUP, "pid %d: its Python runtime has no debug offsets", (int)pid);
	memcpy(off, dbg, sizeof(off));
	memcpy(&v, dbg + DBG_VERSION, 8);
	if ((v >> 16) != 0x030e)
		return inject__fail(why, len, -ENOTSUP, "pid %d: Python %u.%u (remote scripts are sent to 3.14)", (int)pid,
			    (unsigned)(v >> 24) & 0xff, (unsigned)(v >> 16) & 0xff);
	for (size_t i = DBG_RT_FINALIZING / 8; i < DBG_SIZE / 8; i++)
		if (off[i] > OFF_MAX)
			return inject__fail(why, len, -ENOTSUP, "pid %d: its debug offsets are not 3.14's", (int)pid);
	if (off[DBG_SCRIPT_PATH_SIZE / 8] < sizeof(spath))
		return inject__fail(why, len, -ENOTSUP, "pid %d: a script path of %llu bytes is too short", (int)pid,
			    (unsigned long long)off[DBG_SCRIPT_PATH_SIZE / 8]);
	if (rd64(pid, rt + off[DBG_RT_FINALIZING / 8], &v) || v)
		return inject__fail(why, len, -ENOTSUP, "pid %d: its interpreter is finalizing", (int)pid);
	if (rd64(pid, rt + off[DBG_RT_INTERPS / 8], &interp) || !interp)
		return inject__fail(why, len, -ENOTSUP, "pid %d: no interpreter yet", (int)pid);
	if (rd(pid, interp + off[DBG_REMOTE_ENABLED / 8], &enabled, sizeof(enabled)))
		return inject__fail(why, len, -ENOTSUP, "pid %d: its interpreter cannot be read", (int)pid);
	if (!enabled)
		return inject__fail(why, len, -ENOTSUP, "pid %d: Python's remote debugging is switched off there "
			    "(-X disable_remote_debug, PYTHON_DISABLE_REMOTE_DEBUG)", (int)pid);
	if (rd64(pid, interp + off[DBG_IS_THREADS_MAIN / 8], &ts) || !ts) {
		if (rd64(pid, interp + off[DBG_IS_THREADS_HEAD / 8], &ts) || !ts)
			return inject__fail(why, len, -ENOTSUP, "pid %d: its interpreter has no thread", (int)pid);
	}
	if (!rd64(pid, ts + off[DBG_TS_NATIVE_ID / 8], &v))
		*tid = (pid_t)v;

	/* the attempt's directory in the process' /tmp, as its owner */
	err = owner_of(pid, &uid, &gid);
	if (err)
		return inject__fail(why, len, err, "pid %d: its owner cannot be read", (int)pid);
	snprintf(tmp_path, sizeof(tmp_path), "/proc/%d/root/tmp", (int)pid);
	tmp = open(tmp_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tmp < 0)
		return inject__fail(why, len, -ENOTSUP, "pid %d: its /tmp cannot be opened: %s", (int)pid, strerror(errno));
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		close(tmp);
		return inject__fail(why, len, -EIO, "no random bytes: %s", strerror(errno));
	}
	snprintf(name, sizeof(name), ".gtrace-attach-%d-%02x%02x%02x%02x%02x%02x%02x%02x", (int)pid, rnd[0],
		 rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	if (mkdirat(tmp, name, 0700)) {
		err = -errno;
		close(tmp);
		return inject__fail(why, len, err, "pid %d: cannot make a directory in its /tmp: %s", (int)pid, strerror(-err));
	}
	dfd = openat(tmp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fchown(dfd, uid, gid)) {
		err = -errno;
		if (dfd >= 0)
			close(dfd);
		unlinkat(tmp, name, AT_REMOVEDIR);
		close(tmp);
		return inject__fail(why, len, err, "pid %d: its /tmp: %s", (int)pid, strerror(-err));
	}
	snprintf(spath, sizeof(spath), "/tmp/%s", name);
	text = script_text(spath, soname, fn_name, arg);
	err = text ? put_file(dfd, "agent.so", NULL, 0, path, uid, gid) : -ENOMEM;
	if (!err)
		err = put_file(dfd, "attach.py", text, strlen(text), NULL, uid, gid);
	free(text);
	if (err) {
		remove_dir(tmp, name, dfd);
		close(tmp);
		return inject__fail(why, len, err, "pid %d: the script cannot be written: %s", (int)pid, strerror(-err));
	}

	/* the path, then the flag, then the eval breaker's bit, as
	 * sys.remote_exec writes them */
	snprintf(spath, sizeof(spath), "/tmp/%s/attach.py", name);
	v = ts + off[DBG_REMOTE_SUPPORT / 8];
	err = wr(pid, v + off[DBG_SCRIPT_PATH / 8], spath, strlen(spath) + 1);
	if (!err)
		err = wr(pid, v + off[DBG_PENDING_CALL / 8], &one, sizeof(one));
	if (!err)
		err = rd64(pid, ts + off[DBG_EVAL_BREAKER / 8], &breaker);
	if (!err) {
		breaker |= EVAL_PLEASE_STOP_BIT;
		err = wr(pid, ts + off[DBG_EVAL_BREAKER / 8], &breaker, sizeof(breaker));
	}
	t0 = mono_ms();
	err = err ? err : -EAGAIN;
	while (err == -EAGAIN && mono_ms() - t0 < wait_ms) {
		usleep(2000);
		err = read_result(dfd, fn_ret, why, len);
		if (err == -EAGAIN && kill(pid, 0) && errno == ESRCH)
			err = -ESRCH;
	}
	if (err == -EAGAIN || err == -EFAULT) {
		/* called off: the script had not removed itself */
		if (!unlinkat(dfd, "attach.py", 0)) {
			wr(pid, v + off[DBG_PENDING_CALL / 8], &zero, sizeof(zero));
			err = err == -EFAULT ? inject__fail(why, len, -EFAULT, "pid %d: its thread state cannot be written", (int)pid)
					     : inject__fail(why, len, -ETIMEDOUT, "pid %d: its interpreter ran no Python code in "
						    "%u ms", (int)pid, wait_ms);
		} else {
			/* taken: it is running; as long again for it */
			t0 = mono_ms();
			err = -EAGAIN;
			while (err == -EAGAIN && mono_ms() - t0 < wait_ms) {
				usleep(2000);
				err = read_result(dfd, fn_ret, why, len);
			}
			if (err == -EAGAIN)
				err = inject__fail(why, len, -EINPROGRESS, "pid %d: its interpreter took the script and did not "
					   "finish it in %u ms", (int)pid, wait_ms);
		}
	} else if (err == -ESRCH) {
		inject__fail(why, len, err, "pid %d: the process ended", (int)pid);
	}
	remove_dir(tmp, name, dfd);
	close(tmp);
	return err;
}
