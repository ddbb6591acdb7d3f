/* ascend.h: parsers of Huawei's npu-smi outputs, shared by the Ascend adapter and its tests. */
#ifndef XP_ASCEND_H
#define XP_ASCEND_H

#include <stddef.h>

#include "xp_adapter.h"

/* Largest npu-smi output read, run or parsed; a real table is a few KiB. */
#define XP_NPUSMI_MAX_TEXT ((size_t)4 << 20)

/* The adapter (ascend.c). */
extern const struct xp_adapter xp_adapter_ascend;

/* Parses `npu-smi info` into node (caller-initialized), a device per (NPU id, chip id); 0 or -1. */
int xp_npusmi_parse_info(const char *text, size_t len, struct xp_raw_node *node, char *err,
			 size_t errlen);
/* Parses `npu-smi info -m` into node: names devices by (NPU id, chip id), adding absent ones. */
int xp_npusmi_parse_map(const char *text, size_t len, struct xp_raw_node *node, char *err,
			size_t errlen);

#endif
