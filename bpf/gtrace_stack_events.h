/* SPDX-License-Identifier: MIT */
/*
 * The call stacks' records (--stacks): raw user stacks and Python frames
 * from BPF, and the interned stack table the recorder and readers keep.
 * Part of the trace format: included by bpf/gtrace_events.h (struct
 * gt_hdr, the record types), never on its own.
 */
#ifndef GTRACE_STACK_EVENTS_H
#define GTRACE_STACK_EVENTS_H

/* ---- call stacks (--stacks): native user stacks by frame pointers ---- */

#define GT_USTACK_MAX	48	/* frames BPF takes of a stack; a deeper one is cut */
#define GT_PYSTACK_MAX	64	/* Python frames BPF takes of a thread; deeper ones are cut */

/* Flags of struct gt_ustack and struct gt_stack. */
#define GT_STACK_CUT		(1u << 0)	/* GT_USTACK_MAX frames: the stack may go deeper */
#define GT_STACK_CALLER		(1u << 1)	/* the caller's frame was taken from the stack
						 * pointer (the kernel's unwinder skips it at a
						 * function's entry) */
#define GT_STACK_FAULT		(1u << 2)	/* the unwinder failed: only the probed function */
#define GT_STACK_SITE		(1u << 3)	/* gt_ustack of a call site seen for the first time
						 * (--stacks all): later calls from it send only
						 * its key (gt_ustack_same) */
#define GT_STACK_PYTHON		(1u << 4)	/* Python frames in place of the interpreter's */
#define GT_STACK_PY_CUT		(1u << 5)	/* GT_PYSTACK_MAX Python frames: it may go deeper */
#define GT_STACK_PY_FAULT	(1u << 6)	/* a Python frame could not be read: the walk
						 * stopped there */
#define GT_STACK_PY_AFTER	(1u << 7)	/* the native frames did not reach the
						 * interpreter (a library without frame pointers):
						 * the Python frames follow the last one found */
#define GT_STACK_PY_SKIPPED	(1u << 10)	/* a Python frame's code or instruction could
						 * not be read: kept without its line */
#define GT_STACK_AT_EXIT	(1u << 9)	/* taken at the exit of a call that failed (its
						 * entry took none): frame 0 is the return
						 * address in the caller, not the probed function */
#define GT_STACK_PY_MAIN	(1u << 8)	/* the calling thread runs no Python (autograd's, a
						 * framework's pool): the Python frames are the
						 * main thread's, where it waits for the work */

/* A Python frame as BPF found it: the code object and where in it. */
#define GT_PYFRAME_ENTRY	(1u << 31)	/* in line0: a C function called the eval loop
						 * that runs this frame (3.11+) */
struct gt_pyframe {
	__u64 code;		/* the code object's address */
	__u32 instr;		/* the instruction, in code units from the code's start */
	__u32 line0;		/* the code's co_firstlineno, GT_PYFRAME_ENTRY */
};

/* BPF's raw user stack of a call, just before its entry record (same ts and
 * thread): ip[0] the probed function, then return addresses by frame
 * pointers; caller the return address at the stack pointer (the probed
 * function's caller, which the kernel's unwinder may skip at its entry). */
struct gt_ustack {
	struct gt_hdr hdr;	/* api = the call's */
	__u16 nframes;		/* ip[] entries used */
	__u16 flags;		/* GT_STACK_* */
	__u32 _pad;		/* explicit padding, zero */
	__u64 caller;		/* *(u64 *)sp at the entry, 0 when unreadable */
	__u64 site2;		/* GT_STACK_SITE: the call site's second key: *(u64 *)(bp + 8)
				 * mixed with the Python frames' hash and the kernel */
	__u64 ip[GT_USTACK_MAX];
	__u16 npy;		/* py[] entries used, innermost first */
	__u16 _pad2;		/* explicit padding, zero */
	__u32 pyversion;	/* the interpreter's version (0x030c for 3.12), 0 = no Python */
	struct gt_pyframe py[GT_PYSTACK_MAX];
};

/* The characters of a str BPF copied: one byte each (ASCII, Latin-1), two
 * (UCS-2) or four (UCS-4). */
#define GT_PYCODE_FILE		256	/* bytes of the file name kept: its end */
#define GT_PYCODE_NAME		128	/* bytes of the function's name kept: its start */
#define GT_PYCODE_LINES		4096	/* bytes of the line table kept: its start */
#define GT_PYCODE_FILE_CUT	(1u << 0)	/* the file name's start was cut */
#define GT_PYCODE_NAME_CUT	(1u << 1)
#define GT_PYCODE_LINES_CUT	(1u << 2)	/* the line table's end was cut: later lines unknown */
#define GT_PYCODE_FAULT		(1u << 3)	/* the code object could not be read */

/* A code object of a process seen in a stack for the first time (by its
 * address and first line), sent before the stack that holds it. */
struct gt_pycode {
	struct gt_hdr hdr;
	__u64 code;		/* its address, as gt_pyframe.code */
	__u32 firstlineno;	/* as gt_pyframe.line0, without the flag */
	__u32 version;		/* the interpreter's, as gt_ustack.pyversion */
	__u16 file_len;		/* bytes of file[] used */
	__u16 name_len;		/* bytes of name[] used */
	__u16 lines_len;	/* bytes of linetable[] used */
	__u8 file_kind;		/* bytes a character of file[]: 1, 2 or 4; 0 unreadable */
	__u8 name_kind;
	__u32 flags;		/* GT_PYCODE_* */
	__u32 _pad;		/* explicit padding, zero */
	char file[GT_PYCODE_FILE];
	char name[GT_PYCODE_NAME];
	__u8 linetable[GT_PYCODE_LINES];	/* co_linetable's bytes, in the version's format */
};

/* A hot call from a call site whose stack was sent (GT_STACK_SITE): its
 * key, the return address at the stack pointer and the second key, as
 * gt_ustack.caller and .site2 (the one above the frame pointer, the
 * caller's caller, mixed with a hash of every Python frame and the kernel
 * a launch starts), and the innermost Python frame's code and instruction
 * (0 without Python). */
struct gt_ustack_same {
	struct gt_hdr hdr;	/* api = the call's */
	__u64 caller;
	__u64 site2;
	__u64 pycode;
	__u32 pyinstr;
	__u32 _pad;		/* explicit padding, zero */
};

/* A call's stack: the next entry of hdr.tid, whose hdr.ts it carries (or,
 * GT_STACK_REF_EXIT, the next exit). */
#define GT_STACK_REF_EXIT	(1u << 0)	/* the stack of the call whose exit record
						 * comes next on hdr.tid at hdr.ts */
struct gt_stack_ref {
	struct gt_hdr hdr;	/* api = the call's */
	__u32 stack;		/* a GT_REC_STACK's id, written before this record */
	__u32 flags;		/* GT_STACK_REF_*; 0 (before it existed too): the next entry's */
};

/* A frame: an offset in a file (a GT_REC_MODULE), or, module 0, an address
 * in no file (JIT code, anonymous memory), or a Python frame: module
 * GT_FRAME_PY | a GT_REC_PYFUNC id, offset its line (0 = unknown). */
#define GT_FRAME_PY		(1u << 31)
struct gt_stack_frame {
	__u32 module;		/* GT_REC_MODULE id, 0 = none; GT_FRAME_PY | GT_REC_PYFUNC id */
	__u32 _pad;		/* explicit padding, zero */
	__u64 offset;		/* file offset of the instruction (the return address for
				 * frames after the first); the address when module is 0 */
};

/* An interned stack, innermost frame first (the probed libcuda function). */
struct gt_stack {
	struct gt_hdr hdr;	/* pid: the process it was first seen in */
	__u32 id;		/* from 1, unique in the trace */
	__u16 nframes;
	__u16 flags;		/* GT_STACK_* */
	struct gt_stack_frame frames[];
};

/* A file frames point into, as the process mapped it. */
struct gt_module {
	struct gt_hdr hdr;	/* pid: the process it was first seen in */
	__u32 id;		/* from 1, unique in the trace */
	__u16 len;		/* bytes of path[] with its NUL */
	__u8 build_id_len;	/* bytes of build_id[] used, 0 = none found */
	__u8 _pad;		/* explicit padding, zero */
	__u8 build_id[20];	/* the ELF note's GNU build id */
	__u32 _pad2;		/* explicit padding, zero */
	char path[];		/* as in /proc/PID/maps */
};

/* The function a frame's offset falls in, from the module's symbol table. */
struct gt_symbol {
	struct gt_hdr hdr;
	__u32 module;		/* GT_REC_MODULE id */
	__u16 len;		/* bytes of name[] with its NUL */
	__u16 _pad;		/* explicit padding, zero */
	__u64 offset;		/* the frame's offset, as in struct gt_stack_frame */
	__u64 delta;		/* the instruction's distance from the function's start */
	char name[];		/* the symbol (mangled, as the file has it) */
};

/* A Python function: its file and qualified name, as frames show them. */
struct gt_pyfunc {
	struct gt_hdr hdr;	/* pid: the process it was first seen in */
	__u32 id;		/* from 1, unique in the trace */
	__u32 firstlineno;	/* the line its code starts at */
	__u16 file_len;		/* bytes of the file name in text[], with its NUL */
	__u16 name_len;		/* bytes of the name after it, with its NUL */
	__u32 _pad;		/* explicit padding, zero */
	char text[];		/* the file name, NUL, the qualified name, NUL (UTF-8) */
};

#endif /* GTRACE_STACK_EVENTS_H */
