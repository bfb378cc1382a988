/* SPDX-License-Identifier: MIT */
/*
 * The page of `gtrace-bpf report`: its files, built into the program
 * (report_assets.c), and the writer that fills the template.
 */
#ifndef GTRACE_REPORT_PAGE_H
#define GTRACE_REPORT_PAGE_H

#include <stddef.h>
#include <stdio.h>

#define UPLOT_VERSION "1.6.32"	/* user/report/page/vendor/uplot/README.md */

enum report_asset_id {
	REPORT_ASSET_HTML,		/* report.html: the template */
	REPORT_ASSET_CSS,		/* report.css */
	REPORT_ASSET_JS,		/* report.js */
	REPORT_ASSET_UPLOT_JS,		/* vendor/uplot/uPlot.iife.min.js */
	REPORT_ASSET_UPLOT_CSS,		/* vendor/uplot/uPlot.min.css */
	REPORT_ASSET_UPLOT_LICENSE,	/* vendor/uplot/LICENSE */
	REPORT_ASSET__COUNT,
};

struct report_asset {
	const char *data;	/* the file's bytes, NUL after them */
	size_t len;		/* without the NUL */
};

/* One of the files. */
struct report_asset report_asset(enum report_asset_id id);

/*
 * Writes the page to out: the template with each marker (an HTML comment
 * "<!--@gt:NAME@-->") replaced by what it names: TITLE (title, HTML-escaped),
 * REPORT_CSS, REPORT_JS, UPLOT_CSS, UPLOT_JS, UPLOT_VERSION, UPLOT_LICENSE
 * (HTML-escaped) and DATA, the JSON document data[0..n) with every "<"
 * written as \u003c, so that nothing in it (a kernel name, a command line)
 * can end the script element it sits in.  Returns 0, -EINVAL for a marker
 * it does not know or an embedded file that would end its element, or the
 * stream's write error as a negative errno.
 */
int report_page__write(FILE *out, const char *title, const char *data, size_t n);

#endif
