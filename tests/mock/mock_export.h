/* SPDX-License-Identifier: MIT */
/*
 * How the mock libraries (libcuda_mock.c, libnccl_mock.c) export their
 * calls: every one its own non-inlined function with its own entry address,
 * as uprobes attach by address.
 */
#ifndef GT_MOCK_EXPORT_H
#define GT_MOCK_EXPORT_H

#if defined(__has_attribute)
#if __has_attribute(__noipa__)
/* GCC: no identical-code folding or cloning across the many look-alike
 * wrappers (_ptsz/_ptds, the collectives), so each keeps a distinct entry. */
#define MOCK_NOIPA __attribute__((__noipa__))
#endif
#endif
#ifndef MOCK_NOIPA
#define MOCK_NOIPA
#endif
#define MOCK_API __attribute__((noinline, used, visibility("default"))) MOCK_NOIPA

#endif
