/* SPDX-License-Identifier: MIT */
/*
 * The CPython interpreters whose threads' Python frames BPF walks (--stacks;
 * bpf/gtrace_py.h, bpf/pystack.bpf.h): a file that holds _PyRuntime (the
 * python executable, or libpython3.X.so) is read once (ELF: the symbol, its
 * version), and a supported one (3.10-3.13) is named to BPF with its
 * version's offsets; BPF finds it in a process' mappings by device and
 * inode. Files are offered as the recorder meets them: the program of
 * `-- CMD` and the python of PATH before it starts (so that its first calls
 * have their Python frames), every process' mappings at the recorder's start
 * (--all, -p) and at a process' first stack.
 */
#ifndef GTRACE_PYCONF_H
#define GTRACE_PYCONF_H

#include <stdbool.h>
#include <stdint.h>

struct pyconf;

/* BPF's side: the maps and the two words of its .bss (py_nfiles, py_gen). */
struct pyconf_bpf {
	int cfgs_fd, files_fd, procs_fd;
	volatile uint32_t *nfiles, *gen;
	volatile uint32_t *nfiles2, *gen2;	/* another object's copies (the NCCL one's), or NULL */
};

struct pyconf_counters {
	uint32_t interpreters;	/* files named to BPF */
	uint32_t unsupported;	/* interpreters of another version: native stacks only */
	uint32_t unreadable;	/* python files that could not be read as an interpreter */
};

/* NULL when out of memory; with bpf NULL (tests, readers) nothing is named. */
struct pyconf *pyconf__new(const struct pyconf_bpf *bpf);
/* The file at path (as process pid sees it, 0 = the recorder's own view),
 * device (the kernel's dev_t) and inode: true when it is an interpreter BPF
 * walks. Read once per file; an unsupported version is said once. */
bool pyconf__on_file(struct pyconf *pc, uint32_t pid, const char *path, uint32_t dev, uint64_t ino);
/* Whether (dev, ino) is an interpreter named to BPF. */
bool pyconf__is_interp(const struct pyconf *pc, uint32_t dev, uint64_t ino);
/* Every interpreter mapped by a running process (--all, -p: before their
 * next call). */
void pyconf__scan_procs(struct pyconf *pc);
/* Process pid ran exec: its new executable, when an interpreter, and the
 * libpython it needs, named now, before the new image's first calls (its
 * stacks would find it unknown until the recorder reads its mappings). */
void pyconf__on_exec(struct pyconf *pc, uint32_t pid);
/* The interpreter `-- CMD` (argv, NULL-ended) will run: the program found
 * on PATH (after env's options and variables), a script's #! interpreter,
 * the libpython an executable needs; and the python3 of PATH. */
void pyconf__scan_cmd(struct pyconf *pc, char *const *argv, const char *path_env);
const struct pyconf_counters *pyconf__counters(const struct pyconf *pc);
void pyconf__free(struct pyconf *pc);

/* The line of instruction instr (code units from the start) of a code whose
 * line table (co_linetable, version's format) and first line are given; 0
 * when the table does not say (or was cut before it). For tests too. */
uint32_t pyconf__line(uint32_t version, const uint8_t *table, uint32_t len, uint32_t firstlineno,
		      uint32_t instr);

#endif
