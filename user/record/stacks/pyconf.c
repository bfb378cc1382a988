// SPDX-License-Identifier: MIT
/*
 * CPython interpreters named to BPF (pyconf.h). The offsets of the
 * structures BPF follows are facts of each version's x86-64 release build
 * (no Py_DEBUG, not free-threaded): 3.10-3.12 are built in here; 3.13 brings
 * its own (_Py_DebugOffsets, the first bytes of _PyRuntime, read from the
 * file's data as the interpreter initialises it), checked by its cookie and
 * version. Line tables are decoded here, not in BPF: BPF sends each code
 * object's table once (struct gt_pycode) and the instruction of each frame.
 */
#include <bpf/bpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bpf/gtrace_py.h"
#include "lib/hmap.h"
#include "lib/kdev.h"
#include "lib/log.h"
#include "lib/path_find.h"
#include "record/stacks/elf_symtab.h"
#include "record/stacks/pyconf.h"

#define N GT_PY_NONE

/* 3.10-3.12 (3.13's own offsets replace its entry when the file has them). */
static const struct gt_py_cfg builtin[] = {
	{ .version = 0x030a, .tid_kind = GT_PY_TID_PTHREAD, .instr_kind = GT_PY_INSTR_LASTI,
	  .interp_head = 32, .threads_head = 8, .ts_next = 8, .ts_tid = 176, .ts_frame = 24,
	  .cframe_frame = N, .fr_prev = 24, .fr_code = 32, .fr_instr = 96, .fr_owner = N, .fr_entry = N,
	  .co_filename = 104, .co_name = 112, .co_firstlineno = 40, .co_linetable = 120, .co_code = 0,
	  .str_state = 32, .str_ascii = 48, .str_compact = 72 },
	{ .version = 0x030b, .tid_kind = GT_PY_TID_NATIVE, .instr_kind = GT_PY_INSTR_PTR,
	  .interp_head = 40, .threads_head = 16, .ts_next = 8, .ts_tid = 160, .ts_frame = 56,
	  .cframe_frame = 8, .fr_prev = 48, .fr_code = 32, .fr_instr = 56, .fr_owner = 69, .fr_entry = 68,
	  .co_filename = 112, .co_name = 128, .co_firstlineno = 72, .co_linetable = 136, .co_code = 184,
	  .str_state = 32, .str_ascii = 48, .str_compact = 72 },
	{ .version = 0x030c, .tid_kind = GT_PY_TID_NATIVE, .instr_kind = GT_PY_INSTR_PTR,
	  .interp_head = 40, .threads_head = 72, .ts_next = 8, .ts_tid = 144, .ts_frame = 56,
	  .cframe_frame = 0, .fr_prev = 8, .fr_code = 0, .fr_instr = 56, .fr_owner = 70, .fr_entry = N,
	  .co_filename = 112, .co_name = 128, .co_firstlineno = 68, .co_linetable = 136, .co_code = 192,
	  .str_state = 32, .str_ascii = 40, .str_compact = 56 },
	{ .version = 0x030d, .tid_kind = GT_PY_TID_NATIVE, .instr_kind = GT_PY_INSTR_PTR,
	  .interp_head = 632, .threads_head = 7344, .ts_next = 8, .ts_tid = 160, .ts_frame = 72,
	  .cframe_frame = N, .fr_prev = 8, .fr_code = 0, .fr_instr = 56, .fr_owner = 70, .fr_entry = N,
	  .co_filename = 112, .co_name = 128, .co_firstlineno = 68, .co_linetable = 136, .co_code = 200,
	  .str_state = 32, .str_ascii = 40, .str_compact = 56 },
};

/* _Py_DebugOffsets of 3.13: where each offset BPF needs is kept in it. */
#define DBG_SIZE		584
#define DBG_VERSION		8
static const struct {
	size_t at;		/* in _Py_DebugOffsets */
	size_t field;		/* in struct gt_py_cfg */
} dbg313[] = {
	{ 40, offsetof(struct gt_py_cfg, interp_head) },
	{ 72, offsetof(struct gt_py_cfg, threads_head) },
	{ 168, offsetof(struct gt_py_cfg, ts_next) },
	{ 184, offsetof(struct gt_py_cfg, ts_frame) },
	{ 200, offsetof(struct gt_py_cfg, ts_tid) },
	{ 232, offsetof(struct gt_py_cfg, fr_prev) },
	{ 240, offsetof(struct gt_py_cfg, fr_code) },
	{ 248, offsetof(struct gt_py_cfg, fr_instr) },
	{ 264, offsetof(struct gt_py_cfg, fr_owner) },
	{ 280, offsetof(struct gt_py_cfg, co_filename) },
	{ 296, offsetof(struct gt_py_cfg, co_name) },
	{ 304, offsetof(struct gt_py_cfg, co_linetable) },
	{ 312, offsetof(struct gt_py_cfg, co_firstlineno) },
	{ 344, offsetof(struct gt_py_cfg, co_code) },
	{ 544, offsetof(struct gt_py_cfg, str_state) },
	{ 560, offsetof(struct gt_py_cfg, str_ascii) },
};

struct pfile {
	bool interp;		/* named to BPF */
};

struct pyconf {
	struct pyconf_bpf bpf;
	bool have_bpf;
	struct hmap files;	/* (ino, dev) -> struct pfile */
	struct gt_py_cfg cfgs[GT_PY_CFGS];
	uint32_t ncfgs, nfiles;
	struct pyconf_counters c;
};

struct pyconf *pyconf__new(const struct pyconf_bpf *bpf)
{
	struct pyconf *pc = calloc(1, sizeof(*pc));

	if (pc && bpf) {
		pc->bpf = *bpf;
		pc->have_bpf = true;
	}
	elf_version(EV_CURRENT);
	return pc;
}

/* ---- line tables ---------------------------------------------------------- */

/* 3.10: pairs (bytes covered, line delta; -128: no line). */
static uint32_t line310(const uint8_t *t, uint32_t len, uint32_t first, uint32_t instr)
{
	uint64_t addr = 0, want = (uint64_t)instr * 2;
	int64_t line = first;

	for (uint32_t i = 0; i + 1 < len; i += 2) {
		int8_t ld = (int8_t)t[i + 1];
		bool none = ld == -128;

		if (!none)
			line += ld;
		addr += t[i];
		if (want < addr)
			return none || line <= 0 ? 0 : (uint32_t)line;
	}
	return 0;
}

static uint32_t varint(const uint8_t *t, uint32_t len, uint32_t *i)
{
	uint32_t v = 0, shift = 0;

	while (*i < len && shift < 32) {
		uint8_t b = t[(*i)++];

		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int32_t svarint(const uint8_t *t, uint32_t len, uint32_t *i)
{
	uint32_t v = varint(t, len, i);

	return v & 1 ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

/* 3.11+: entries of a first byte 1CCCCLLL (code C, L+1 code units), then
 * the code's fields; the line moves by what codes 10-14 say. */
static uint32_t line311(const uint8_t *t, uint32_t len, uint32_t first, uint32_t instr)
{
	uint64_t addr = 0;
	int64_t line = first;
	uint32_t i = 0;

	while (i < len) {
		uint8_t b = t[i++];
		uint32_t code = (b >> 3) & 15, units = (b & 7) + 1;
		bool none = false;

		if (!(b & 128))
			return 0;	/* not at an entry's start: a table read wrong */
		switch (code) {
		case 15:
			none = true;
			break;
		case 14:
			line += svarint(t, len, &i);
			varint(t, len, &i);
			varint(t, len, &i);
			varint(t, len, &i);
			break;
		case 13:
			line += svarint(t, len, &i);
			break;
		case 10:
		case 11:
		case 12:
			line += code - 10;
			i += 2;
			break;
		default:
			i += 1;
			break;
		}
		addr += units;
		if (instr < addr)
			return none || line <= 0 ? 0 : (uint32_t)line;
	}
	return 0;
}

uint32_t pyconf__line(uint32_t version, const uint8_t *table, uint32_t len, uint32_t firstlineno,
		      uint32_t instr)
{
	if (version == 0x030a)
		return line310(table, len, firstlineno, instr);
	if (version >= 0x030b && version <= 0x030d)
		return line311(table, len, firstlineno, instr);
	return 0;
}

/* ---- interpreter files ----------------------------------------------------- */

struct elf_file {
	int fd;
	Elf *e;
};

static bool elf_open(struct elf_file *f, uint32_t pid, const char *path)
{
	char p[PATH_MAX + 32];
	struct stat st;

	f->e = NULL;
	if (pid)
		snprintf(p, sizeof(p), "/proc/%u/root%s", pid, path);
	else
		snprintf(p, sizeof(p), "%s", path);
	f->fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (f->fd < 0)
		return false;
	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode) ||
	    !(f->e = elf_begin(f->fd, ELF_C_READ, NULL)) || elf_kind(f->e) != ELF_K_ELF) {
		if (f->e)
			elf_end(f->e);
		close(f->fd);
		f->e = NULL;
		return false;
	}
	return true;
}

static void elf_close(struct elf_file *f)
{
	elf_end(f->e);
	close(f->fd);
}

struct sym_want {
	const char *name;
	uint64_t value, size;
};

static bool sym_is(void *ctx, const GElf_Sym *s, const char *name)
{
	struct sym_want *w = ctx;

	if (s->st_shndx == SHN_UNDEF || strcmp(name, w->name))
		return false;
	w->value = s->st_value;
	w->size = s->st_size;
	return true;
}

/* A defined symbol's value and size; false when the file has none. */
static bool elf_sym(Elf *e, const char *want, uint64_t *value, uint64_t *size)
{
	struct sym_want w = { want, 0, 0 };

	if (!elf_symtab__each(e, sym_is, &w))
		return false;
	*value = w.value;
	*size = w.size;
	return true;
}

/* n bytes at vaddr from the file's loaded data; false when not in it. */
static bool elf_read(struct elf_file *f, uint64_t vaddr, void *buf, size_t n)
{
	size_t nph;

	if (elf_getphdrnum(f->e, &nph))
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->e, (int)i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr + n > ph.p_vaddr + ph.p_filesz)
			continue;
		return pread(f->fd, buf, n, (off_t)(ph.p_offset + vaddr - ph.p_vaddr)) == (ssize_t)n;
	}
	return false;
}

/* The page-aligned address the file's offset 0 is loaded at, unrelocated. */
static bool elf_base(Elf *e, uint64_t *base)
{
	size_t nph;

	if (elf_getphdrnum(e, &nph))
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			if (ph.p_offset > (ph.p_vaddr & 0xfff))
				return false;	/* offset 0 is not in the first segment */
			*base = ph.p_vaddr & ~0xfffull;
			return true;
		}
	}
	return false;
}

/* 3.N from a name such as python3.12 or libpython3.10.so.1.0: 0x030N. */
static uint32_t version_of_name(const char *path)
{
	const char *b = strrchr(path, '/');
	unsigned major, minor;

	b = b ? b + 1 : path;
	if (!strncmp(b, "lib", 3))
		b += 3;
	if (sscanf(b, "python%u.%u", &major, &minor) == 2 && major < 10 && minor < 100)
		return major << 8 | minor;
	return 0;
}

static bool python_name(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "python", 6) || !strncmp(b, "libpython", 9);
}

static int cfg_slot(struct pyconf *pc, const struct gt_py_cfg *cfg)
{
	for (uint32_t i = 0; i < pc->ncfgs; i++)
		if (!memcmp(&pc->cfgs[i], cfg, sizeof(*cfg)))
			return (int)i;
	if (pc->ncfgs == GT_PY_CFGS)
		return -1;
	pc->cfgs[pc->ncfgs] = *cfg;
	if (pc->have_bpf && bpf_map_update_elem(pc->bpf.cfgs_fd, &pc->ncfgs, cfg, BPF_ANY))
		return -1;
	return (int)pc->ncfgs++;
}

/* 3.13's offsets from its _Py_DebugOffsets; false when they are not there. */
static bool cfg_from_debug(struct elf_file *f, uint64_t runtime, struct gt_py_cfg *cfg)
{
	uint8_t d[DBG_SIZE];
	uint64_t v, version;

	if (!elf_read(f, runtime, d, sizeof(d)) || memcmp(d, "xdebugpy", 8))
		return false;
	memcpy(&version, d + DBG_VERSION, 8);
	if ((version >> 16) != 0x030d)
		return false;
	for (size_t i = 0; i < sizeof(dbg313) / sizeof(dbg313[0]); i++) {
		memcpy(&v, d + dbg313[i].at, 8);
		if (v > 0xffffff)
			return false;
		*(uint32_t *)((char *)cfg + dbg313[i].field) = (uint32_t)v;
	}
	/* a compact str that is not ASCII has two more words (utf8_length, utf8) */
	cfg->str_compact = cfg->str_ascii + 16;
	return true;
}

/* Reads the file as an interpreter: true when named to BPF. */
static bool interp_check(struct pyconf *pc, uint32_t pid, const char *path, uint32_t dev, uint64_t ino)
{
	struct gt_py_cfg cfg;
	struct gt_py_file_key key = { .ino = ino, .dev = dev };
	struct gt_py_file val = { 0 };
	struct elf_file f;
	uint64_t runtime, size, vaddr, base;
	uint32_t version = 0, hex;
	bool found = false;
	int slot;

	if (!elf_open(&f, pid, path))
		return false;
	if (!elf_sym(f.e, "_PyRuntime", &runtime, &size)) {
		/* 2.7 and 3.6 have no _PyRuntime: a runtime all the same */
		if (elf_sym(f.e, "Py_Initialize", &vaddr, &size) && (version = version_of_name(path))) {
			pr_warn("stacks: %s is Python %u.%u: its processes' stacks are native only (Python "
				"frames are read for 3.10 to 3.13)", path, version >> 8, version & 0xff);
			pc->c.unsupported++;
		}
		elf_close(&f);
		return false;
	}
	if (elf_sym(f.e, "Py_Version", &vaddr, &size) && elf_read(&f, vaddr, &hex, sizeof(hex)))
		version = hex >> 16;
	else
		version = version_of_name(path);
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (builtin[i].version == version) {
			cfg = builtin[i];
			found = true;
		}
	if (found && version == 0x030d && !cfg_from_debug(&f, runtime, &cfg))
		found = false;
	if (!found) {
		if (version)
			pr_warn("stacks: %s is Python %u.%u: its processes' stacks are native only (Python "
				"frames are read for 3.10 to 3.13)", path, version >> 8, version & 0xff);
		else
			pr_warn("stacks: %s: a Python runtime of a version not known: its processes' stacks "
				"are native only", path);
		pc->c.unsupported++;
		elf_close(&f);
		return false;
	}
	if (!elf_base(f.e, &base) || runtime < base) {
		pc->c.unreadable++;
		elf_close(&f);
		return false;
	}
	elf_close(&f);
	slot = cfg_slot(pc, &cfg);
	if (slot < 0) {
		pc->c.unreadable++;
		return false;
	}
	val.runtime = runtime - base;
	val.cfg = (uint32_t)slot;
	if (pc->have_bpf) {
		if (bpf_map_update_elem(pc->bpf.files_fd, &key, &val, BPF_ANY))
			return false;
		*pc->bpf.nfiles = ++pc->nfiles;
		*pc->bpf.gen = *pc->bpf.gen + 1;
		if (pc->bpf.nfiles2 && pc->bpf.gen2) {
			*pc->bpf.nfiles2 = pc->nfiles;
			*pc->bpf.gen2 = *pc->bpf.gen;
		}
	}
	pc->c.interpreters++;
	pr_debug("stacks: Python %u.%u at %s", version >> 8, version & 0xff, path);
	return true;
}

bool pyconf__on_file(struct pyconf *pc, uint32_t pid, const char *path, uint32_t dev, uint64_t ino)
{
	struct pfile *pf;
	bool created;

	if (!pc || !python_name(path))
		return false;
	pf = hmap_get_or_new(&pc->files, ino, dev, sizeof(*pf), &created);
	if (!pf)
		return false;
	if (created)
		pf->interp = interp_check(pc, pid, path, dev, ino);
	return pf->interp;
}

bool pyconf__is_interp(const struct pyconf *pc, uint32_t dev, uint64_t ino)
{
	const struct pfile *pf = pc ? hmap_get(&pc->files, ino, dev) : NULL;

	return pf && pf->interp;
}

/* A file named by path in the recorder's view. */
static void on_path(struct pyconf *pc, const char *path)
{
	struct stat st;

	if (!stat(path, &st) && S_ISREG(st.st_mode))
		pyconf__on_file(pc, 0, path, kdev__of(st.st_dev), st.st_ino);
}

void pyconf__scan_procs(struct pyconf *pc)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[64], line[4352], file[4200];
		unsigned long pid = strtoul(de->d_name, NULL, 10);
		FILE *f;

		if (!pid || !isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%lu/maps", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long ino;
			unsigned maj, min;

			file[0] = 0;
			if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu %4199[^\n]", &maj, &min, &ino, file) == 4 &&
			    ino && file[0] == '/' && python_name(file))
				pyconf__on_file(pc, (uint32_t)pid, file, (maj << 20) | min, ino);
		}
		fclose(f);
	}
	closedir(d);
}

/* The libpython an executable needs, where its run path or the system's
 * directories have it. */
static void needed_libpython(struct pyconf *pc, const char *exe)
{
	static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					    "/usr/local/lib", "/usr/lib", "/lib" };
	char need[256] = "", runpath[1024] = "", origin[PATH_MAX], cand[PATH_MAX + 300];
	struct elf_file f;
	Elf_Scn *scn = NULL;
	char *slash;

	if (!elf_open(&f, 0, exe))
		return;
	while ((scn = elf_nextscn(f.e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(d, (int)i, &dyn))
				continue;
			if ((dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH) &&
			    (s = elf_strptr(f.e, sh.sh_link, dyn.d_un.d_val))) {
				if (dyn.d_tag == DT_NEEDED && !strncmp(s, "libpython", 9))
					snprintf(need, sizeof(need), "%s", s);
				else if (dyn.d_tag != DT_NEEDED)
					snprintf(runpath, sizeof(runpath), "%s", s);
			}
		}
	}
	elf_close(&f);
	if (!*need)
		return;
	snprintf(origin, sizeof(origin), "%s", exe);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = 0;
	for (const char *p = runpath; *p;) {
		size_t len = strcspn(p, ":");

		if (len >= 7 && !strncmp(p, "$ORIGIN", 7))
			snprintf(cand, sizeof(cand), "%s%.*s/%s", origin, (int)(len - 7), p + 7, need);
		else
			snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, p, need);
		on_path(pc, cand);
		p += len + !!p[len];
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/%s", dirs[i], need);
		on_path(pc, cand);
	}
}

/* An executable or a script's interpreter: itself and the libpython it needs. */
static void on_program(struct pyconf *pc, const char *prog, const char *path_env, int depth)
{
	char path[PATH_MAX], line[512], *interp, *arg;
	FILE *f;

	if (depth > 2 || path__find(prog, path_env, path, sizeof(path)))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && !strncmp(line, "#!", 2)) {
		fclose(f);
		interp = strtok(line + 2, " \t\n");
		arg = interp ? strtok(NULL, " \t\n") : NULL;
		if (!interp)
			return;
		/* #!/usr/bin/env [-S] python3 */
		if (!strcmp(strrchr(interp, '/') ? strrchr(interp, '/') + 1 : interp, "env")) {
			while (arg && arg[0] == '-')
				arg = strtok(NULL, " \t\n");
			if (arg)
				on_program(pc, arg, path_env, depth + 1);
			return;
		}
		on_program(pc, interp, path_env, depth + 1);
		return;
	}
	fclose(f);
	on_path(pc, path);
	needed_libpython(pc, path);
}

void pyconf__on_exec(struct pyconf *pc, uint32_t pid)
{
	char link[64], exe[PATH_MAX], in_root[PATH_MAX + 32];
	struct stat st;
	ssize_t n;

	if (!pc)
		return;
	snprintf(link, sizeof(link), "/proc/%u/exe", pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	/* the name first: most execs are of other programs, not read at all */
	if (exe[0] != '/' || !python_name(exe) || stat(link, &st) || !S_ISREG(st.st_mode))
		return;
	pyconf__on_file(pc, pid, exe, kdev__of(st.st_dev), st.st_ino);
	snprintf(in_root, sizeof(in_root), "/proc/%u/root%s", pid, exe);
	needed_libpython(pc, in_root);
}

void pyconf__scan_cmd(struct pyconf *pc, char *const *argv, const char *path_env)
{
	const char *b;

	if (!pc)
		return;
	/* env [-i] [NAME=VALUE]... PROGRAM: the program */
	if (argv && argv[0]) {
		b = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
		if (!strcmp(b, "env"))
			while (argv[1] && (argv[1][0] == '-' || strchr(argv[1], '=')))
				argv++;
		on_program(pc, !strcmp(b, "env") && argv[1] ? argv[1] : argv[0], path_env, 0);
	}
	on_program(pc, "python3", path_env, 0);
}

const struct pyconf_counters *pyconf__counters(const struct pyconf *pc)
{
	return &pc->c;
}

void pyconf__free(struct pyconf *pc)
{
	if (!pc)
		return;
	hmap_free_all(&pc->files, NULL);
	free(pc);
}
