// SPDX-License-Identifier: MIT
/* The page writer of `gtrace-bpf report` (report_page.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include "report/report_page.h"

#define MARK_OPEN "<!--@gt:"
#define MARK_CLOSE "@-->"

/* s[0..n) with the characters HTML gives a meaning to as references. */
static void put_html(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(s[i], out);
		}
	}
}

/* The JSON document with "<" as its JSON escape: "<" only occurs inside
 * strings in JSON, where \u003c means the same. */
static void put_data(FILE *out, const char *s, size_t n)
{
	const char *p = s, *end = s + n, *lt;

	while ((lt = memchr(p, '<', (size_t)(end - p)))) {
		fwrite(p, 1, (size_t)(lt - p), out);
		fputs("\\u003c", out);
		p = lt + 1;
	}
	fwrite(p, 1, (size_t)(end - p), out);
}

/* True when a file put inside a <script> or <style> element cannot end it
 * (nor open a comment that would swallow the end tag). */
static bool inert(struct report_asset a, const char *tag)
{
	size_t t = strlen(tag);

	for (const char *p = a.data; (p = memchr(p, '<', a.len - (size_t)(p - a.data))); p++) {
		size_t left = a.len - (size_t)(p - a.data);

		if (left >= 4 && !memcmp(p, "<!--", 4))
			return false;
		if (left >= t + 2 && p[1] == '/' && !strncasecmp(p + 2, tag, t))
			return false;
	}
	return true;
}

static int put_asset(FILE *out, enum report_asset_id id, const char *tag)
{
	struct report_asset a = report_asset(id);

	if (!inert(a, tag))
		return -EINVAL;
	fwrite(a.data, 1, a.len, out);
	return 0;
}

int report_page__write(FILE *out, const char *title, const char *data, size_t n)
{
	struct report_asset tpl = report_asset(REPORT_ASSET_HTML);
	struct report_asset lic = report_asset(REPORT_ASSET_UPLOT_LICENSE);
	const char *p = tpl.data, *end = tpl.data + tpl.len, *m;
	int err = 0;

	errno = 0;
	while (!err && (m = memmem(p, (size_t)(end - p), MARK_OPEN, strlen(MARK_OPEN)))) {
		const char *name = m + strlen(MARK_OPEN);
		const char *close = memmem(name, (size_t)(end - name), MARK_CLOSE, strlen(MARK_CLOSE));
		size_t len;

		if (!close)
			return -EINVAL;
		len = (size_t)(close - name);
		fwrite(p, 1, (size_t)(m - p), out);
#define IS(s) (len == strlen(s) && !memcmp(name, s, len))
		if (IS("TITLE"))
			put_html(out, title, strlen(title));
		else if (IS("REPORT_CSS"))
			err = put_asset(out, REPORT_ASSET_CSS, "style");
		else if (IS("REPORT_JS"))
			err = put_asset(out, REPORT_ASSET_JS, "script");
		else if (IS("UPLOT_CSS"))
			err = put_asset(out, REPORT_ASSET_UPLOT_CSS, "style");
		else if (IS("UPLOT_JS"))
			err = put_asset(out, REPORT_ASSET_UPLOT_JS, "script");
		else if (IS("UPLOT_VERSION"))
			fputs(UPLOT_VERSION, out);
		else if (IS("UPLOT_LICENSE"))
			put_html(out, lic.data, lic.len);
		else if (IS("DATA"))
			put_data(out, data, n);
		else
			err = -EINVAL;
#undef IS
		p = close + strlen(MARK_CLOSE);
	}
	if (err)
		return err;
	fwrite(p, 1, (size_t)(end - p), out);
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
