/* SPDX-License-Identifier: MIT */
/*
 * The symbols of an ELF file's symbol tables (.symtab and .dynsym), one by
 * one, for record/stacks/: ustacks_sym.c keeps the functions, pyconf.c looks
 * up the interpreter's data.
 */
#ifndef GTRACE_ELF_SYMTAB_H
#define GTRACE_ELF_SYMTAB_H

#include <gelf.h>
#include <stdbool.h>

/* Calls fn with each named symbol until it returns true; true when one did. */
static inline bool elf_symtab__each(Elf *e, bool (*fn)(void *ctx, const GElf_Sym *s, const char *name),
				    void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;

			if (gelf_getsym(d, (int)i, &s) && (name = elf_strptr(e, sh.sh_link, s.st_name)) &&
			    *name && fn(ctx, &s, name))
				return true;
		}
	}
	return false;
}

#endif
