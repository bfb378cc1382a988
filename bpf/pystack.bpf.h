/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Python frames of the thread that calls libcuda (--stacks), for CPython
 * 3.10-3.13 (bpf/gtrace_py.h: what the recorder tells BPF). At a probe:
 *
 *   1. the process' interpreter: its pid in py_procs, else its mappings are
 *      looked through once (the kernel's VMA iterator) for a file the
 *      recorder named in py_files; the address of _PyRuntime follows. A
 *      process found to be none is looked at again when the recorder names
 *      a new file (py_gen); an exec or the exit of the process drops what
 *      was found (py_forget, from the scheduler's tracepoints: at once, not
 *      when the recorder reads their records);
 *   2. the thread's state: cached per thread in py_threads and checked by
 *      its thread id, else found in the first interpreter's list of threads;
 *      a thread without one (autograd's, a framework's pool) takes the main
 *      thread's, which waits in the Python line that asked for the work
 *      (GT_STACK_PY_MAIN);
 *   3. its frames, innermost first, up to GT_PYSTACK_MAX: the code object,
 *      the instruction and the code's first line; entry shims of the eval
 *      loop (3.12+) are left out and mark the frame above them;
 *   4. each code object not seen before in the process (by address and first
 *      line) is sent as a struct gt_pycode, before the stack: its file,
 *      name and line table, from which the recorder computes every line.
 *
 * A frame whose link to its caller cannot be read (paged out, torn by the
 * thread itself) ends the walk, flagged and counted; one whose code or
 * instruction cannot be read is kept without its line, flagged and counted:
 * never an error of the call.
 */
#ifndef GTRACE_PYSTACK_BPF_H
#define GTRACE_PYSTACK_BPF_H

#include "gtrace_py.h"

__u64 n_py_fault = 0;		/* Python walks that stopped at a frame they could not read */
__u64 n_py_nothread = 0;	/* calls of a Python process from a thread without a thread state */
__u64 n_py_code_drop = 0;	/* code objects that found no room in the ring buffer */
__u64 n_py_slowkey = 0;		/* hot calls whose call-site key took a walk (py_top_key could
				 * not tell) */
__u64 n_py_busy = 0;		/* interpreter lookups that found the process' mappings busy (a
				 * thread mapping memory): looked at again at its next call */

/* Written by the recorder: interpreters named in py_files, and a number it
 * raises each time it names one more. */
__u32 py_nfiles = 0;
__u32 py_gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GT_PY_CFGS);
	__type(key, __u32);
	__type(value, struct gt_py_cfg);
} py_cfgs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct gt_py_file_key);
	__type(value, struct gt_py_file);
} py_files SEC(".maps");

struct py_proc {
	__u64 runtime;	/* _PyRuntime's address, 0 = not a Python process known */
	__u32 cfg;
	__u32 gen;	/* py_gen when it was looked at */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);		/* tid */
	__type(value, __u64);		/* its PyThreadState */
} py_threads SEC(".maps");

struct py_seen_key {
	__u64 code;
	__u32 pid;
	__u32 line0;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct py_seen_key);
	__type(value, __u8);
} py_seen SEC(".maps");

/* The bytes of a frame py_top_key reads at once: every field it needs lies
 * in them for 3.10 to 3.13 (the frame object's f_lasti at 96 in 3.10 the
 * farthest). */
#define PY_FRAME_CHUNK 128
/* The bytes of a thread state py_top_key reads at once, from the first to
 * the last of its id and its frame (96-160 bytes for 3.10 to 3.13). */
#define PY_TS_CHUNK 192

/* An interpreter's list of thread states, looked through for one thread
 * id (py_ts_step, bpf_loop's body: the verifier checks the step once, where
 * a loop of PY_THREADS_MAX was checked state by state along every path of
 * every probe that takes stacks: nine in ten of the instructions it went
 * through at the recorder's start). */
#define PY_THREADS_MAX 128

struct py_ts_find {
	__u64 ts;		/* the next state to look at */
	__u64 want;		/* the thread id it must hold */
	__u64 found;		/* the state found, 0: none yet */
	__u32 off_tid, off_next;
	__u32 bad;		/* a state could not be read */
	__u32 _pad;
};

/* py_top_key's hash of every frame of a thread (py_deep_step, bpf_loop's
 * body): the next frame to read, the hash so far, and where a frame holds
 * its caller, code and instruction (the config's, checked to lie in
 * PY_FRAME_CHUNK). */
#define PY_DEEP_PAGE	4096
#define PY_DEEP_BUF	(PY_DEEP_PAGE + PY_FRAME_CHUNK)
#define PY_DEEP_CSTACK	(8ull << 20)
#define PY_DEEP_CBUF	4096

struct py_deep {
	__u64 frame;
	__u64 h;
	__u64 lo, hi;		/* the user bytes buf holds: [lo, hi) */
	__u32 rd;		/* bytes of a frame read: the farthest field's end */
	__u32 fr_prev, fr_code, fr_instr;
	__u32 ilen;		/* bytes of the instruction: 4 (f_lasti) or 8 (a pointer) */
	__u32 page;		/* 3.11+: frames lie together on the thread's data stack,
				 * read a page at a time; 0: a frame at a time (3.10) */
	__u64 sp;		/* the thread's stack pointer at the call: a frame
				 * within PY_DEEP_CSTACK above it is an entry frame
				 * on the C stack (3.12+), read alone into cbuf */
	__u64 clo, chi;		/* the C stack's bytes cbuf holds: [clo, chi) */
	__u8 buf[PY_DEEP_BUF];
	__u8 cbuf[PY_DEEP_CBUF];
};

/* A walk in progress, per CPU (too large for the BPF stack). */
struct py_walk {
	struct gt_py_cfg c;
	__u64 frame;		/* the next frame to read */
	__u64 id;		/* pid_tgid of the call */
	__u64 ts;
	__u32 n;		/* f[] entries */
	__u32 flags;		/* GT_STACK_PY_* */
	__u32 frd;		/* bytes of a frame a step reads (py_frame_bytes) */
	__u32 _pad;
	struct gt_pyframe f[GT_PYSTACK_MAX];
	__u8 chunk[PY_FRAME_CHUNK];	/* a frame's first bytes (the walk's step) */
	struct py_deep deep;		/* py_top_key's hash of the thread's frames */
	__u8 tsc[PY_TS_CHUNK];		/* py_top_key's copy of a thread state's id and frame */
	struct py_ts_find find;		/* py_tstate's look through a thread list */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_walk);
} py_scratch SEC(".maps");

extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;

/* In front of py_procs and py_threads for py_top_key (every hot call's key),
 * per CPU: the thread last keyed in each slot, its interpreter and its own
 * state, which an array lookup finds where the two hash lookups cost more
 * than the reads. A thread with a state of its own that runs no Python
 * (autograd's: it runs the backward pass for the main thread) is kept with
 * the main thread's state beside its own; one without a state of its own is
 * not kept here. Any exec, and the exit of a traced process (py_forget), raises
 * py_epoch: every slot of an older epoch is stale (a pid is reused only
 * after its exit; a thread's reused tid is caught by the state's check). */
struct py_fast {
	__u32 tid;
	__u32 pid;
	__u32 epoch;
	__u32 cfg;
	__u64 tstate;	/* its own */
	__u64 main;	/* the main thread's, for a thread whose own state runs no
			 * Python (autograd's): 0 for one that runs Python */
};

#define PY_FAST_SLOTS 256

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PY_FAST_SLOTS);
	__type(key, __u32);
	__type(value, struct py_fast);
} py_fast SEC(".maps");

/* py_fast's epoch: a map, not a global, so that every object that keys
 * Python frames (cuda, nccl) shares the one the scheduler's tracepoints
 * raise. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} py_epoch SEC(".maps");

/* Process pid exec'd or exited: its interpreter and its main thread's
 * state are another's from now on. */
static __always_inline void py_forget(__u32 pid)
{
	__u32 zero = 0, *ep = bpf_map_lookup_elem(&py_epoch, &zero);

	if (ep)
		__sync_fetch_and_add(ep, 1);
	bpf_map_delete_elem(&py_procs, &pid);
	bpf_map_delete_elem(&py_threads, &pid);
}

#define PY_FRAME_OWNED_BY_CSTACK 3	/* 3.12+: the eval loop's entry shim */

/* The interpreter file the current process maps, by its first mapping.
 * False when its mappings could not be looked through now (the iterator
 * only tries the lock: another thread is mapping memory): not an answer. */
static __always_inline bool py_find(struct py_proc *pp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;

	if (bpf_iter_task_vma_new(&it, task, 0)) {
		bpf_iter_task_vma_destroy(&it);
		count(&n_py_busy);
		return false;
	}
	while ((vma = bpf_iter_task_vma_next(&it))) {
		struct gt_py_file_key k = {};
		struct gt_py_file *f;
		/* read, not dereferenced: each load through a BTF pointer has the
		 * verifier look a type up by name among all of the kernel's, in
		 * every state it explores (most of a recorder's start) */
		struct file *file = BPF_CORE_READ(vma, vm_file);

		if (BPF_CORE_READ(vma, vm_pgoff) || !file)
			continue;
		k.ino = BPF_CORE_READ(file, f_inode, i_ino);
		k.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
		f = bpf_map_lookup_elem(&py_files, &k);
		if (!f)
			continue;
		pp->runtime = BPF_CORE_READ(vma, vm_start) + f->runtime;
		pp->cfg = f->cfg;
		break;
	}
	bpf_iter_task_vma_destroy(&it);
	return true;
}

static __always_inline __u64 rd64(__u64 addr, bool *bad)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		*bad = true;
	return v;
}

/* The PyThreadState of thread tid (the calling one when self), 0 when it
 * has none. */
/* A thread found to have no state is not looked for again for this long
 * (py_threads holds it as an odd value, the time in units of 2^20 ns): the
 * list of an interpreter's threads is a walk of two reads a thread, and a
 * thread without Python (autograd's) launches the whole backward pass. */
#define PY_NOSTATE_RECHECK_NS	(1ull << 30)

/* The calling thread's id as its PyThreadState holds it (enum gt_py_tid);
 * false where it cannot be known here. */
static __always_inline bool py_self_id(const struct gt_py_cfg *c, __u32 tid, __u64 *want)
{
	*want = tid;
	if (c->tid_kind == GT_PY_TID_PTHREAD) {
#if defined(__TARGET_ARCH_x86)
		struct task_struct *task = bpf_get_current_task_btf();

		*want = BPF_CORE_READ(task, thread.fsbase);
#else
		return false;
#endif
	}
	return true;
}

/* The CPU's walk, for bpf_loop's bodies (their context must be on the
 * stack: the walk is looked up again). */
static __always_inline struct py_walk *py_scratch_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&py_scratch, &zero);
}

static long py_ts_step(__u64 i, void *ctx)
{
	struct py_walk *w = py_scratch_get();
	struct py_ts_find *f;
	bool bad = false;
	__u64 v;

	if (!w)
		return 1;
	f = &w->find;
	if (!f->ts)
		return 1;
	v = rd64(f->ts + f->off_tid, &bad);
	if (!bad && v == f->want) {
		f->found = f->ts;
		return 1;
	}
	if (!bad)
		f->ts = rd64(f->ts + f->off_next, &bad);
	f->bad = bad;
	return bad;
}

static __always_inline __u64 py_tstate(const struct gt_py_cfg *c, __u64 runtime, __u32 tid, bool self)
{
	__u64 want = tid, ts, interp, *cached, now, none;
	struct py_walk *f;
	bool bad = false;

	if (c->tid_kind == GT_PY_TID_PTHREAD) {
		if (!self)
			return 0;	/* another thread's pthread id is not known here */
		if (!py_self_id(c, tid, &want))
			return 0;
	}
	cached = bpf_map_lookup_elem(&py_threads, &tid);
	now = 0;
	if (cached && (*cached & 1)) {
		now = bpf_ktime_get_ns();
		if ((now >> 20) - (*cached >> 1) < (PY_NOSTATE_RECHECK_NS >> 20))
			return 0;
	} else if (cached && *cached) {
		ts = *cached;
		if (rd64(ts + c->ts_tid, &bad) == want && !bad)
			return ts;
		bad = false;
	}
	interp = rd64(runtime + c->interp_head, &bad);
	if (bad || !interp)
		return 0;
	f = py_scratch_get();
	if (!f)
		return 0;
	f->find.ts = rd64(interp + c->threads_head, &bad);
	f->find.want = want;
	f->find.found = 0;
	f->find.off_tid = c->ts_tid;
	f->find.off_next = c->ts_next;
	f->find.bad = 0;
	if (!bad) {
		bpf_loop(PY_THREADS_MAX, py_ts_step, NULL, 0);
		bad = f->find.bad;
	}
	if (f->find.found) {
		ts = f->find.found;
		bpf_map_update_elem(&py_threads, &tid, &ts, BPF_ANY);
		return ts;
	}
	if (!bad) {
		none = (((now ? now : bpf_ktime_get_ns()) >> 20) << 1) | 1;
		bpf_map_update_elem(&py_threads, &tid, &none, BPF_ANY);
	}
	return 0;
}

/* The frame a thread state's frame field names: itself, or before 3.13
 * the frame of the _PyCFrame it points to; 0 when it runs no Python. */
static __always_inline __u64 py_state_frame(const struct gt_py_cfg *c, __u64 frame, bool *bad)
{
	if (c->cframe_frame != GT_PY_NONE && frame)
		frame = rd64(frame + c->cframe_frame, bad);
	return *bad ? 0 : frame;
}

/* The innermost frame of a thread state, 0 when it runs no Python. */
static __always_inline __u64 py_top(const struct gt_py_cfg *c, __u64 tstate, bool *bad)
{
	__u64 frame = rd64(tstate + c->ts_frame, bad);

	return *bad ? 0 : py_state_frame(c, frame, bad);
}

/* The innermost frame a call of thread id runs under: its own thread's, or
 * for a thread that runs no Python now (autograd's, which keeps a thread
 * state for hooks; a framework's pool) the main thread's, which waits in
 * the Python line that asked for the work (*mts that state; 0 where the
 * frame is the thread's own). *tstate: the state found, the main thread's
 * for a thread without one (0: none). */
static __always_inline __u64 py_call_frame(const struct gt_py_cfg *c, __u64 runtime, __u64 id,
					   __u64 *tstate, __u64 *mts, bool *bad)
{
	__u32 pid = id >> 32;
	__u64 frame, m;

	*mts = 0;
	*tstate = py_tstate(c, runtime, (__u32)id, true);
	frame = *tstate ? py_top(c, *tstate, bad) : 0;
	if (!frame && !*bad && (__u32)id != pid) {
		m = py_tstate(c, runtime, pid, false);
		if (m && (frame = py_top(c, m, bad)))
			*mts = m;
		if (!*tstate)
			*tstate = m;
	}
	return frame;
}

/* The bytes from a frame's start that hold every field a walk's step (and
 * the site key's hash) reads, 0 when they are more than PY_FRAME_CHUNK (no
 * such version). */
static __always_inline __u32 py_frame_bytes(const struct gt_py_cfg *c)
{
	__u32 n = c->fr_code + 8;

	n = c->fr_prev + 8 > n ? c->fr_prev + 8 : n;
	n = c->fr_instr + 8 > n ? c->fr_instr + 8 : n;
	if (c->fr_owner != GT_PY_NONE && c->fr_owner + 1 > n)
		n = c->fr_owner + 1;
	if (c->fr_entry != GT_PY_NONE && c->fr_entry + 1 > n)
		n = c->fr_entry + 1;
	return n > PY_FRAME_CHUNK ? 0 : n;
}

/* One frame of the walk (bpf_loop's body): 1 ends it. */
static long py_frame_step(__u64 i, void *ctx)
{
	struct py_walk *w = py_scratch_get();
	const struct gt_py_cfg *c;
	__u64 frame, code, ip;
	__u32 n, line0 = 0, rd, off;
	__s32 lasti = 0;
	bool bad = false;

	if (!w)
		return 1;
	c = &w->c;
	frame = w->frame;
	n = w->n;
	if (!frame)
		return 1;
	if (n >= GT_PYSTACK_MAX) {
		w->flags |= GT_STACK_PY_CUT;
		return 1;
	}
	/* the frame's fields in one read (py_walk_into: w->frd bytes, every
	 * field the step reads lies in them) */
	rd = w->frd;
	if (!rd || rd > PY_FRAME_CHUNK || bpf_probe_read_user(w->chunk, rd, (void *)frame))
		goto fault;
	off = c->fr_code;
	if (off > PY_FRAME_CHUNK - 8)
		goto fault;
	code = *(__u64 *)(w->chunk + off);
	off = c->fr_prev;
	if (off > PY_FRAME_CHUNK - 8)
		goto fault;
	w->frame = *(__u64 *)(w->chunk + off);
	if (c->fr_owner != GT_PY_NONE && c->version >= 0x030c) {
		off = c->fr_owner;
		if (off > PY_FRAME_CHUNK - 1)
			goto fault;
		if (w->chunk[off] == PY_FRAME_OWNED_BY_CSTACK) {
			if (n > 0 && n <= GT_PYSTACK_MAX)
				w->f[n - 1].line0 |= GT_PYFRAME_ENTRY;
			return 0;
		}
	}
	if (!code)
		return 0;
	/* the caller's frame is known: a frame whose code or instruction
	 * cannot be read (paged out) is kept without its line, counted, and
	 * the walk goes on */
	if (bpf_probe_read_user(&line0, sizeof(line0), (void *)(code + c->co_firstlineno))) {
		line0 = 0;
		bad = true;
	}
	line0 &= ~GT_PYFRAME_ENTRY;
	w->f[n].instr = 0xffffffffu;
	off = c->fr_instr;
	if (bad || off > PY_FRAME_CHUNK - 8) {
		/* no line without the code's first line */
		bad = true;
	} else if (c->instr_kind == GT_PY_INSTR_LASTI) {
		lasti = *(__s32 *)(w->chunk + off);
		w->f[n].instr = lasti < 0 ? 0 : (__u32)lasti;
	} else {
		ip = *(__u64 *)(w->chunk + off) - (code + c->co_code);
		w->f[n].instr = ip >= (1ull << 33) ? 0xffffffffu : (__u32)(ip / 2);
	}
	if (bad)
		w->flags |= GT_STACK_PY_SKIPPED;	/* counted by the recorder: a frame without its line */
	off = c->fr_entry;
	if (off != GT_PY_NONE && off <= PY_FRAME_CHUNK - 1 && w->chunk[off])
		line0 |= GT_PYFRAME_ENTRY;
	w->f[n].code = code;
	w->f[n].line0 = line0;
	w->n = n + 1;
	return 0;
fault:
	w->flags |= GT_STACK_PY_FAULT;
	count(&n_py_fault);
	return 1;
}

/* The characters of the str at obj into dst (at most cap bytes: the end of
 * it when tail, else the start); its kind, 0 when unreadable. */
static __always_inline __u32 py_str(const struct gt_py_cfg *c, __u64 obj, char *dst, __u32 cap,
				    bool tail, __u8 *kind, bool *cut)
{
	__u32 state = 0, k;
	__u64 len = 0, data, bytes;

	*kind = 0;
	if (!obj || bpf_probe_read_user(&state, sizeof(state), (void *)(obj + c->str_state)) ||
	    bpf_probe_read_user(&len, sizeof(len), (void *)(obj + 16)))
		return 0;
	k = (state >> 2) & 7;
	if ((k != 1 && k != 2 && k != 4) || !(state & (1u << 5)))
		return 0;
	data = obj + ((state & (1u << 6)) ? c->str_ascii : c->str_compact);
	bytes = len * k;
	if (bytes > cap) {
		*cut = true;
		if (tail)
			data += bytes - cap;
		bytes = cap;
	}
	if (bytes > GT_PYCODE_FILE)	/* the larger of the two caps, for the verifier */
		bytes = GT_PYCODE_FILE;
	if (bytes && bpf_probe_read_user(dst, bytes, (void *)data))
		return 0;
	*kind = k;
	return bytes;
}

/* The code object of frame i, sent when the process' stacks had it not
 * (bpf_loop's body). */
static long py_code_step(__u64 i, void *ctx)
{
	struct py_walk *w = py_scratch_get();
	const struct gt_py_cfg *c;
	struct py_seen_key key = {};
	struct gt_pycode *r;
	__u64 code, obj, size = 0;
	bool bad = false, cut = false;
	__u8 one = 1;

	if (!w || i >= GT_PYSTACK_MAX || i >= w->n)
		return 1;
	c = &w->c;
	key.code = code = w->f[i].code;
	key.pid = w->id >> 32;
	key.line0 = w->f[i].line0 & ~GT_PYFRAME_ENTRY;
	if (w->f[i].instr == 0xffffffffu && !key.line0)
		return 0;	/* its code could not be read: nothing to send */
	if (bpf_map_lookup_elem(&py_seen, &key))
		return 0;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count(&n_py_code_drop);
		return 1;
	}
	r->code = code;
	r->firstlineno = key.line0;
	r->version = c->version;
	r->flags = 0;
	r->_pad = 0;
	r->file_len = py_str(c, rd64(code + c->co_filename, &bad), r->file, GT_PYCODE_FILE, true,
			     &r->file_kind, &cut);
	if (cut)
		r->flags |= GT_PYCODE_FILE_CUT;
	cut = false;
	r->name_len = py_str(c, rd64(code + c->co_name, &bad), r->name, GT_PYCODE_NAME, false,
			     &r->name_kind, &cut);
	if (cut)
		r->flags |= GT_PYCODE_NAME_CUT;
	r->lines_len = 0;
	obj = rd64(code + c->co_linetable, &bad);
	if (obj && !bpf_probe_read_user(&size, sizeof(size), (void *)(obj + 16))) {
		if (size > GT_PYCODE_LINES) {
			size = GT_PYCODE_LINES;
			r->flags |= GT_PYCODE_LINES_CUT;
		}
		if (size && !bpf_probe_read_user(r->linetable, size, (void *)(obj + 32)))
			r->lines_len = size;
	}
	if (bad)
		r->flags |= GT_PYCODE_FAULT;
	fill_hdr_at(&r->hdr, w->id, GT_REC_PYCODE, sizeof(*r), 0, w->ts);
	submit(r);
	bpf_map_update_elem(&py_seen, &key, &one, BPF_ANY);
	return 0;
}

/* The calling thread's Python frames into the CPU's walk (at most max of
 * them): 1 when the walk holds them, 0 when the process is no Python known
 * or the thread has no state. A global function, like py_top_key: the
 * verifier checks it once per program, where inlined at its two callers it
 * was checked at each, along every path (two thirds of the instructions it
 * went through at the recorder's start). */
__noinline int py_walk_into(__u64 id, __u64 ts, __u32 max)
{
	__u32 zero = 0, pid = id >> 32, cfg;
	struct py_proc *pp, np = {};
	struct gt_py_cfg *c;
	struct py_walk *w;
	__u64 tstate, frame, mts;
	bool bad = false;

	if (!py_nfiles)
		return 0;
	pp = bpf_map_lookup_elem(&py_procs, &pid);
	if (pp && (pp->runtime || pp->gen == py_gen)) {
		np = *pp;
	} else {
		np.gen = py_gen;
		if (!py_find(&np))
			return 0;
		bpf_map_update_elem(&py_procs, &pid, &np, BPF_ANY);
	}
	if (!np.runtime)
		return 0;
	cfg = np.cfg;
	c = bpf_map_lookup_elem(&py_cfgs, &cfg);
	w = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!c || !w || !c->version)
		return 0;
	w->n = 0;
	w->flags = 0;
	w->id = id;
	w->ts = ts;
	frame = py_call_frame(c, np.runtime, id, &tstate, &mts, &bad);
	if (mts)
		w->flags |= GT_STACK_PY_MAIN;
	if (!tstate) {
		count(&n_py_nothread);
		return 0;
	}
	w->c = *c;
	w->frd = py_frame_bytes(c);
	if (bad) {
		w->flags |= GT_STACK_PY_FAULT;
		count(&n_py_fault);
		return 1;
	}
	w->frame = frame;
	bpf_loop(max, py_frame_step, &zero, 0);
	return 1;
}

static __always_inline struct py_walk *py_walk(__u64 id, __u64 ts, __u32 max)
{
	return py_walk_into(id, ts, max) > 0 ? py_scratch_get() : NULL;
}

#include "pykey.bpf.h"

/* Goes on with the CPU's walk that py_walk began with fewer frames: up to
 * max more, from where it stopped (a walk that met an unreadable frame
 * stays as it is). Global, like py_walk_into: checked once. */
__noinline int py_walk_more(__u32 max)
{
	struct py_walk *w = py_scratch_get();
	__u32 zero = 0;

	if (w && w->frame && !(w->flags & GT_STACK_PY_FAULT))
		bpf_loop(max, py_frame_step, &zero, 0);
	return 0;
}

/* Sends the code objects of the CPU's walk not seen before in its
 * process. Global, like py_walk_into: checked once. */
__noinline int py_codes_send(void)
{
	struct py_walk *w = py_scratch_get();
	__u32 zero = 0;

	if (w && w->n)
		bpf_loop(w->n, py_code_step, &zero, 0);
	return 0;
}

#endif
