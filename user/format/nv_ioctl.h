/* SPDX-License-Identifier: MIT */
/*
 * Names for what the recorder captures of ioctl() calls on the NVIDIA
 * character devices: the device (major, minor), the raw command number, and
 * for the resource-manager escapes one 32-bit word of the argument struct
 * (an RM control command or an RM class).  Capture stores numbers only;
 * everything here runs offline, in the decoder.
 *
 * The numbers are those of NVIDIA's open GPU kernel modules, branch 580
 * (tag 580.142; the GPU machine runs 580.159.04); where later branches
 * dropped some, they are kept as 580 has them.  Lookups search static
 * tables: no allocation, safe from any thread.
 */
#ifndef GTRACE_NV_IOCTL_H
#define GTRACE_NV_IOCTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct gt_file_info;	/* format/trace_file.h */

/*
 * Character-device majors of the NVIDIA driver, as /proc/devices lists them.
 * They are assigned at module load (only the frontend's 195 is fixed in the
 * driver's source), so they must be read on the traced machine.  0 = absent.
 */
struct nv_majors {
	uint32_t frontend;	/* "nvidia"/"nvidiactl" (580), "nvidia-frontend"
				 * (older): /dev/nvidiaN, nvidiactl, nvidia-modeset */
	uint32_t uvm;		/* "nvidia-uvm": /dev/nvidia-uvm, nvidia-uvm-tools */
	uint32_t modeset;	/* "nvidia-modeset": registered as one minor (254)
				 * of the frontend's major when nvidia-modeset.ko
				 * is loaded; not listed on headless machines */
	uint32_t caps;		/* "nvidia-caps": /dev/nvidia-caps/nvidia-capN */
	uint32_t caps_imex;	/* "nvidia-caps-imex-channels":
				 * /dev/nvidia-caps-imex-channels/channelN */
};

/* Escape numbers (the _IOC_NR of a frontend ioctl) that callers branch on. */
#define NV_IOCTL_ESC_RM_ALLOC_MEMORY	0x27	/* NVOS02 (+fd): hClass at 12 */
#define NV_IOCTL_ESC_RM_ALLOC_OBJECT	0x28	/* NVOS05: hClass at 12 */
#define NV_IOCTL_ESC_RM_FREE		0x29
#define NV_IOCTL_ESC_RM_CONTROL		0x2a	/* NVOS54: cmd at 8 */
#define NV_IOCTL_ESC_RM_ALLOC		0x2b	/* NVOS21 or NVOS64: hClass at 12 */
/* Wraps an escape whose struct is too big for the 14-bit _IOC size field:
 * the argument is {u32 cmd; u32 size; u64 ptr}, so the words at 8 and 12
 * are a user pointer, not a command or class. */
#define NV_IOCTL_ESC_IOCTL_XFER_CMD	0xd3

/* Byte offsets, in the struct the ioctl argument points to, of the word the
 * recorder keeps for the escapes above (the same for every variant). */
#define NV_IOCTL_RM_CMD_OFFSET		8	/* NVOS54_PARAMETERS.cmd */
#define NV_IOCTL_RM_CLASS_OFFSET	12	/* NVOS02/05/21/64 .hClass */

/* What the captured parameter word of a frontend ioctl holds. */
enum nv_ioctl_param {
	NV_IOCTL_PARAM_NONE = 0,	/* nothing worth naming */
	NV_IOCTL_PARAM_RM_CONTROL,	/* an RM control command id */
	NV_IOCTL_PARAM_RM_CLASS,	/* an RM class id */
};

/*
 * Reads /proc/devices text and fills *m from its "Character devices:"
 * section; the "Block devices:" section is ignored even where it uses the
 * same names.  Devices not listed stay 0, so a machine without the driver
 * parses fine: check m->frontend.  Returns 0, -EINVAL for NULL arguments or
 * text without a character section, -EIO on a read error.
 */
int nv_majors__parse(FILE *proc_devices, struct nv_majors *m);

/*
 * Parses the --ioctl-majors option: decimal majors separated by commas
 * ("195,238"), blanks allowed around each number.  Fills out[0..n) and
 * returns n (>= 1); -EINVAL for an empty list, an empty item, a sign, a
 * non-digit, 0 or a number above 4095 (Linux majors are 12 bits); -E2BIG
 * for more than max items.
 */
int nv_majors__from_list(const char *list, uint32_t *out, size_t max);
/* The majors a trace was recorded with, from its header's options
 * ("nv_majors=FRONTEND,UVM,MODESET,CAPS,CAPS_IMEX"); all 0 when absent or
 * malformed, or when info is NULL. */
void nv_majors__from_info(const struct gt_file_info *info, struct nv_majors *m);

/*
 * Name of a device, as under /dev: "nvidiactl", "nvidia-modeset", "nvidiaN",
 * "nvidia-uvm", "nvidia-uvm-tools", "nvidia-capN",
 * "nvidia-caps-imex-channels/channelN"; anything else (m NULL too) is
 * "char-MAJ:MIN".  Returns a static string or buf (written only when a
 * number must be formatted, truncated to len); never NULL nor empty.
 */
const char *nv_ioctl__device_name(const struct nv_majors *m, uint32_t major,
				  uint32_t minor, char *buf, size_t len);

/*
 * Name of an ioctl command number on a device of the given major: the
 * escape name ("NV_ESC_RM_CONTROL") for the frontend (whatever the _IOC
 * direction and size), "NVKMS_IOCTL" for nvidia-modeset's one command, the
 * UVM name ("UVM_INITIALIZE") for nvidia-uvm; "0x%x" of cmd for anything
 * unknown.  Returns a static string or buf; never NULL nor empty.
 */
const char *nv_ioctl__cmd_name(const struct nv_majors *m, uint32_t major,
			       uint32_t cmd, char *buf, size_t len);

/* The escape number of a frontend ioctl command (its _IOC_NR when its
 * _IOC_TYPE is 'F'), -1 for any other command.  The caller checks that the
 * major is the frontend's. */
int nv_ioctl__escape(uint32_t cmd);

/* What the parameter word of a frontend command holds: a control command
 * for NV_ESC_RM_CONTROL, a class for the three allocation escapes. */
enum nv_ioctl_param nv_ioctl__param_kind(uint32_t cmd);

/* Name of an RM control command ("NV2080_CTRL_CMD_GPU_GET_INFO_V2"), NULL
 * when not in the table (the table holds those a CUDA program's start-up,
 * allocation and synchronisation use). */
const char *nv_ioctl__rm_control_name(uint32_t ctrl_cmd);

/* Name of an RM class ("HOPPER_CHANNEL_GPFIFO_A"), NULL when unknown. */
const char *nv_ioctl__rm_class_name(uint32_t hclass);

/* The control or class name for a frontend command's parameter word, as
 * nv_ioctl__param_kind says which; NULL when it is neither or unknown. */
const char *nv_ioctl__param_name(uint32_t cmd, uint32_t param);

/* 0 when every lookup table is strictly ascending (binary search needs
 * it), -EINVAL naming none: for the unit tests, after edits to the tables. */
int nv_ioctl__check_tables(void);

#endif
