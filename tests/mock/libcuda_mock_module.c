// SPDX-License-Identifier: MIT
/*
 * The mock libcuda's modules, libraries, functions and kernels (the
 * kernels a PTX image declares, with the driver's name layout) and the
 * launches of them.
 */
#include "libcuda_mock.h"

/* ------------------------------------------------------------------ */
/* modules, libraries, functions, kernels                               */

/* A CUfunction or CUkernel.  The real driver's structs (driver 580,
 * measured) hold at +8 a pointer to the mangled name; keep that. */
struct mock_func {
	uint64_t magic;			/* +0  MAGIC_FUNC or MAGIC_KERNEL */
	const char *name;		/* +8  NUL-terminated mangled name */
	struct mock_module *owner;	/* module or library it came from */
	struct mock_func *function;	/* kernels: the CUfunction of cuKernelGetFunction */
};
_Static_assert(offsetof(struct mock_func, name) == 8, "name pointer at +8 like the driver");

struct mock_module {
	uint64_t magic;			/* MAGIC_MODULE or MAGIC_LIBRARY */
	size_t n;			/* kernels */
	struct mock_func **funcs;	/* modules: functions; libraries: kernels */
};

static bool ptx_ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c == '%';
}

static bool ptx_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static struct mock_func *func_new(uint64_t magic, const char *name, size_t len,
				  struct mock_module *owner)
{
	struct mock_func *f = calloc(1, sizeof(*f));
	char *s = malloc(len + 1);

	if (!f || !s) {
		free(f);
		free(s);
		return NULL;
	}
	memcpy(s, name, len);
	s[len] = '\0';
	f->magic = magic;
	f->name = s;
	f->owner = owner;
	return f;
}

static void func_free(struct mock_func *f)
{
	if (!f)
		return;
	f->magic = MAGIC_DEAD;
	free((char *)f->name);
	free(f);
}

static void module_free(struct mock_module *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++) {
		if (m->funcs[i])
			func_free(m->funcs[i]->function);
		func_free(m->funcs[i]);
	}
	free(m->funcs);
	m->magic = MAGIC_DEAD;
	free(m);
}

/* Builds a module or library from PTX text: one kernel per ".entry NAME". */
static CUresult module_from_ptx(const char *ptx, bool library, struct mock_module **out)
{
	struct mock_module *m = calloc(1, sizeof(*m));
	const char *p = ptx;
	size_t cap = 0;

	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->magic = library ? MAGIC_LIBRARY : MAGIC_MODULE;
	while (ptx && (p = strstr(p, ".entry")) != NULL) {
		const char *name;
		struct mock_func *f;
		bool word = (p == ptx || ptx_space(p[-1])) && ptx_space(p[6]);

		p += 6;
		if (!word)
			continue;
		while (ptx_space(*p))
			p++;
		name = p;
		while (ptx_ident_char(*p))
			p++;
		if (p == name)
			continue;
		if (m->n == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct mock_func **n = realloc(m->funcs, ncap * sizeof(*n));

			if (!n)
				goto nomem;
			m->funcs = n;
			cap = ncap;
		}
		f = func_new(library ? MAGIC_KERNEL : MAGIC_FUNC, name, (size_t)(p - name), m);
		if (!f)
			goto nomem;
		if (library) {
			f->function = func_new(MAGIC_FUNC, name, (size_t)(p - name), m);
			if (!f->function) {
				func_free(f);
				goto nomem;
			}
		}
		m->funcs[m->n++] = f;
	}
	*out = m;
	return CUDA_SUCCESS;
nomem:
	module_free(m);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/* Fat binaries (magic 0xBA55ED50) and ELF cubins are not parsed: they load
 * as empty modules.  Anything else is taken as NUL-terminated PTX text. */
static bool image_is_binary(const void *image)
{
	const unsigned char *b = image;
	static const unsigned char fatbin[4] = { 0x50, 0xed, 0x55, 0xba };
	static const unsigned char elf[4] = { 0x7f, 'E', 'L', 'F' };

	return !memcmp(b, fatbin, 4) || !memcmp(b, elf, 4);
}

static CUresult load_image(const void *image, bool library, struct mock_module **out)
{
	if (!image || !out)
		return CUDA_ERROR_INVALID_VALUE;
	return module_from_ptx(image_is_binary(image) ? NULL : image, library, out);
}

static CUresult load_file(const char *path, bool library, struct mock_module **out)
{
	FILE *f;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	CUresult r;

	if (!path || !out)
		return CUDA_ERROR_INVALID_VALUE;
	f = fopen(path, "rb");
	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	do {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return CUDA_ERROR_OUT_OF_MEMORY;
			}
			buf = nb;
			cap += 65536;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	r = load_image(len >= 4 ? buf : "", library, out);
	free(buf);
	return r;
}

static CUresult get_func(struct mock_module *m, uint64_t magic, const char *name, void **out)
{
	size_t i;

	if (!out || !name || !m)
		return CUDA_ERROR_INVALID_VALUE;
	if (m->magic != magic)
		return CUDA_ERROR_INVALID_HANDLE;
	for (i = 0; i < m->n; i++) {
		if (!strcmp(m->funcs[i]->name, name)) {
			*out = m->funcs[i];
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_NOT_FOUND;
}

static CUresult func_name(const void *h, const char **name)
{
	const struct mock_func *f = h;

	if (!name || !f)
		return CUDA_ERROR_INVALID_VALUE;
	if (f->magic != MAGIC_FUNC && f->magic != MAGIC_KERNEL)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = f->name;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* launches                                                             */

static CUresult launch_check(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			     unsigned int bx, unsigned int by, unsigned int bz, CUstream s)
{
	const struct mock_func *fn = (const void *)f;
	uint64_t t0 = gpu_work_fn ? mono_ns() : 0;

	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	/* the driver accepts a CUkernel cast to CUfunction */
	if (!fn || (fn->magic != MAGIC_FUNC && fn->magic != MAGIC_KERNEL))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!gx || !gy || !gz || !bx || !by || !bz)
		return CUDA_ERROR_INVALID_VALUE;
	if ((unsigned long long)bx * by * bz > 1024 || bz > 64 || gy > 65535 || gz > 65535)
		return CUDA_ERROR_INVALID_VALUE;
	if (!stream_valid(s))
		return CUDA_ERROR_INVALID_HANDLE;
	{
		const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };

		if (graph_capture_launch(s, fn->name, grid, block))
			return CUDA_SUCCESS;	/* a node of the graph, no GPU work now */
	}
	if (gpu_work_fn) {
		struct mock_gpu_work w = { .kind = MOCK_WORK_KERNEL, .name = fn->name,
					   .grid = { gx, gy, gz }, .block = { bx, by, bz },
					   .stream = stream_id(s) };

		gpu_work(&w, t0);
	}
	return CUDA_SUCCESS;
}

static CUresult launch_ex_check(const CUlaunchConfig *c, CUfunction f)
{
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	if (c->numAttrs && !c->attrs)
		return CUDA_ERROR_INVALID_VALUE;
	return launch_check(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
			    c->blockDimZ, c->hStream);
}

/* ------------------------------------------------------------------ */
/* modules, libraries, kernels                                          */

MOCK_API CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return load_file(fname, false, (struct mock_module **)module);
}

MOCK_API CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return load_image(image, false, (struct mock_module **)module);
}

MOCK_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
				     CUjit_option *options, void **optionValues)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	if (numOptions && (!options || !optionValues))
		return CUDA_ERROR_INVALID_VALUE;
	return load_image(image, false, (struct mock_module **)module);
}

MOCK_API CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	return load_image(fatCubin, false, (struct mock_module **)module);
}

MOCK_API CUresult cuModuleUnload(CUmodule hmod)
{
	struct mock_module *m = (struct mock_module *)hmod;

	if (!m || m->magic != MAGIC_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	module_free(m);
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	return get_func((struct mock_module *)hmod, MAGIC_MODULE, name, (void **)hfunc);
}

MOCK_API CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
				    void **jitOptionsValues, unsigned int numJitOptions,
				    CUlibraryOption *libraryOptions, void **libraryOptionValues,
				    unsigned int numLibraryOptions)
{
	if ((numJitOptions && (!jitOptions || !jitOptionsValues)) ||
	    (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return load_image(code, true, (struct mock_module **)library);
}

MOCK_API CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
					CUjit_option *jitOptions, void **jitOptionsValues,
					unsigned int numJitOptions, CUlibraryOption *libraryOptions,
					void **libraryOptionValues, unsigned int numLibraryOptions)
{
	if ((numJitOptions && (!jitOptions || !jitOptionsValues)) ||
	    (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!is_init())
		return CUDA_ERROR_NOT_INITIALIZED;
	return load_file(fileName, true, (struct mock_module **)library);
}

MOCK_API CUresult cuLibraryUnload(CUlibrary library)
{
	struct mock_module *m = (struct mock_module *)library;

	if (!m || m->magic != MAGIC_LIBRARY)
		return CUDA_ERROR_INVALID_HANDLE;
	module_free(m);
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	return get_func((struct mock_module *)library, MAGIC_LIBRARY, name, (void **)pKernel);
}

MOCK_API CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	const struct mock_func *k = (const void *)kernel;

	if (!pFunc || !k)
		return CUDA_ERROR_INVALID_VALUE;
	if (k->magic != MAGIC_KERNEL || !k->function)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!have_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	*pFunc = (CUfunction)k->function;
	return CUDA_SUCCESS;
}

MOCK_API CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
	return func_name(hfunc, name);
}

MOCK_API CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
	return func_name(hfunc, name);
}

/* ------------------------------------------------------------------ */
/* launches                                                             */

MOCK_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				 unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
				 unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
				 void **kernelParams, void **extra)
{
	(void)sharedMemBytes;
	(void)kernelParams;
	(void)extra;
	return launch_check(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream);
}

MOCK_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				      unsigned int gridDimZ, unsigned int blockDimX,
				      unsigned int blockDimY, unsigned int blockDimZ,
				      unsigned int sharedMemBytes, CUstream hStream,
				      void **kernelParams, void **extra)
{
	(void)sharedMemBytes;
	(void)kernelParams;
	(void)extra;
	return launch_check(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream);
}

MOCK_API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
				   void **extra)
{
	(void)kernelParams;
	(void)extra;
	return launch_ex_check(config, f);
}

MOCK_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
					void **kernelParams, void **extra)
{
	(void)kernelParams;
	(void)extra;
	return launch_ex_check(config, f);
}

MOCK_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					    unsigned int gridDimY, unsigned int gridDimZ,
					    unsigned int blockDimX, unsigned int blockDimY,
					    unsigned int blockDimZ, unsigned int sharedMemBytes,
					    CUstream hStream, void **kernelParams)
{
	(void)sharedMemBytes;
	(void)kernelParams;
	return launch_check(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream);
}

MOCK_API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
						 unsigned int gridDimY, unsigned int gridDimZ,
						 unsigned int blockDimX, unsigned int blockDimY,
						 unsigned int blockDimZ, unsigned int sharedMemBytes,
						 CUstream hStream, void **kernelParams)
{
	(void)sharedMemBytes;
	(void)kernelParams;
	return launch_check(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream);
}

