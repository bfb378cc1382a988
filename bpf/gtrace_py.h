/* SPDX-License-Identifier: MIT */
/*
 * Python stacks (--stacks): what the recorder tells BPF about the CPython
 * interpreters it found, so that BPF walks the calling thread's Python frames
 * at a libcuda probe. Shared by bpf/pystack.bpf.h and user/record/stacks/;
 * never written to a trace (the frames BPF sends are in struct gt_ustack).
 *
 * An interpreter is a file (the python executable with the runtime linked in,
 * or libpython3.X.so) known by device and inode, as /proc/PID/maps shows them;
 * its _PyRuntime lies `runtime` bytes past the start of the file's first
 * mapping (file offset 0). The offsets of the structures BPF follows come per
 * version: built in for 3.10-3.12, from the interpreter's own
 * _Py_DebugOffsets for 3.13.
 */
#ifndef GTRACE_PY_H
#define GTRACE_PY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define GT_PY_CFGS		8		/* interpreter versions BPF knows at once */
#define GT_PY_NONE		0xffffffffu	/* an offset a version does not have */

/* How a thread state names its thread. */
enum gt_py_tid {
	GT_PY_TID_NATIVE = 0,	/* native_thread_id: the kernel's tid (3.11+) */
	GT_PY_TID_PTHREAD = 1,	/* thread_id: pthread_self(), the thread's FS base (3.10) */
};

/* How a frame says where it is in its code. */
enum gt_py_instr {
	GT_PY_INSTR_LASTI = 0,	/* an int: the last instruction's index in code units (3.10) */
	GT_PY_INSTR_PTR = 1,	/* a pointer into the code object's instructions (3.11+) */
};

/* The offsets of one interpreter version (bytes; GT_PY_NONE where absent). */
struct gt_py_cfg {
	__u32 version;		/* PY_VERSION_HEX >> 16: 0x030a .. 0x030d */
	__u32 tid_kind;		/* enum gt_py_tid */
	__u32 instr_kind;	/* enum gt_py_instr */
	__u32 interp_head;	/* _PyRuntimeState: the first interpreter */
	__u32 threads_head;	/* PyInterpreterState: the first thread state */
	__u32 ts_next;		/* PyThreadState: the next one */
	__u32 ts_tid;		/* PyThreadState: the thread (enum gt_py_tid) */
	__u32 ts_frame;		/* PyThreadState: the frame, or the _PyCFrame (cframe_frame) */
	__u32 cframe_frame;	/* _PyCFrame: the current frame (3.11, 3.12) */
	__u32 fr_prev;		/* frame: the caller's frame */
	__u32 fr_code;		/* frame: the code object */
	__u32 fr_instr;		/* frame: enum gt_py_instr */
	__u32 fr_owner;		/* frame: who owns it (a char; 3 = a C stack's entry shim, 3.12+) */
	__u32 fr_entry;		/* frame: is_entry (a bool, 3.11) */
	__u32 co_filename;	/* code: the file (str) */
	__u32 co_name;		/* code: the qualified name (str; 3.10: the name) */
	__u32 co_firstlineno;	/* code: its first line (int) */
	__u32 co_linetable;	/* code: the line table (bytes) */
	__u32 co_code;		/* code: where its instructions start (3.11+) */
	__u32 str_state;	/* str: the state bits (kind, compact, ascii) */
	__u32 str_ascii;	/* str: where an ASCII string's characters start */
	__u32 str_compact;	/* str: where another compact string's characters start */
};

/* py_files' key: a file as /proc/PID/maps names it (the kernel's dev_t). */
struct gt_py_file_key {
	__u64 ino;
	__u32 dev;
	__u32 _pad;
};

struct gt_py_file {
	__u64 runtime;		/* _PyRuntime's distance from the file's first mapping */
	__u32 cfg;		/* index in py_cfgs */
	__u32 _pad;
};

#endif
