// SPDX-License-Identifier: MIT
/*
 * The page of `gtrace-bpf report` (user/report/page/: the template, its
 * stylesheet and script, and the vendored uPlot with its licence), built
 * into the program byte for byte with the assembler's .incbin: the files
 * stay ordinary HTML, CSS and JavaScript in the tree, readable and
 * checkable on their own, and need no generator (xxd, a script) at build
 * time.  The Makefile names them as prerequisites of this object (the
 * compiler's dependency files do not see .incbin) and passes their folder
 * as GT_REPORT_DIR.  Each blob ends in a NUL that its size leaves out.
 */
#include "report/report_page.h"

#ifndef GT_REPORT_DIR
#error "GT_REPORT_DIR: the folder of the report's page files (the Makefile sets it)"
#endif

#define GT_ASSET(sym, file)							\
	__asm__(".section .rodata\n"						\
		".balign 16\n"							\
		".type " #sym ", @object\n"					\
		#sym ":\n"							\
		".incbin \"" GT_REPORT_DIR "/" file "\"\n"			\
		#sym "_end:\n"							\
		".byte 0\n"							\
		".previous\n");							\
	extern const char sym[], sym##_end[]

GT_ASSET(gt_report_html, "report.html");
GT_ASSET(gt_report_css, "report.css");
GT_ASSET(gt_report_js, "report.js");
GT_ASSET(gt_uplot_js, "vendor/uplot/uPlot.iife.min.js");
GT_ASSET(gt_uplot_css, "vendor/uplot/uPlot.min.css");
GT_ASSET(gt_uplot_license, "vendor/uplot/LICENSE");

struct report_asset report_asset(enum report_asset_id id)
{
	static const struct { const char *start, *end; } blobs[REPORT_ASSET__COUNT] = {
#define BLOB(sym) { sym, sym##_end }
		[REPORT_ASSET_HTML] = BLOB(gt_report_html),
		[REPORT_ASSET_CSS] = BLOB(gt_report_css),
		[REPORT_ASSET_JS] = BLOB(gt_report_js),
		[REPORT_ASSET_UPLOT_JS] = BLOB(gt_uplot_js),
		[REPORT_ASSET_UPLOT_CSS] = BLOB(gt_uplot_css),
		[REPORT_ASSET_UPLOT_LICENSE] = BLOB(gt_uplot_license),
#undef BLOB
	};

	if ((unsigned)id >= REPORT_ASSET__COUNT)
		return (struct report_asset){ "", 0 };
	return (struct report_asset){ blobs[id].start, (size_t)(blobs[id].end - blobs[id].start) };
}
