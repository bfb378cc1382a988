/* SPDX-License-Identifier: MIT */
/*
 * NVTX capture ranges (GTRACE_NVTX_CAPTURE, cupti/gtrace_cupti.h): follows
 * the NVTX ranges CUPTI's NVTX callbacks report and calls
 * gtrace_capture_open() when the first range named NAME (in DOMAIN) opens in
 * the process, gtrace_capture_close() when the last one ends.  The recorder
 * has uprobes on those two functions; they are this library's own symbols.
 *
 * Matching, per process:
 *   - a range matches when its message equals NAME, byte for byte (wide
 *     messages: NAME read as UTF-8), in the capture domain: NVTX's default
 *     domain (nvtxRange*, and nvtxDomainRange* with a NULL handle) or the
 *     handles nvtxDomainCreateA/W returned for DOMAIN;
 *   - messages: ASCII, Unicode and registered strings (nvtxDomainRegister-
 *     StringA/W in the capture domain), given directly or in event
 *     attributes;
 *   - push/pop: a pop closes what the same thread's push of the capture
 *     domain at that depth opened (NVTX nests per thread and per domain);
 *   - start/end: an end closes what the start with that range id opened,
 *     from any thread;
 *   - the count of matching ranges open, over all threads, gives the calls:
 *     open on 0 -> 1, close on 1 -> 0, in that order for the process.
 * Not followed: ranges opened before the agent subscribed (their pops and
 * ends are ignored), more than GT_NVTX_CAPTURE_NEST matching pushes open on
 * one thread or GT_NVTX_CAPTURE_IDS matching starts open at once (the excess
 * is not counted, said once), a thread that exits inside a matching push (it
 * stays open, as the range does in NVTX), all domains at once ("NAME@*").
 */
#ifndef GTRACE_CUPTI_NVTX_CAPTURE_H
#define GTRACE_CUPTI_NVTX_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <cupti.h>

#define GT_NVTX_CAPTURE_NEST	32	/* matching pushes open on one thread */
#define GT_NVTX_CAPTURE_IDS	64	/* matching start/end ranges open at once */
#define GT_NVTX_CAPTURE_DOMAINS	8	/* handles created for DOMAIN */
#define GT_NVTX_CAPTURE_STRINGS	16	/* registered strings equal to NAME */

/* Warnings while following ranges (each said once). */
typedef void (*gt_nvtx_capture_say_fn)(const char *msg);

/*
 * Takes GTRACE_NVTX_CAPTURE's value: NAME or NAME@DOMAIN, the first '@' not
 * preceded by '\' ending NAME; "\@" is a literal '@' and "\\" a literal '\'
 * in either part, any other '\' is itself.  Returns 0, or -EINVAL with *why
 * saying what is wrong (an empty NAME or DOMAIN, "@*", a second '@'), or
 * -ENOMEM.  Once only, before the callbacks are enabled.
 */
int gt_nvtx_capture__init(const char *spec, gt_nvtx_capture_say_fn say, const char **why);
/* gt_nvtx_capture__init() succeeded: the callbacks below are wanted. */
bool gt_nvtx_capture__on(void);
/* One CUPTI_CB_DOMAIN_NVTX callback (any thread). */
void gt_nvtx_capture__callback(CUpti_CallbackId cbid, const CUpti_NvtxData *d);

/* The recorder's uprobes sit on these (GT_CUPTI_CAPTURE_OPEN_SYM, ..._CLOSE_SYM). */
void gtrace_capture_open(void);
void gtrace_capture_close(void);

/* The NVTX callback ids capture ranges need. */
extern const CUpti_CallbackId gt_nvtx_capture_cbids[];
extern const size_t gt_nvtx_capture_cbids_len;

#endif
