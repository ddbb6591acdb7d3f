/* adapters.h: finding, loading and running the vendor adapters (hwloc's
 * component loader is the model: a built-in order, dlopen, an ABI check, an
 * exclusion variable, and silence when a vendor is simply absent). */
#ifndef XP_ADAPTERS_H
#define XP_ADAPTERS_H

#include <stdbool.h>
#include <stddef.h>

#include "manifest.h"
#include "manifest_path.h"
#include "xp.h"
#include "xp_adapter.h"

/* What became of one adapter. */
enum xp_adapter_state {
	XP_AD_ACTIVE,      /* loaded, hardware (or recorded files) found */
	XP_AD_IDLE,        /* loaded, no matching hardware */
	XP_AD_UNAVAILABLE, /* loaded, but its vendor library or tool is missing or failed */
	XP_AD_MISSING,     /* no xp_NAME.so found on the search path */
	XP_AD_BROKEN,      /* found but unusable: dlopen error, ABI mismatch, missing symbol, bad manifest */
	XP_AD_EXCLUDED     /* left out by XPOOL_ADAPTERS=-NAME */
};

/* One adapter and what it reported. */
struct xp_adapter_slot {
	char name[32];
	char *so_path;        /* the shared object loaded, or NULL */
	char *manifest_path;  /* its manifest, or NULL */
	struct xp_manifest *manifest;
	void *dl;
	const struct xp_adapter *ops;
	void *st;             /* the adapter's own state */
	int state;            /* enum xp_adapter_state */
	char reason[1024];    /* why it is not active, or what went wrong while enumerating */
	struct xp_raw_node *raw; /* the last report, when active */
};

/* All adapters of one discovery. */
struct xp_adapters {
	struct xp_adapter_slot slots[XP_ADAPTER_COUNT];
	size_t n;
	struct xp_host host;
	char *replay_dir;
};

/* Returns the name of an adapter state ("active", "idle", ...). */
const char *xp_adapter_state_name(int state);
/* Finds, loads and probes every adapter (replay_dir: read recorded files instead of running tools). */
void xp_adapters_open(struct xp_adapters *a, const char *replay_dir);
/* Runs enumerate and topology on every active adapter, filling each slot's raw report. */
void xp_adapters_enumerate(struct xp_adapters *a);
/* Closes the adapters and unloads them. */
void xp_adapters_close(struct xp_adapters *a);

#endif
