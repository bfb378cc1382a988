// SPDX-License-Identifier: MIT
/*
 * Unit tests of the NVIDIA ioctl decoding (user/format/nv_ioctl.c): /proc/devices
 * parsing, the --ioctl-majors list, device and command names, RM control
 * and class names.  Command numbers are built with the kernel's own _IOC
 * macros, and checked against raw values logged on the GPU machine (driver
 * 580.159.04), so that the tables are held to what the driver really sees.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/ioctl.h>
#include <cmocka.h>
#include "format/nv_ioctl.h"
#include "format/trace_file.h"

/* The GPU machine's /proc/devices (580.159.04, Firecracker), with a block
 * section that reuses NVIDIA names at other numbers: those must not count. */
static const char proc_devices_580[] =
	"Character devices:\n"
	"  1 mem\n"
	"  4 /dev/vc/0\n"
	"  4 tty\n"
	"  5 /dev/tty\n"
	" 10 misc\n"
	"136 pts\n"
	"195 nvidia\n"
	"195 nvidiactl\n"
	"203 cpu/cpuid\n"
	"238 nvidia-uvm\n"
	"239 nvidia-nvswitch\n"
	"240 nvidia-nvlink\n"
	"241 nvidia-caps\n"
	"242 nvidia-caps-imex-channels\n"
	"243 hidraw\n"
	"\n"
	"Block devices:\n"
	"  7 loop\n"
	"250 nvidia\n"
	"251 nvidia-uvm\n"
	"252 nvidia-modeset\n"
	"259 blkext\n";

static FILE *text_file(const char *s)
{
	FILE *f = fmemopen((void *)s, strlen(s), "r");

	assert_non_null(f);
	return f;
}

static int parse_text(const char *s, struct nv_majors *m)
{
	FILE *f = text_file(s);
	int err = nv_majors__parse(f, m);

	fclose(f);
	return err;
}

/* ------------------------------------------------------------ /proc/devices */

static void test_parse_580(void **state)
{
	struct nv_majors m;

	(void)state;
	memset(&m, 0xff, sizeof(m));
	assert_int_equal(parse_text(proc_devices_580, &m), 0);
	assert_int_equal(m.frontend, 195);
	assert_int_equal(m.uvm, 238);
	assert_int_equal(m.caps, 241);
	assert_int_equal(m.caps_imex, 242);
	/* only in the block section: must stay absent */
	assert_int_equal(m.modeset, 0);
}

static void test_parse_older_driver(void **state)
{
	/* older drivers: one "nvidia-frontend"; modeset loaded; other majors */
	static const char text[] =
		"Character devices:\n"
		"  1 mem\n"
		"195 nvidia-frontend\n"
		"195 nvidia-modeset\n"
		"509 nvidia-uvm\n"
		"510 nvidia-caps\n"
		"\n"
		"Block devices:\n"
		"  8 sd\n";
	struct nv_majors m;

	(void)state;
	assert_int_equal(parse_text(text, &m), 0);
	assert_int_equal(m.frontend, 195);
	assert_int_equal(m.modeset, 195);
	assert_int_equal(m.uvm, 509);
	assert_int_equal(m.caps, 510);
	assert_int_equal(m.caps_imex, 0);
}

static void test_parse_no_driver(void **state)
{
	static const char text[] =
		"Character devices:\n  1 mem\n  4 tty\n\nBlock devices:\n  7 loop\n";
	struct nv_majors m;

	(void)state;
	memset(&m, 0xff, sizeof(m));
	assert_int_equal(parse_text(text, &m), 0);
	assert_int_equal(m.frontend, 0);
	assert_int_equal(m.uvm, 0);
	assert_int_equal(m.modeset, 0);
	assert_int_equal(m.caps, 0);
	assert_int_equal(m.caps_imex, 0);
}

static void test_parse_odd_lines(void **state)
{
	/* a name longer than the line buffer, whose tail looks like an entry;
	 * a trailing blank; a last line without newline; junk numbers */
	char text[1024];
	struct nv_majors m;
	int n;

	(void)state;
	n = snprintf(text, sizeof(text), "Character devices:\n 99 ");
	memset(text + n, 'x', 400);
	n += 400;
	snprintf(text + n, sizeof(text) - n,
		 " 77 nvidia-uvm\n"
		 "  0 nvidia-caps\n"
		 "99999 nvidia-caps-imex-channels\n"
		 "12x nvidia-modeset\n"
		 "195 nvidia \n"
		 "238 nvidia-uvm");
	assert_int_equal(parse_text(text, &m), 0);
	assert_int_equal(m.frontend, 195);
	assert_int_equal(m.uvm, 238);
	assert_int_equal(m.caps, 0);
	assert_int_equal(m.caps_imex, 0);
	assert_int_equal(m.modeset, 0);
}

static void test_parse_errors(void **state)
{
	struct nv_majors m;
	FILE *f;

	(void)state;
	/* no character section at all: not /proc/devices */
	assert_int_equal(parse_text("Block devices:\n195 nvidia\n", &m), -EINVAL);
	assert_int_equal(m.frontend, 0);
	assert_int_equal(parse_text("", &m), -EINVAL);
	f = text_file(proc_devices_580);
	assert_int_equal(nv_majors__parse(f, NULL), -EINVAL);
	fclose(f);
	assert_int_equal(nv_majors__parse(NULL, &m), -EINVAL);
}

/* ------------------------------------------------------------ --ioctl-majors */

static void test_list_good(void **state)
{
	uint32_t out[4] = { 0 };

	(void)state;
	assert_int_equal(nv_majors__from_list("195,238", out, 4), 2);
	assert_int_equal(out[0], 195);
	assert_int_equal(out[1], 238);
	assert_int_equal(nv_majors__from_list("1", out, 4), 1);
	assert_int_equal(out[0], 1);
	assert_int_equal(nv_majors__from_list(" 195 , 238,241 ", out, 4), 3);
	assert_int_equal(out[2], 241);
	assert_int_equal(nv_majors__from_list("4095", out, 1), 1);
	assert_int_equal(out[0], 4095);
}

static void test_list_bad(void **state)
{
	static const char *const bad[] = {
		"", " ", ",", "195,", ",195", "195,,238", "abc", "195x", "19 5",
		"-1", "+195", "0", "195;238", "0x10", "195 238",
	};
	uint32_t out[4];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (nv_majors__from_list(bad[i], out, 4) != -EINVAL)
			fail_msg("'%s' should be -EINVAL", bad[i]);
	}
	assert_int_equal(nv_majors__from_list(NULL, out, 4), -EINVAL);
}

static void test_list_overflow(void **state)
{
	uint32_t out[2];

	(void)state;
	/* above the 12 bits of a Linux major, and past unsigned long */
	assert_int_equal(nv_majors__from_list("4096", out, 2), -EINVAL);
	assert_int_equal(nv_majors__from_list("4294967296", out, 2), -EINVAL);
	assert_int_equal(nv_majors__from_list("195,99999999999999999999999", out, 2), -EINVAL);
	/* more majors than room */
	assert_int_equal(nv_majors__from_list("1,2,3", out, 2), -E2BIG);
	assert_int_equal(nv_majors__from_list("1", out, 0), -E2BIG);
}

/* ------------------------------------------------------------ trace header */

static void test_majors_from_info(void **state)
{
	struct gt_file_info info = {
		.options = "mode=all trace=cuda,ioctl, ioctl_majors=195,238 "
			   "nv_majors=195,238,0,241,242 cupti=1",
	};
	struct nv_majors m;

	(void)state;
	nv_majors__from_info(&info, &m);
	assert_int_equal(m.frontend, 195);
	assert_int_equal(m.uvm, 238);
	assert_int_equal(m.modeset, 0);
	assert_int_equal(m.caps, 241);
	assert_int_equal(m.caps_imex, 242);
	/* the last option too */
	info.options = "mode=pids nv_majors=1,2,3,4,5";
	nv_majors__from_info(&info, &m);
	assert_int_equal(m.caps_imex, 5);

	/* absent, short of a major, or no header: all 0 */
	static const char *const none[] = {
		"mode=all", "", "nv_majors=195,238", "nv_majors=", "nv_majors=a,b,c,d,e",
		"xnv_majors=1,2,3,4,5",
	};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		info.options = none[i];
		memset(&m, 0xff, sizeof(m));
		nv_majors__from_info(&info, &m);
		if (m.frontend || m.uvm || m.modeset || m.caps || m.caps_imex)
			fail_msg("'%s' should give no majors", none[i]);
	}
	info.options = NULL;
	nv_majors__from_info(&info, &m);
	assert_int_equal(m.frontend, 0);
	memset(&m, 0xff, sizeof(m));
	nv_majors__from_info(NULL, &m);
	assert_int_equal(m.uvm, 0);
}

/* ------------------------------------------------------------ device names */

static const struct nv_majors majors_580 = {
	.frontend = 195, .uvm = 238, .modeset = 0, .caps = 241, .caps_imex = 242,
};

static void test_device_names(void **state)
{
	const struct nv_majors *m = &majors_580;
	char buf[64];

	(void)state;
	assert_string_equal(nv_ioctl__device_name(m, 195, 255, buf, sizeof(buf)), "nvidiactl");
	assert_string_equal(nv_ioctl__device_name(m, 195, 254, buf, sizeof(buf)), "nvidia-modeset");
	assert_string_equal(nv_ioctl__device_name(m, 195, 0, buf, sizeof(buf)), "nvidia0");
	assert_string_equal(nv_ioctl__device_name(m, 195, 7, buf, sizeof(buf)), "nvidia7");
	assert_string_equal(nv_ioctl__device_name(m, 195, 247, buf, sizeof(buf)), "nvidia247");
	/* between the GPU minors and modeset: no such device */
	assert_string_equal(nv_ioctl__device_name(m, 195, 250, buf, sizeof(buf)), "char-195:250");
	assert_string_equal(nv_ioctl__device_name(m, 238, 0, buf, sizeof(buf)), "nvidia-uvm");
	assert_string_equal(nv_ioctl__device_name(m, 238, 1, buf, sizeof(buf)), "nvidia-uvm-tools");
	assert_string_equal(nv_ioctl__device_name(m, 238, 2, buf, sizeof(buf)), "char-238:2");
	assert_string_equal(nv_ioctl__device_name(m, 241, 1, buf, sizeof(buf)), "nvidia-cap1");
	assert_string_equal(nv_ioctl__device_name(m, 242, 0, buf, sizeof(buf)),
			    "nvidia-caps-imex-channels/channel0");
	/* the tests' stand-in device, /dev/null */
	assert_string_equal(nv_ioctl__device_name(m, 1, 3, buf, sizeof(buf)), "char-1:3");
	assert_string_equal(nv_ioctl__device_name(NULL, 195, 255, buf, sizeof(buf)), "char-195:255");
}

static void test_device_names_edges(void **state)
{
	/* modeset under a major of its own; no UVM: major 0 must not match */
	const struct nv_majors m = { .frontend = 195, .modeset = 300 };
	char small[6];

	(void)state;
	assert_string_equal(nv_ioctl__device_name(&m, 300, 0, small, sizeof(small)), "nvidia-modeset");
	assert_string_equal(nv_ioctl__device_name(&m, 0, 0, small, sizeof(small)), "char-");
	/* a short buffer truncates, a missing one still gives a string */
	assert_string_equal(nv_ioctl__device_name(&m, 1, 3, small, sizeof(small)), "char-");
	assert_string_equal(nv_ioctl__device_name(&m, 1, 3, NULL, 0), "?");
	assert_string_equal(nv_ioctl__device_name(&m, 195, 255, NULL, 0), "nvidiactl");
}

/* ------------------------------------------------------------ command names */

/* Sizes of the structs the escapes carry on x86-64 (nvos.h, nv-ioctl.h). */
#define NVOS54_SIZE 32	/* RM_CONTROL */
#define NVOS64_SIZE 48	/* RM_ALLOC with access rights */
#define NVOS00_SIZE 16	/* RM_FREE */

static const char *frontend_cmd(uint32_t cmd, char *buf, size_t len)
{
	return nv_ioctl__cmd_name(&majors_580, 195, cmd, buf, len);
}

static void test_cmd_frontend(void **state)
{
	char buf[32];

	(void)state;
	/* the kernel's encoding gives the numbers logged on the GPU machine */
	assert_int_equal(_IOWR('F', 0x2a, char[NVOS54_SIZE]), 0xc020462a);
	assert_int_equal(_IOWR('F', 0x2b, char[NVOS64_SIZE]), 0xc030462b);
	assert_int_equal(_IOWR('F', 0x29, char[NVOS00_SIZE]), 0xc0104629);
	assert_string_equal(frontend_cmd(_IOWR('F', 0x2a, char[NVOS54_SIZE]), buf, sizeof(buf)),
			    "NV_ESC_RM_CONTROL");
	assert_string_equal(frontend_cmd(_IOWR('F', 0x2b, char[NVOS64_SIZE]), buf, sizeof(buf)),
			    "NV_ESC_RM_ALLOC");
	assert_string_equal(frontend_cmd(_IOWR('F', 0x29, char[NVOS00_SIZE]), buf, sizeof(buf)),
			    "NV_ESC_RM_FREE");
	/* raw values from the log: MAP_MEMORY, ALLOC_MEMORY, CARD_INFO,
	 * REGISTER_FD, ALLOC_OS_EVENT, SYS_PARAMS, NUMA_INFO,
	 * WAIT_OPEN_COMPLETE, UPDATE_DEVICE_MAPPING_INFO */
	assert_string_equal(frontend_cmd(0xc038464e, buf, sizeof(buf)), "NV_ESC_RM_MAP_MEMORY");
	assert_string_equal(frontend_cmd(0xc0384627, buf, sizeof(buf)), "NV_ESC_RM_ALLOC_MEMORY");
	assert_string_equal(frontend_cmd(0xc90046c8, buf, sizeof(buf)), "NV_ESC_CARD_INFO");
	assert_string_equal(frontend_cmd(0xc00446c9, buf, sizeof(buf)), "NV_ESC_REGISTER_FD");
	assert_string_equal(frontend_cmd(0xc01046ce, buf, sizeof(buf)), "NV_ESC_ALLOC_OS_EVENT");
	assert_string_equal(frontend_cmd(0xc00846d6, buf, sizeof(buf)), "NV_ESC_SYS_PARAMS");
	assert_string_equal(frontend_cmd(0xc23046d7, buf, sizeof(buf)), "NV_ESC_NUMA_INFO");
	assert_string_equal(frontend_cmd(0xc00846da, buf, sizeof(buf)), "NV_ESC_WAIT_OPEN_COMPLETE");
	assert_string_equal(frontend_cmd(0xc028465e, buf, sizeof(buf)),
			    "NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO");
	/* kept from 580 though later branches dropped it */
	assert_string_equal(frontend_cmd(_IOWR('F', 0x32, char[24]), buf, sizeof(buf)),
			    "NV_ESC_RM_CONFIG_GET");
	assert_string_equal(frontend_cmd(_IOWR('F', 200 + 11, char[16]), buf, sizeof(buf)),
			    "NV_ESC_IOCTL_XFER_CMD");
	/* direction and size do not change the name */
	assert_string_equal(frontend_cmd(_IOR('F', 0x2a, int), buf, sizeof(buf)), "NV_ESC_RM_CONTROL");
	/* the modeset device's single command */
	assert_string_equal(frontend_cmd(_IOWR('m', 0, char[16]), buf, sizeof(buf)), "NVKMS_IOCTL");
}

static void test_cmd_frontend_unknown(void **state)
{
	char buf[32];

	(void)state;
	/* an 'F' number the driver does not define */
	assert_string_equal(frontend_cmd(_IOWR('F', 0x01, char[8]), buf, sizeof(buf)), "0xc0084601");
	assert_string_equal(frontend_cmd(_IOWR('F', 0xff, char[8]), buf, sizeof(buf)), "0xc00846ff");
	/* another magic, and a UVM-style raw number, on the frontend */
	assert_string_equal(frontend_cmd(0x5401, buf, sizeof(buf)), "0x5401");
	assert_string_equal(frontend_cmd(0x30000001, buf, sizeof(buf)), "0x30000001");
	assert_string_equal(frontend_cmd(0, buf, sizeof(buf)), "0x0");
	/* the NVIDIA numbers on a device that is not NVIDIA's stay numbers */
	assert_string_equal(nv_ioctl__cmd_name(&majors_580, 1, 0xc0104629, buf, sizeof(buf)),
			    "0xc0104629");
	assert_string_equal(nv_ioctl__cmd_name(NULL, 195, 0xc020462a, buf, sizeof(buf)),
			    "0xc020462a");
	/* no buffer: still a string */
	assert_string_equal(nv_ioctl__cmd_name(NULL, 195, 0xc020462a, NULL, 0), "?");
}

static void test_cmd_uvm(void **state)
{
	const struct nv_majors *m = &majors_580;
	char buf[32];

	(void)state;
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 0x30000001, buf, sizeof(buf)), "UVM_INITIALIZE");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 0x30000002, buf, sizeof(buf)), "UVM_DEINITIALIZE");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 1, buf, sizeof(buf)), "UVM_RESERVE_VA");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 23, buf, sizeof(buf)), "UVM_CREATE_RANGE_GROUP");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 33, buf, sizeof(buf)),
			    "UVM_MAP_EXTERNAL_ALLOCATION");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 37, buf, sizeof(buf)), "UVM_REGISTER_GPU");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 51, buf, sizeof(buf)), "UVM_MIGRATE");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 56, buf, sizeof(buf)),
			    "UVM_TOOLS_INIT_EVENT_TRACKER");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 68, buf, sizeof(buf)), "UVM_ALLOC_SEMAPHORE_POOL");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 73, buf, sizeof(buf)), "UVM_CREATE_EXTERNAL_RANGE");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 80, buf, sizeof(buf)), "UVM_DISCARD");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 2047, buf, sizeof(buf)), "UVM_IS_8_SUPPORTED");
	/* numbers UVM leaves out, and an 'F' command sent to UVM */
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 0, buf, sizeof(buf)), "0x0");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 8, buf, sizeof(buf)), "0x8");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 81, buf, sizeof(buf)), "0x51");
	assert_string_equal(nv_ioctl__cmd_name(m, 238, 0xc020462a, buf, sizeof(buf)), "0xc020462a");
}

static void test_escape_and_param_kind(void **state)
{
	(void)state;
	assert_int_equal(nv_ioctl__escape(0xc020462a), NV_IOCTL_ESC_RM_CONTROL);
	assert_int_equal(nv_ioctl__escape(0xc030462b), NV_IOCTL_ESC_RM_ALLOC);
	assert_int_equal(nv_ioctl__escape(_IOWR('F', 200 + 11, char[16])), NV_IOCTL_ESC_IOCTL_XFER_CMD);
	assert_int_equal(nv_ioctl__escape(0x30000001), -1);
	assert_int_equal(nv_ioctl__escape(0x5401), -1);
	assert_int_equal(nv_ioctl__param_kind(0xc020462a), NV_IOCTL_PARAM_RM_CONTROL);
	assert_int_equal(nv_ioctl__param_kind(0xc030462b), NV_IOCTL_PARAM_RM_CLASS);
	/* NVOS21, the struct without access rights, is smaller: same escape */
	assert_int_equal(nv_ioctl__param_kind(_IOWR('F', 0x2b, char[32])), NV_IOCTL_PARAM_RM_CLASS);
	assert_int_equal(nv_ioctl__param_kind(0xc0384627), NV_IOCTL_PARAM_RM_CLASS);
	assert_int_equal(nv_ioctl__param_kind(_IOWR('F', 0x28, char[20])), NV_IOCTL_PARAM_RM_CLASS);
	assert_int_equal(nv_ioctl__param_kind(0xc0104629), NV_IOCTL_PARAM_NONE);
	assert_int_equal(nv_ioctl__param_kind(0xc038464e), NV_IOCTL_PARAM_NONE);
	assert_int_equal(nv_ioctl__param_kind(0x2a), NV_IOCTL_PARAM_NONE);
}

/* ------------------------------------------------------------ RM names */

static void test_rm_control_names(void **state)
{
	(void)state;
	/* one of each interface CUDA used on the GPU machine */
	assert_string_equal(nv_ioctl__rm_control_name(0x00000101), "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION");
	assert_string_equal(nv_ioctl__rm_control_name(0x00000201), "NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS");
	assert_string_equal(nv_ioctl__rm_control_name(0x00000205), "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2");
	assert_string_equal(nv_ioctl__rm_control_name(0x00000d01), "NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE");
	assert_string_equal(nv_ioctl__rm_control_name(0x00800201), "NV0080_CTRL_CMD_GPU_GET_CLASSLIST");
	assert_string_equal(nv_ioctl__rm_control_name(0x0080170d), "NV0080_CTRL_CMD_FIFO_GET_CHANNELLIST");
	assert_string_equal(nv_ioctl__rm_control_name(0x20800102), "NV2080_CTRL_CMD_GPU_GET_INFO_V2");
	assert_string_equal(nv_ioctl__rm_control_name(0x20800145),
			    "NV2080_CTRL_CMD_GPU_ACQUIRE_COMPUTE_MODE_RESERVATION");
	assert_string_equal(nv_ioctl__rm_control_name(0x20801201), "NV2080_CTRL_CMD_GR_GET_INFO");
	assert_string_equal(nv_ioctl__rm_control_name(0x20801303), "NV2080_CTRL_CMD_FB_GET_INFO_V2");
	assert_string_equal(nv_ioctl__rm_control_name(0x20801801), "NV2080_CTRL_CMD_BUS_GET_PCI_INFO");
	assert_string_equal(nv_ioctl__rm_control_name(0x503c0104), "NV503C_CTRL_CMD_REGISTER_VIDMEM");
	assert_string_equal(nv_ioctl__rm_control_name(0x906f0101), "NV906F_CTRL_GET_CLASS_ENGINEID");
	assert_string_equal(nv_ioctl__rm_control_name(0xa06c0101), "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE");
	assert_string_equal(nv_ioctl__rm_control_name(0xa06f0103), "NVA06F_CTRL_CMD_GPFIFO_SCHEDULE");
	assert_string_equal(nv_ioctl__rm_control_name(0xc36f0108),
			    "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN");
	/* the last row (the first is above), where an off-by-one shows */
	assert_string_equal(nv_ioctl__rm_control_name(0xcb330101),
			    "NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES");
	/* unknown: NULL, never a wrong neighbour */
	assert_null(nv_ioctl__rm_control_name(0));
	assert_null(nv_ioctl__rm_control_name(0x00000100));
	assert_null(nv_ioctl__rm_control_name(0x20808159));	/* legacy non-privileged */
	assert_null(nv_ioctl__rm_control_name(0x20800103));
	assert_null(nv_ioctl__rm_control_name(0xffffffff));
}

static void test_rm_class_names(void **state)
{
	(void)state;
	assert_string_equal(nv_ioctl__rm_class_name(0x0), "NV01_ROOT");
	assert_string_equal(nv_ioctl__rm_class_name(0x41), "NV01_ROOT_CLIENT");
	assert_string_equal(nv_ioctl__rm_class_name(0x80), "NV01_DEVICE_0");
	assert_string_equal(nv_ioctl__rm_class_name(0x2080), "NV20_SUBDEVICE_0");
	assert_string_equal(nv_ioctl__rm_class_name(0x3e), "NV01_MEMORY_SYSTEM");
	assert_string_equal(nv_ioctl__rm_class_name(0x40), "NV01_MEMORY_LOCAL_USER");
	assert_string_equal(nv_ioctl__rm_class_name(0x71), "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR");
	assert_string_equal(nv_ioctl__rm_class_name(0x79), "NV01_EVENT_OS_EVENT");
	assert_string_equal(nv_ioctl__rm_class_name(0x50a0), "NV50_MEMORY_VIRTUAL");
	assert_string_equal(nv_ioctl__rm_class_name(0x83de), "GT200_DEBUGGER");
	assert_string_equal(nv_ioctl__rm_class_name(0x90f1), "FERMI_VASPACE_A");
	assert_string_equal(nv_ioctl__rm_class_name(0xa06c), "KEPLER_CHANNEL_GROUP_A");
	assert_string_equal(nv_ioctl__rm_class_name(0xc86f), "HOPPER_CHANNEL_GPFIFO_A");
	assert_string_equal(nv_ioctl__rm_class_name(0xcbc0), "HOPPER_COMPUTE_A");
	assert_string_equal(nv_ioctl__rm_class_name(0xc8b5), "HOPPER_DMA_COPY_A");
	assert_string_equal(nv_ioctl__rm_class_name(0xc661), "HOPPER_USERMODE_A");
	assert_string_equal(nv_ioctl__rm_class_name(0xcec0), "BLACKWELL_COMPUTE_B");
	assert_null(nv_ioctl__rm_class_name(0x1234));
	assert_null(nv_ioctl__rm_class_name(0xc97d));	/* a display class: left out */
	assert_null(nv_ioctl__rm_class_name(0x20800102));	/* a control id is no class */
	assert_null(nv_ioctl__rm_class_name(0xffffffff));
}

static void test_param_name(void **state)
{
	(void)state;
	assert_string_equal(nv_ioctl__param_name(0xc020462a, 0xc36f0108),
			    "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN");
	assert_string_equal(nv_ioctl__param_name(0xc030462b, 0xc86f), "HOPPER_CHANNEL_GPFIFO_A");
	assert_string_equal(nv_ioctl__param_name(0xc0384627, 0x71), "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR");
	/* the same word means a class for ALLOC and a command for CONTROL */
	assert_null(nv_ioctl__param_name(0xc020462a, 0xc86f));
	assert_null(nv_ioctl__param_name(0xc030462b, 0xc36f0108));
	/* escapes whose word is neither */
	assert_null(nv_ioctl__param_name(0xc038464e, 0x0));
	assert_null(nv_ioctl__param_name(0x30000001, 0x0));
}

static void test_tables_sorted(void **state)
{
	(void)state;
	assert_int_equal(nv_ioctl__check_tables(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_580),
		cmocka_unit_test(test_parse_older_driver),
		cmocka_unit_test(test_parse_no_driver),
		cmocka_unit_test(test_parse_odd_lines),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_list_good),
		cmocka_unit_test(test_list_bad),
		cmocka_unit_test(test_list_overflow),
		cmocka_unit_test(test_majors_from_info),
		cmocka_unit_test(test_device_names),
		cmocka_unit_test(test_device_names_edges),
		cmocka_unit_test(test_cmd_frontend),
		cmocka_unit_test(test_cmd_frontend_unknown),
		cmocka_unit_test(test_cmd_uvm),
		cmocka_unit_test(test_escape_and_param_kind),
		cmocka_unit_test(test_rm_control_names),
		cmocka_unit_test(test_rm_class_names),
		cmocka_unit_test(test_param_name),
		cmocka_unit_test(test_tables_sorted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
