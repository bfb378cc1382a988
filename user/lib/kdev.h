/* SPDX-License-Identifier: MIT */
/* A device number as the kernel keeps it (MKDEV: major << 20 | minor), the
 * form /proc/PID/maps' "MAJ:MIN" and BPF's reads of an inode's device give,
 * from stat's st_dev. */
#ifndef GTRACE_KDEV_H
#define GTRACE_KDEV_H

#include <stdint.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

static inline uint32_t kdev__of(dev_t dev)
{
	return (uint32_t)(major(dev) << 20 | (minor(dev) & 0xfffff));
}

#endif
