/* amd.h: internals of the AMD adapter (AMD Instinct/Radeon GPUs and Hygon DCUs): parsers of
 * `rocm-smi --json` (Hygon's hy-smi speaks the same JSON) and of `rocminfo`. They are pure
 * functions over text, so tests feed them recorded outputs. */
#ifndef XP_AMD_H
#define XP_AMD_H

#include <stddef.h>

#include "xp_adapter.h"

/* Largest tool output read or parsed: `rocm-smi --showallinfo --json` of an 8-GPU node is tens
 * of KiB, rocminfo a few hundred; 8 MiB leaves room for odd builds without trusting them. */
#define XP_AMD_MAX_TEXT ((size_t)8 << 20)

/* Replay file names (the layout `xpool record` writes and --replay reads). */
#define XP_AMD_SMI_FILE "rocm-smi.json"
#define XP_AMD_ROCMINFO_FILE "rocminfo.txt"

/* Parses `rocm-smi --json` / `hy-smi --json`: top-level "cardN" objects, maybe "system".
 * node is emptied (its hostname kept), then gets one device per card in card order, with
 * whatever subset of the fields the tool printed; "N/A" is unknown. When the "system" object
 * carries "(Topology) Link type between DRM devices I and J" with at least one XGMI link, node's
 * link matrix is filled and XGMI-connected devices share a group. Fields of the wrong JSON type
 * are skipped with a warning. 0, or -1 with err (not JSON, not an object, a card not an object). */
int xp_rocmsmi_parse_json(const char *text, size_t len, struct xp_raw_node *node, char *err,
			  size_t errlen);

/* One HSA agent of rocminfo that is an accelerator (Device Type GPU, or DCU on Hygon). */
struct xp_rocminfo_agent {
	char name[64];      /* "gfx906", "gfx928": the ISA, our arch */
	char marketing[128]; /* "AMD Instinct MI100", "K1xx_AI" */
	char uuid[96];      /* "GPU-7100fa8866904061"; "" when not printed */
	char type[16];      /* "GPU", "DCU" */
	int compute_units;  /* -1 when not printed */
};

/* Reads rocminfo's accelerator agents in order into agents (at most max); the number found
 * (agents beyond max are counted, not stored), or -1 with err when the text holds no agent
 * block at all. ANSI colour sequences (Hygon's first line has them) are ignored. */
int xp_rocminfo_agents(const char *text, size_t len, struct xp_rocminfo_agent *agents, int max,
		       char *err, size_t errlen);

/* Parses `rocminfo` into node: the k-th accelerator agent goes to the device with the same UUID,
 * else to the k-th device; node gets one device per agent when it has none yet. Sets arch from
 * the agent's Name and name from its Marketing Name when the device has none. 0, or -1 with err. */
int xp_rocminfo_parse(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen);

#endif
