// SPDX-License-Identifier: MIT
/*
 * Decoding of NVIDIA driver ioctls into names (see nv_ioctl.h).  The tables
 * hold numbers and names read from NVIDIA's open GPU kernel modules, tag
 * 580.142 (the newest of branch 580 there; the GPU machine runs 580.159.04):
 *   escapes      kernel-open/common/inc/nv-ioctl-numbers.h, nv-ioctl-numa.h,
 *                src/nvidia/arch/nvalloc/unix/include/nv_escape.h
 *   UVM          kernel-open/nvidia-uvm/uvm_ioctl.h, uvm_linux_ioctl.h
 *   RM controls  src/common/sdk/nvidia/inc/ctrl/ (ctrl0000*, ctrl0080*,
 *                ctrl2080*, ctrl906f, ctrla06c, ctrla06f, ctrlc36f, ...)
 *   RM classes   src/common/sdk/nvidia/inc/class/ and nvos.h
 * Branch 590 and later dropped NV_ESC_RM_CONFIG_* and some old UVM commands;
 * they stay here because a 580 driver still answers them.
 *
 * The control table is a selection, not the driver's ~1700 commands: those a
 * CUDA program's start-up, allocation, synchronisation and teardown issue
 * (checked against an ioctl log of PyTorch on the H200 machine, driver
 * 580.159.04), plus their close neighbours.  Commands in the "legacy
 * non-privileged" categories (0x2080_81xx, _90xx, _a0xx), which CUDA also
 * issues, are not in the open headers and stay unnamed.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ioctl.h>
#include "format/nv_ioctl.h"
#include "format/trace_file.h"

/* /dev minors of the frontend's major (nv-chardev-numbers.h). */
#define NV_MINOR_REGULAR_MAX	247	/* /dev/nvidia0 .. nvidia247 */
#define NV_MINOR_MODESET	254
#define NV_MINOR_CONTROL	255
/* nvidia-uvm's two minors (uvm_common.h). */
#define UVM_MINOR_PRIMARY	0
#define UVM_MINOR_TOOLS		1

#define NV_IOCTL_MAGIC		'F'
/* nvidia-modeset has one ioctl, _IOWR('m', 0, struct NvKmsIoctlParams),
 * with the real command inside the struct (nvkms-ioctl.h). */
#define NVKMS_IOCTL_MAGIC	'm'
#define NVKMS_IOCTL_CMD		0

/* Linux keeps majors in 12 bits (MINORBITS 20 of a 32-bit dev_t). */
#define MAJOR_MAX		4095

struct id_name {
	uint32_t id;
	const char *name;
};

/* Frontend escapes, indexed by _IOC_NR: the codes fit in 8 bits, so a
 * direct index is both the simplest and the fastest lookup. */
static const char *const esc_names[256] = {
	/* resource manager calls (nv_escape.h) */
	[0x27] = "NV_ESC_RM_ALLOC_MEMORY",
	[0x28] = "NV_ESC_RM_ALLOC_OBJECT",
	[0x29] = "NV_ESC_RM_FREE",
	[0x2a] = "NV_ESC_RM_CONTROL",
	[0x2b] = "NV_ESC_RM_ALLOC",
	[0x32] = "NV_ESC_RM_CONFIG_GET",
	[0x33] = "NV_ESC_RM_CONFIG_SET",
	[0x34] = "NV_ESC_RM_DUP_OBJECT",
	[0x35] = "NV_ESC_RM_SHARE",
	[0x37] = "NV_ESC_RM_CONFIG_GET_EX",
	[0x38] = "NV_ESC_RM_CONFIG_SET_EX",
	[0x39] = "NV_ESC_RM_I2C_ACCESS",
	[0x41] = "NV_ESC_RM_IDLE_CHANNELS",
	[0x4a] = "NV_ESC_RM_VID_HEAP_CONTROL",
	[0x4d] = "NV_ESC_RM_ACCESS_REGISTRY",
	[0x4e] = "NV_ESC_RM_MAP_MEMORY",
	[0x4f] = "NV_ESC_RM_UNMAP_MEMORY",
	[0x52] = "NV_ESC_RM_GET_EVENT_DATA",
	[0x54] = "NV_ESC_RM_ALLOC_CONTEXT_DMA2",
	[0x56] = "NV_ESC_RM_ADD_VBLANK_CALLBACK",
	[0x57] = "NV_ESC_RM_MAP_MEMORY_DMA",
	[0x58] = "NV_ESC_RM_UNMAP_MEMORY_DMA",
	[0x59] = "NV_ESC_RM_BIND_CONTEXT_DMA",
	[0x5c] = "NV_ESC_RM_EXPORT_OBJECT_TO_FD",
	[0x5d] = "NV_ESC_RM_IMPORT_OBJECT_FROM_FD",
	[0x5e] = "NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO",
	[0x5f] = "NV_ESC_RM_LOCKLESS_DIAGNOSTIC",

	/* the frontend's own, NV_IOCTL_BASE (200) + n */
	[0xc8] = "NV_ESC_CARD_INFO",
	[0xc9] = "NV_ESC_REGISTER_FD",
	[0xce] = "NV_ESC_ALLOC_OS_EVENT",
	[0xcf] = "NV_ESC_FREE_OS_EVENT",
	[0xd1] = "NV_ESC_STATUS_CODE",
	[0xd2] = "NV_ESC_CHECK_VERSION_STR",
	[0xd3] = "NV_ESC_IOCTL_XFER_CMD",
	[0xd4] = "NV_ESC_ATTACH_GPUS_TO_FD",
	[0xd5] = "NV_ESC_QUERY_DEVICE_INTR",
	[0xd6] = "NV_ESC_SYS_PARAMS",
	[0xd7] = "NV_ESC_NUMA_INFO",
	[0xd8] = "NV_ESC_SET_NUMA_STATUS",
	[0xd9] = "NV_ESC_EXPORT_TO_DMABUF_FD",
	[0xda] = "NV_ESC_WAIT_OPEN_COMPLETE",
};

/* nvidia-uvm commands, raw numbers (Linux does not use _IOC encoding for
 * them); sorted by number for bsearch. */
static const struct id_name uvm_names[] = {
	{ 1, "UVM_RESERVE_VA" },
	{ 2, "UVM_RELEASE_VA" },
	{ 3, "UVM_REGION_COMMIT" },
	{ 4, "UVM_REGION_DECOMMIT" },
	{ 5, "UVM_REGION_SET_STREAM" },
	{ 6, "UVM_SET_STREAM_RUNNING" },
	{ 7, "UVM_SET_STREAM_STOPPED" },
	{ 9, "UVM_RUN_TEST" },
	{ 10, "UVM_ADD_SESSION" },
	{ 11, "UVM_REMOVE_SESSION" },
	{ 12, "UVM_ENABLE_COUNTERS" },
	{ 13, "UVM_MAP_COUNTER" },
	{ 14, "UVM_CREATE_EVENT_QUEUE" },
	{ 15, "UVM_REMOVE_EVENT_QUEUE" },
	{ 16, "UVM_MAP_EVENT_QUEUE" },
	{ 17, "UVM_EVENT_CTRL" },
	{ 18, "UVM_REGISTER_MPS_SERVER" },
	{ 19, "UVM_REGISTER_MPS_CLIENT" },
	{ 20, "UVM_GET_GPU_UUID_TABLE" },
	{ 21, "UVM_REGION_SET_BACKING" },
	{ 22, "UVM_REGION_UNSET_BACKING" },
	{ 23, "UVM_CREATE_RANGE_GROUP" },
	{ 24, "UVM_DESTROY_RANGE_GROUP" },
	{ 25, "UVM_REGISTER_GPU_VASPACE" },
	{ 26, "UVM_UNREGISTER_GPU_VASPACE" },
	{ 27, "UVM_REGISTER_CHANNEL" },
	{ 28, "UVM_UNREGISTER_CHANNEL" },
	{ 29, "UVM_ENABLE_PEER_ACCESS" },
	{ 30, "UVM_DISABLE_PEER_ACCESS" },
	{ 31, "UVM_SET_RANGE_GROUP" },
	{ 33, "UVM_MAP_EXTERNAL_ALLOCATION" },
	{ 34, "UVM_FREE" },
	{ 35, "UVM_MEM_MAP" },
	{ 37, "UVM_REGISTER_GPU" },
	{ 38, "UVM_UNREGISTER_GPU" },
	{ 39, "UVM_PAGEABLE_MEM_ACCESS" },
	{ 40, "UVM_PREVENT_MIGRATION_RANGE_GROUPS" },
	{ 41, "UVM_ALLOW_MIGRATION_RANGE_GROUPS" },
	{ 42, "UVM_SET_PREFERRED_LOCATION" },
	{ 43, "UVM_UNSET_PREFERRED_LOCATION" },
	{ 44, "UVM_ENABLE_READ_DUPLICATION" },
	{ 45, "UVM_DISABLE_READ_DUPLICATION" },
	{ 46, "UVM_SET_ACCESSED_BY" },
	{ 47, "UVM_UNSET_ACCESSED_BY" },
	{ 51, "UVM_MIGRATE" },
	{ 53, "UVM_MIGRATE_RANGE_GROUP" },
	{ 54, "UVM_ENABLE_SYSTEM_WIDE_ATOMICS" },
	{ 55, "UVM_DISABLE_SYSTEM_WIDE_ATOMICS" },
	{ 56, "UVM_TOOLS_INIT_EVENT_TRACKER" },
	{ 57, "UVM_TOOLS_SET_NOTIFICATION_THRESHOLD" },
	{ 58, "UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS" },
	{ 59, "UVM_TOOLS_EVENT_QUEUE_DISABLE_EVENTS" },
	{ 60, "UVM_TOOLS_ENABLE_COUNTERS" },
	{ 61, "UVM_TOOLS_DISABLE_COUNTERS" },
	{ 62, "UVM_TOOLS_READ_PROCESS_MEMORY" },
	{ 63, "UVM_TOOLS_WRITE_PROCESS_MEMORY" },
	{ 64, "UVM_TOOLS_GET_PROCESSOR_UUID_TABLE" },
	{ 65, "UVM_MAP_DYNAMIC_PARALLELISM_REGION" },
	{ 66, "UVM_UNMAP_EXTERNAL" },
	{ 67, "UVM_TOOLS_FLUSH_EVENTS" },
	{ 68, "UVM_ALLOC_SEMAPHORE_POOL" },
	{ 69, "UVM_CLEAN_UP_ZOMBIE_RESOURCES" },
	{ 70, "UVM_PAGEABLE_MEM_ACCESS_ON_GPU" },
	{ 71, "UVM_POPULATE_PAGEABLE" },
	{ 72, "UVM_VALIDATE_VA_RANGE" },
	{ 73, "UVM_CREATE_EXTERNAL_RANGE" },
	{ 74, "UVM_MAP_EXTERNAL_SPARSE" },
	{ 75, "UVM_MM_INITIALIZE" },
	{ 76, "UVM_TOOLS_INIT_EVENT_TRACKER_V2" },
	{ 77, "UVM_TOOLS_GET_PROCESSOR_UUID_TABLE_V2" },
	{ 78, "UVM_ALLOC_DEVICE_P2P" },
	{ 79, "UVM_CLEAR_ALL_ACCESS_COUNTERS" },
	{ 80, "UVM_DISCARD" },
	{ 2047, "UVM_IS_8_SUPPORTED" },
	{ 0x30000001, "UVM_INITIALIZE" },
	{ 0x30000002, "UVM_DEINITIALIZE" },
};

/* RM control command ids: (interface class << 16) | (category << 8) | index,
 * so the table sorts by the class whose object receives the command. */
static const struct id_name rm_control_names[] = {
	/* NV01_ROOT (the client): system, GPU attach/ids, client, fd export */
	{ 0x00000101, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION" },
	{ 0x00000102, "NV0000_CTRL_CMD_SYSTEM_GET_CPU_INFO" },
	{ 0x00000127, "NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS" },
	{ 0x0000012b, "NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2" },
	{ 0x00000136, "NV0000_CTRL_CMD_SYSTEM_GET_FABRIC_STATUS" },
	{ 0x0000013a, "NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_MATRIX" },
	{ 0x0000013e, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2" },
	{ 0x000001f0, "NV0000_CTRL_CMD_SYSTEM_GET_FEATURES" },
	{ 0x00000201, "NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS" },
	{ 0x00000202, "NV0000_CTRL_CMD_GPU_GET_ID_INFO" },
	{ 0x00000203, "NV0000_CTRL_CMD_GPU_GET_INIT_STATUS" },
	{ 0x00000204, "NV0000_CTRL_CMD_GPU_GET_DEVICE_IDS" },
	{ 0x00000205, "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2" },
	{ 0x00000214, "NV0000_CTRL_CMD_GPU_GET_PROBED_IDS" },
	{ 0x00000215, "NV0000_CTRL_CMD_GPU_ATTACH_IDS" },
	{ 0x00000216, "NV0000_CTRL_CMD_GPU_DETACH_IDS" },
	{ 0x0000021b, "NV0000_CTRL_CMD_GPU_GET_PCI_INFO" },
	{ 0x00000274, "NV0000_CTRL_CMD_GPU_GET_UUID_INFO" },
	{ 0x00000275, "NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID" },
	{ 0x00000279, "NV0000_CTRL_CMD_GPU_QUERY_DRAIN_STATE" },
	{ 0x0000027b, "NV0000_CTRL_CMD_GPU_GET_MEMOP_ENABLE" },
	{ 0x00000288, "NV0000_CTRL_CMD_GPU_GET_ACTIVE_DEVICE_IDS" },
	{ 0x00000289, "NV0000_CTRL_CMD_GPU_ASYNC_ATTACH_ID" },
	{ 0x00000290, "NV0000_CTRL_CMD_GPU_WAIT_ATTACH_ID" },
	{ 0x00000a04, "NV0000_CTRL_CMD_SYNC_GPU_BOOST_GROUP_INFO" },
	{ 0x00000d01, "NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE" },
	{ 0x00000d02, "NV0000_CTRL_CMD_CLIENT_GET_HANDLE_INFO" },
	{ 0x00000d04, "NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY" },
	{ 0x00000d06, "NV0000_CTRL_CMD_CLIENT_SHARE_OBJECT" },
	{ 0x00003d05, "NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD" },
	{ 0x00003d06, "NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD" },
	{ 0x00003d08, "NV0000_CTRL_CMD_OS_UNIX_GET_EXPORT_OBJECT_INFO" },
	{ 0x00003d0b, "NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD" },
	{ 0x00003d0c, "NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD" },

	/* NV04_MEMORY: any memory object */
	{ 0x00410103, "NV0041_CTRL_CMD_GET_SURFACE_PHYS_ATTR" },
	{ 0x00410110, "NV0041_CTRL_CMD_GET_SURFACE_INFO" },
	{ 0x00410118, "NV0041_CTRL_CMD_GET_MEM_PAGE_SIZE" },

	/* NV01_DEVICE_0: per device */
	{ 0x00800201, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST" },
	{ 0x00800280, "NV0080_CTRL_CMD_GPU_GET_NUM_SUBDEVICES" },
	{ 0x00800289, "NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE" },
	{ 0x0080028c, "NV0080_CTRL_CMD_GPU_GET_SPARSE_TEXTURE_COMPUTE_MODE" },
	{ 0x00800292, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2" },
	{ 0x00801109, "NV0080_CTRL_CMD_GR_GET_CAPS_V2" },
	{ 0x00801307, "NV0080_CTRL_CMD_FB_GET_CAPS_V2" },
	{ 0x00801402, "NV0080_CTRL_CMD_HOST_GET_CAPS_V2" },
	{ 0x00801707, "NV0080_CTRL_CMD_FIFO_GET_ENGINE_CONTEXT_PROPERTIES" },
	{ 0x0080170d, "NV0080_CTRL_CMD_FIFO_GET_CHANNELLIST" },
	{ 0x00801713, "NV0080_CTRL_CMD_FIFO_GET_CAPS_V2" },
	{ 0x00801805, "NV0080_CTRL_CMD_DMA_FLUSH" },
	{ 0x00801806, "NV0080_CTRL_CMD_DMA_ADV_SCHED_GET_VA_CAPS" },
	{ 0x0080180d, "NV0080_CTRL_CMD_DMA_GET_CAPS" },
	{ 0x00801909, "NV0080_CTRL_CMD_PERF_CUDA_LIMIT_SET_CONTROL" },

	/* NV_MEMORY_FABRIC */
	{ 0x00f80101, "NV00F8_CTRL_CMD_GET_INFO" },
	{ 0x00f80103, "NV00F8_CTRL_CMD_ATTACH_MEM" },

	/* NV_MEMORY_MULTICAST_FABRIC */
	{ 0x00fd0101, "NV00FD_CTRL_CMD_GET_INFO" },
	{ 0x00fd0102, "NV00FD_CTRL_CMD_ATTACH_MEM" },
	{ 0x00fd0104, "NV00FD_CTRL_CMD_ATTACH_GPU" },
	{ 0x00fd0105, "NV00FD_CTRL_CMD_DETACH_MEM" },

	/* NV20_SUBDEVICE_0: per GPU */
	{ 0x20800102, "NV2080_CTRL_CMD_GPU_GET_INFO_V2" },
	{ 0x20800110, "NV2080_CTRL_CMD_GPU_GET_NAME_STRING" },
	{ 0x20800111, "NV2080_CTRL_CMD_GPU_GET_SHORT_NAME_STRING" },
	{ 0x20800119, "NV2080_CTRL_CMD_GPU_GET_SIMULATION_INFO" },
	{ 0x20800124, "NV2080_CTRL_CMD_GPU_GET_ENGINE_CLASSLIST" },
	{ 0x2080012f, "NV2080_CTRL_CMD_GPU_QUERY_ECC_STATUS" },
	{ 0x20800131, "NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES" },
	{ 0x20800142, "NV2080_CTRL_CMD_GPU_GET_ID" },
	/* no #define in the SDK headers: the name is the method the driver's
	 * generated table (g_subdevice_nvoc.c) gives this id; CUDA calls it */
	{ 0x20800145, "NV2080_CTRL_CMD_GPU_ACQUIRE_COMPUTE_MODE_RESERVATION" },
	{ 0x20800147, "NV2080_CTRL_CMD_GPU_GET_ENGINE_PARTNERLIST" },
	{ 0x2080014a, "NV2080_CTRL_CMD_GPU_GET_GID_INFO" },
	{ 0x20800170, "NV2080_CTRL_CMD_GPU_GET_ENGINES_V2" },
	{ 0x2080017e, "NV2080_CTRL_CMD_GPU_GET_VMMU_SEGMENT_SIZE" },
	{ 0x20800188, "NV2080_CTRL_CMD_GPU_GET_MAX_SUPPORTED_PAGE_SIZE" },
	{ 0x2080018b, "NV2080_CTRL_CMD_GPU_GET_ACTIVE_PARTITION_IDS" },
	{ 0x2080018d, "NV2080_CTRL_CMD_GPU_GET_PIDS" },
	{ 0x20800195, "NV2080_CTRL_CMD_GPU_GET_COMPUTE_POLICY_CONFIG" },
	{ 0x208001a3, "NV2080_CTRL_CMD_GET_GPU_FABRIC_PROBE_INFO" },
	{ 0x208001b0, "NV2080_CTRL_CMD_GPU_GET_CONSTRUCTED_FALCON_INFO" },
	{ 0x20800301, "NV2080_CTRL_CMD_EVENT_SET_NOTIFICATION" },
	{ 0x20800302, "NV2080_CTRL_CMD_EVENT_SET_TRIGGER" },
	{ 0x20800303, "NV2080_CTRL_CMD_EVENT_SET_MEMORY_NOTIFIES" },
	{ 0x20800304, "NV2080_CTRL_CMD_EVENT_SET_SEMAPHORE_MEMORY" },
	{ 0x20800401, "NV2080_CTRL_CMD_TIMER_SCHEDULE" },
	{ 0x20800402, "NV2080_CTRL_CMD_TIMER_CANCEL" },
	{ 0x20800403, "NV2080_CTRL_CMD_TIMER_GET_TIME" },
	{ 0x20800406, "NV2080_CTRL_CMD_TIMER_GET_GPU_CPU_TIME_CORRELATION_INFO" },
	{ 0x20801109, "NV2080_CTRL_CMD_FIFO_GET_INFO" },
	{ 0x2080110b, "NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS" },
	{ 0x20801112, "NV2080_CTRL_CMD_FIFO_GET_DEVICE_INFO_TABLE" },
	{ 0x20801201, "NV2080_CTRL_CMD_GR_GET_INFO" },
	{ 0x20801210, "NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE" },
	{ 0x20801211, "NV2080_CTRL_CMD_GR_CTXSW_PREEMPTION_BIND" },
	{ 0x20801218, "NV2080_CTRL_CMD_GR_GET_CTX_BUFFER_SIZE" },
	{ 0x20801219, "NV2080_CTRL_CMD_GR_GET_CTX_BUFFER_INFO" },
	{ 0x2080121b, "NV2080_CTRL_CMD_GR_GET_GLOBAL_SM_ORDER" },
	{ 0x20801227, "NV2080_CTRL_CMD_GR_GET_CAPS_V2" },
	{ 0x2080122a, "NV2080_CTRL_CMD_GR_GET_GPC_MASK" },
	{ 0x2080122b, "NV2080_CTRL_CMD_GR_GET_TPC_MASK" },
	{ 0x20801230, "NV2080_CTRL_CMD_GR_GET_SM_ISSUE_RATE_MODIFIER" },
	{ 0x2080123c, "NV2080_CTRL_CMD_GR_GET_SM_ISSUE_RATE_MODIFIER_V2" },
	{ 0x20801303, "NV2080_CTRL_CMD_FB_GET_INFO_V2" },
	{ 0x2080130e, "NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE" },
	{ 0x20801315, "NV2080_CTRL_CMD_FB_GET_GPU_CACHE_INFO" },
	{ 0x20801351, "NV2080_CTRL_CMD_FB_GET_NUMA_INFO" },
	{ 0x20801352, "NV2080_CTRL_CMD_FB_GET_SEMAPHORE_SURFACE_LAYOUT" },
	{ 0x20801701, "NV2080_CTRL_CMD_MC_GET_ARCH_INFO" },
	{ 0x20801801, "NV2080_CTRL_CMD_BUS_GET_PCI_INFO" },
	{ 0x20801803, "NV2080_CTRL_CMD_BUS_GET_PCI_BAR_INFO" },
	{ 0x20801823, "NV2080_CTRL_CMD_BUS_GET_INFO_V2" },
	{ 0x20801825, "NV2080_CTRL_CMD_BUS_GET_NVLINK_PEER_ID_MASK" },
	{ 0x2080182a, "NV2080_CTRL_CMD_BUS_GET_PCIE_SUPPORTED_GPU_ATOMICS" },
	{ 0x2080182b, "NV2080_CTRL_CMD_BUS_GET_C2C_INFO" },
	{ 0x2080200a, "NV2080_CTRL_CMD_PERF_BOOST" },
	{ 0x20802209, "NV2080_CTRL_CMD_RC_GET_WATCHDOG_INFO" },
	{ 0x2080220c, "NV2080_CTRL_CMD_RC_RELEASE_WATCHDOG_REQUESTS" },
	{ 0x20802210, "NV2080_CTRL_CMD_RC_SOFT_DISABLE_WATCHDOG" },
	{ 0x20802a02, "NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK" },
	{ 0x20802a03, "NV2080_CTRL_CMD_CE_GET_CAPS_V2" },
	{ 0x20802a0a, "NV2080_CTRL_CMD_CE_GET_ALL_CAPS" },
	{ 0x20803001, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS" },
	{ 0x20803002, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS" },
	{ 0x20803125, "NV2080_CTRL_CMD_FLCN_GET_CTX_BUFFER_SIZE" },
	{ 0x20803400, "NV2080_CTRL_CMD_ECC_GET_CLIENT_EXPOSED_COUNTERS" },
	{ 0x20803601, "NV2080_CTRL_CMD_GSP_GET_FEATURES" },
	{ 0x20803801, "NV2080_CTRL_CMD_GRMGR_GET_GR_FS_INFO" },

	/* NV50_THIRD_PARTY_P2P */
	{ 0x503c0102, "NV503C_CTRL_CMD_REGISTER_VA_SPACE" },
	{ 0x503c0103, "NV503C_CTRL_CMD_UNREGISTER_VA_SPACE" },
	{ 0x503c0104, "NV503C_CTRL_CMD_REGISTER_VIDMEM" },
	{ 0x503c0105, "NV503C_CTRL_CMD_UNREGISTER_VIDMEM" },

	/* GT200_DEBUGGER */
	{ 0x83de0309, "NV83DE_CTRL_CMD_DEBUG_SET_EXCEPTION_MASK" },

	/* GF100_CHANNEL_GPFIFO and later channels */
	{ 0x906f0101, "NV906F_CTRL_GET_CLASS_ENGINEID" },
	{ 0x906f0102, "NV906F_CTRL_CMD_RESET_CHANNEL" },

	/* GF100_SUBDEVICE_MASTER */
	{ 0x90e60102, "NV90E6_CTRL_CMD_MASTER_GET_VIRTUAL_FUNCTION_ERROR_CONT_INTR_MASK" },

	/* FERMI_VASPACE_A */
	{ 0x90f10101, "NV90F1_CTRL_CMD_VASPACE_GET_GMMU_FORMAT" },
	{ 0x90f10102, "NV90F1_CTRL_CMD_VASPACE_GET_PAGE_LEVEL_INFO" },
	{ 0x90f10103, "NV90F1_CTRL_CMD_VASPACE_RESERVE_ENTRIES" },
	{ 0x90f10104, "NV90F1_CTRL_CMD_VASPACE_RELEASE_ENTRIES" },
	{ 0x90f10106, "NV90F1_CTRL_CMD_VASPACE_COPY_SERVER_RESERVED_PDES" },

	/* KEPLER_CHANNEL_GROUP_A (TSG) */
	{ 0xa06c0101, "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE" },
	{ 0xa06c0102, "NVA06C_CTRL_CMD_BIND" },
	{ 0xa06c0103, "NVA06C_CTRL_CMD_SET_TIMESLICE" },
	{ 0xa06c0104, "NVA06C_CTRL_CMD_GET_TIMESLICE" },
	{ 0xa06c0105, "NVA06C_CTRL_CMD_PREEMPT" },

	/* KEPLER_CHANNEL_GPFIFO_A and later channels */
	{ 0xa06f0103, "NVA06F_CTRL_CMD_GPFIFO_SCHEDULE" },
	{ 0xa06f0104, "NVA06F_CTRL_CMD_BIND" },
	{ 0xa06f0108, "NVA06F_CTRL_CMD_SET_ERROR_NOTIFIER" },
	{ 0xa06f0112, "NVA06F_CTRL_CMD_STOP_CHANNEL" },

	/* VOLTA_CHANNEL_GPFIFO_A and later channels */
	{ 0xc36f0108, "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN" },
	{ 0xc36f010a, "NVC36F_CTRL_CMD_GPFIFO_SET_WORK_SUBMIT_TOKEN_NOTIF_INDEX" },

	/* NV_CONFIDENTIAL_COMPUTE */
	{ 0xcb330101, "NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES" },
};

/* RM classes, the hClass of NV_ESC_RM_ALLOC and friends: objects (client,
 * device, subdevice, memory, events) and the per-architecture engine and
 * channel classes from Kepler to Blackwell.  Display classes are left out. */
static const struct id_name rm_class_names[] = {
	{ 0x0000, "NV01_ROOT" },
	{ 0x0001, "NV01_ROOT_NON_PRIV" },
	{ 0x0002, "NV01_CONTEXT_DMA" },
	{ 0x0004, "NV01_TIMER" },
	{ 0x0005, "NV01_EVENT" },
	{ 0x003e, "NV01_MEMORY_SYSTEM" },
	{ 0x003f, "NV01_MEMORY_LOCAL_PRIVILEGED" },
	{ 0x0040, "NV01_MEMORY_LOCAL_USER" },
	{ 0x0041, "NV01_ROOT_CLIENT" },	/* also NV04_MEMORY: same number */
	{ 0x0042, "NV_MEMORY_EXTENDED_USER" },
	{ 0x0050, "NV_CE_UTILS" },
	{ 0x0071, "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR" },
	{ 0x0073, "NV04_DISPLAY_COMMON" },
	{ 0x0078, "NV01_EVENT_KERNEL_CALLBACK" },
	{ 0x0079, "NV01_EVENT_OS_EVENT" },
	{ 0x007e, "NV01_EVENT_KERNEL_CALLBACK_EX" },
	{ 0x0080, "NV01_DEVICE_0" },
	{ 0x00b1, "NV01_MEMORY_HW_RESOURCES" },
	{ 0x00c2, "NV01_MEMORY_LOCAL_PHYSICAL" },
	{ 0x00da, "NV_SEMAPHORE_SURFACE" },
	{ 0x00de, "RM_USER_SHARED_DATA" },
	{ 0x00e0, "NV_MEMORY_EXPORT" },
	{ 0x00f1, "NV_IMEX_SESSION" },
	{ 0x00f2, "IO_VASPACE_A" },
	{ 0x00f8, "NV_MEMORY_FABRIC" },
	{ 0x00f9, "NV_MEMORY_FABRIC_IMPORT_V2" },
	{ 0x00fb, "NV_MEMORY_FABRIC_IMPORTED_REF" },
	{ 0x00fc, "FABRIC_VASPACE_A" },
	{ 0x00fd, "NV_MEMORY_MULTICAST_FABRIC" },
	{ 0x00fe, "NV_MEMORY_MAPPER" },
	{ 0x2080, "NV20_SUBDEVICE_0" },
	{ 0x2081, "NV2081_BINAPI" },
	{ 0x2082, "NV2082_BINAPI_PRIVILEGED" },
	{ 0x503b, "NV50_P2P" },
	{ 0x503c, "NV50_THIRD_PARTY_P2P" },
	{ 0x506f, "NV50_CHANNEL_GPFIFO" },
	{ 0x5080, "NV50_DEFERRED_API_CLASS" },
	{ 0x50a0, "NV50_MEMORY_VIRTUAL" },
	{ 0x83de, "GT200_DEBUGGER" },
	{ 0x844c, "G84_PERFBUFFER" },
	{ 0x900e, "MPS_COMPUTE" },
	{ 0x9067, "FERMI_CONTEXT_SHARE_A" },
	{ 0x906f, "GF100_CHANNEL_GPFIFO" },
	{ 0x9074, "GF100_TIMED_SEMAPHORE_SW" },
	{ 0x9096, "GF100_ZBC_CLEAR" },
	{ 0x90cc, "GF100_PROFILER" },
	{ 0x90ce, "NV01_MEMORY_DEVICELESS" },
	{ 0x90e6, "GF100_SUBDEVICE_MASTER" },
	{ 0x90e7, "GF100_SUBDEVICE_INFOROM" },
	{ 0x90f1, "FERMI_VASPACE_A" },
	{ 0xa06c, "KEPLER_CHANNEL_GROUP_A" },
	{ 0xa06f, "KEPLER_CHANNEL_GPFIFO_A" },
	{ 0xa0b5, "KEPLER_DMA_COPY_A" },
	{ 0xa0c0, "KEPLER_COMPUTE_A" },
	{ 0xa140, "KEPLER_INLINE_TO_MEMORY_B" },
	{ 0xa16f, "KEPLER_CHANNEL_GPFIFO_B" },
	{ 0xa26f, "KEPLER_CHANNEL_GPFIFO_C" },
	{ 0xb069, "MAXWELL_FAULT_BUFFER_A" },
	{ 0xb06f, "MAXWELL_CHANNEL_GPFIFO_A" },
	{ 0xb0b5, "MAXWELL_DMA_COPY_A" },
	{ 0xb0c0, "MAXWELL_COMPUTE_A" },
	{ 0xb0cc, "MAXWELL_PROFILER" },
	{ 0xb1c0, "MAXWELL_COMPUTE_B" },
	{ 0xb1cc, "MAXWELL_PROFILER_CONTEXT" },
	{ 0xb2cc, "MAXWELL_PROFILER_DEVICE" },
	{ 0xc06f, "PASCAL_CHANNEL_GPFIFO_A" },
	{ 0xc076, "GP100_UVM_SW" },
	{ 0xc0b5, "PASCAL_DMA_COPY_A" },
	{ 0xc0c0, "PASCAL_COMPUTE_A" },
	{ 0xc1b5, "PASCAL_DMA_COPY_B" },
	{ 0xc1c0, "PASCAL_COMPUTE_B" },
	{ 0xc361, "VOLTA_USERMODE_A" },
	{ 0xc365, "ACCESS_COUNTER_NOTIFY_BUFFER" },
	{ 0xc369, "MMU_FAULT_BUFFER" },
	{ 0xc36f, "VOLTA_CHANNEL_GPFIFO_A" },
	{ 0xc3b5, "VOLTA_DMA_COPY_A" },
	{ 0xc3c0, "VOLTA_COMPUTE_A" },
	{ 0xc461, "TURING_USERMODE_A" },
	{ 0xc46f, "TURING_CHANNEL_GPFIFO_A" },
	{ 0xc4c0, "VOLTA_COMPUTE_B" },
	{ 0xc561, "AMPERE_USERMODE_A" },
	{ 0xc56f, "AMPERE_CHANNEL_GPFIFO_A" },
	{ 0xc572, "PHYSICAL_CHANNEL_GPFIFO" },
	{ 0xc574, "UVM_CHANNEL_RETAINER" },
	{ 0xc5b5, "TURING_DMA_COPY_A" },
	{ 0xc5c0, "TURING_COMPUTE_A" },
	{ 0xc637, "AMPERE_SMC_PARTITION_REF" },
	{ 0xc638, "AMPERE_SMC_EXEC_PARTITION_REF" },
	{ 0xc639, "AMPERE_SMC_CONFIG_SESSION" },
	{ 0xc640, "AMPERE_SMC_MONITOR_SESSION" },
	{ 0xc661, "HOPPER_USERMODE_A" },
	{ 0xc6b5, "AMPERE_DMA_COPY_A" },
	{ 0xc6c0, "AMPERE_COMPUTE_A" },
	{ 0xc761, "BLACKWELL_USERMODE_A" },
	{ 0xc763, "MMU_VIDMEM_ACCESS_BIT_BUFFER" },
	{ 0xc7b5, "AMPERE_DMA_COPY_B" },
	{ 0xc7c0, "AMPERE_COMPUTE_B" },
	{ 0xc863, "HOPPER_MMU_VIDMEM_ACCESS_BIT_BUFFER" },
	{ 0xc86f, "HOPPER_CHANNEL_GPFIFO_A" },
	{ 0xc8b5, "HOPPER_DMA_COPY_A" },
	{ 0xc96f, "BLACKWELL_CHANNEL_GPFIFO_A" },
	{ 0xc9b5, "BLACKWELL_DMA_COPY_A" },
	{ 0xc9c0, "ADA_COMPUTE_A" },
	{ 0xca6f, "BLACKWELL_CHANNEL_GPFIFO_B" },
	{ 0xcab5, "BLACKWELL_DMA_COPY_B" },
	{ 0xcb33, "NV_CONFIDENTIAL_COMPUTE" },
	{ 0xcba2, "HOPPER_SEC2_WORK_LAUNCH_A" },
	{ 0xcbc0, "HOPPER_COMPUTE_A" },
	{ 0xcbca, "NV_COUNTER_COLLECTION_UNIT" },
	{ 0xcd40, "BLACKWELL_INLINE_TO_MEMORY_A" },
	{ 0xcdc0, "BLACKWELL_COMPUTE_A" },
	{ 0xcec0, "BLACKWELL_COMPUTE_B" },
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *id_name__find(const struct id_name *t, size_t n, uint32_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].id == id)
			return t[mid].name;
		if (t[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool id_name__sorted(const struct id_name *t, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (t[i - 1].id >= t[i].id)
			return false;
	return true;
}

/* ------------------------------------------------------------ majors */

/* Which field of struct nv_majors a /proc/devices name fills, NULL for
 * names that are not the driver's (or not ones we trace: nvidia-nvlink and
 * nvidia-nvswitch belong to the fabric manager, not to CUDA programs). */
static uint32_t *nv_majors__slot(struct nv_majors *m, const char *name)
{
	/* 580 registers the frontend twice under one major ("nvidia" for the
	 * GPUs, "nvidiactl" for the control node); older drivers registered
	 * one "nvidia-frontend" for both. */
	if (!strcmp(name, "nvidia") || !strcmp(name, "nvidiactl") ||
	    !strcmp(name, "nvidia-frontend"))
		return &m->frontend;
	if (!strcmp(name, "nvidia-uvm"))
		return &m->uvm;
	if (!strcmp(name, "nvidia-modeset"))
		return &m->modeset;
	if (!strcmp(name, "nvidia-caps"))
		return &m->caps;
	if (!strcmp(name, "nvidia-caps-imex-channels"))
		return &m->caps_imex;
	return NULL;
}

int nv_majors__parse(FILE *f, struct nv_majors *m)
{
	/* /proc/devices lines are "%3d %s\n" with names well under this; a
	 * longer line is read in pieces, the tail pieces being skipped. */
	char line[256];
	bool in_char = false, seen_char = false, line_start = true;

	if (!f || !m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		bool whole = n && line[n - 1] == '\n';
		bool first = line_start;
		unsigned long major;
		uint32_t *slot;
		char *p, *end;

		line_start = whole;
		if (!first)
			continue;
		while (n && (line[n - 1] == '\n' || line[n - 1] == ' ' ||
			     line[n - 1] == '\t'))
			line[--n] = '\0';
		/* A section header ends the one before it: only names under
		 * "Character devices:" are char majors, block majors reuse
		 * the same numbers and may reuse names. */
		if (!strcmp(line, "Character devices:")) {
			in_char = seen_char = true;
			continue;
		}
		if (n && line[n - 1] == ':' && line[0] != ' ') {
			in_char = false;
			continue;
		}
		if (!in_char)
			continue;
		p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			continue;
		errno = 0;
		major = strtoul(p, &end, 10);
		if (errno || end == p || major == 0 || major > MAJOR_MAX ||
		    (*end != ' ' && *end != '\t'))
			continue;
		while (*end == ' ' || *end == '\t')
			end++;
		slot = nv_majors__slot(m, end);
		/* the first line wins: "nvidia" and "nvidiactl" agree anyway */
		if (slot && !*slot)
			*slot = (uint32_t)major;
	}
	if (ferror(f))
		return -EIO;
	return seen_char ? 0 : -EINVAL;
}

int nv_majors__from_list(const char *list, uint32_t *out, size_t max)
{
	const char *p = list;
	size_t n = 0;

	if (!list || (!out && max))
		return -EINVAL;
	for (;;) {
		unsigned long v;
		char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		/* strtoul would take a sign, and wrap "-1" to ULONG_MAX */
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || v == 0 || v > MAJOR_MAX)
			return -EINVAL;
		p = end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ',' && *p != '\0')
			return -EINVAL;
		if (n == max)
			return -E2BIG;
		out[n++] = (uint32_t)v;
		if (*p == '\0')
			break;
		p++;
	}
	return n > INT_MAX ? -E2BIG : (int)n;
}

/* ------------------------------------------------------------ names */

/* The device-and-number formats below always fit the callers' buffers in
 * practice; a short buffer truncates but still yields a string. */
static const char *fmt(char *buf, size_t len, const char *f, uint32_t a, uint32_t b)
{
	if (!buf || !len)
		return "?";
	snprintf(buf, len, f, a, b);
	return buf;
}

const char *nv_ioctl__device_name(const struct nv_majors *m, uint32_t major,
				  uint32_t minor, char *buf, size_t len)
{
	if (m && major) {
		if (major == m->frontend) {
			if (minor == NV_MINOR_CONTROL)
				return "nvidiactl";
			if (minor == NV_MINOR_MODESET)
				return "nvidia-modeset";
			if (minor <= NV_MINOR_REGULAR_MAX)
				return fmt(buf, len, "nvidia%u", minor, 0);
		} else if (major == m->modeset) {
			return "nvidia-modeset";
		} else if (major == m->uvm) {
			if (minor == UVM_MINOR_PRIMARY)
				return "nvidia-uvm";
			if (minor == UVM_MINOR_TOOLS)
				return "nvidia-uvm-tools";
		} else if (major == m->caps) {
			return fmt(buf, len, "nvidia-cap%u", minor, 0);
		} else if (major == m->caps_imex) {
			return fmt(buf, len, "nvidia-caps-imex-channels/channel%u", minor, 0);
		}
	}
	return fmt(buf, len, "char-%u:%u", major, minor);
}

int nv_ioctl__escape(uint32_t cmd)
{
	if (_IOC_TYPE(cmd) != NV_IOCTL_MAGIC)
		return -1;
	return (int)_IOC_NR(cmd);
}

const char *nv_ioctl__cmd_name(const struct nv_majors *m, uint32_t major,
			       uint32_t cmd, char *buf, size_t len)
{
	const char *name = NULL;

	if (m && major) {
		if (major == m->frontend || major == m->modeset) {
			int esc = nv_ioctl__escape(cmd);

			/* The frontend reads only the type and number; the
			 * size field varies with the struct, so it is not
			 * part of the name. */
			if (esc >= 0)
				name = esc_names[esc];
			else if (_IOC_TYPE(cmd) == NVKMS_IOCTL_MAGIC &&
				 _IOC_NR(cmd) == NVKMS_IOCTL_CMD)
				name = "NVKMS_IOCTL";
		} else if (major == m->uvm) {
			name = id_name__find(uvm_names, ARRAY_LEN(uvm_names), cmd);
		}
	}
	return name ? name : fmt(buf, len, "0x%x", cmd, 0);
}

enum nv_ioctl_param nv_ioctl__param_kind(uint32_t cmd)
{
	switch (nv_ioctl__escape(cmd)) {
	case NV_IOCTL_ESC_RM_CONTROL:
		return NV_IOCTL_PARAM_RM_CONTROL;
	case NV_IOCTL_ESC_RM_ALLOC:
	case NV_IOCTL_ESC_RM_ALLOC_MEMORY:
	case NV_IOCTL_ESC_RM_ALLOC_OBJECT:
		return NV_IOCTL_PARAM_RM_CLASS;
	default:
		return NV_IOCTL_PARAM_NONE;
	}
}

const char *nv_ioctl__rm_control_name(uint32_t ctrl_cmd)
{
	return id_name__find(rm_control_names, ARRAY_LEN(rm_control_names), ctrl_cmd);
}

const char *nv_ioctl__rm_class_name(uint32_t hclass)
{
	return id_name__find(rm_class_names, ARRAY_LEN(rm_class_names), hclass);
}

const char *nv_ioctl__param_name(uint32_t cmd, uint32_t param)
{
	switch (nv_ioctl__param_kind(cmd)) {
	case NV_IOCTL_PARAM_RM_CONTROL:
		return nv_ioctl__rm_control_name(param);
	case NV_IOCTL_PARAM_RM_CLASS:
		return nv_ioctl__rm_class_name(param);
	default:
		return NULL;
	}
}

int nv_ioctl__check_tables(void)
{
	if (!id_name__sorted(uvm_names, ARRAY_LEN(uvm_names)) ||
	    !id_name__sorted(rm_control_names, ARRAY_LEN(rm_control_names)) ||
	    !id_name__sorted(rm_class_names, ARRAY_LEN(rm_class_names)))
		return -EINVAL;
	return 0;
}

void nv_majors__from_info(const struct gt_file_info *info, struct nv_majors *m)
{
	const char *p = gt_file_info__option(info, "nv_majors", NULL);

	memset(m, 0, sizeof(*m));
	/* the value ends at a space, where %u stops too */
	if (p && sscanf(p, "%u,%u,%u,%u,%u", &m->frontend, &m->uvm, &m->modeset, &m->caps,
			&m->caps_imex) != 5)
		memset(m, 0, sizeof(*m));
}
