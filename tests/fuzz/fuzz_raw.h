/* fuzz_raw.h: what the harnesses of adapter parsers (fuzz_nvsmi_*.c, fuzz_npusmi_*.c,
 * fuzz_rocm*.c, fuzz_cnmon.c) share: one raw node, allocated once (it is 1.4 MiB: a fresh one
 * per input would be most of the time spent), and the invariants a parse must leave. */
#ifndef XP_FUZZ_RAW_H
#define XP_FUZZ_RAW_H

#include <stdlib.h>
#include <string.h>

#include "xp_adapter.h"

/* The node every input is parsed into, emptied first (xp_raw_node_init) as the adapter's is. */
static struct xp_raw_node *xp_fuzz_node(void)
{
	static struct xp_raw_node *n;
	if (!n && !(n = malloc(sizeof *n)))
		abort();
	xp_raw_node_init(n);
	return n;
}

/* Aborts unless the text field f of size bytes ends within it. */
#define XP_FUZZ_TEXT(f) \
	do { \
		if (strnlen((f), sizeof(f)) >= sizeof(f)) \
			abort(); \
	} while (0)

/* What a parse must leave whatever it read: counts within the arrays, every text ended, and a
 * refusal that says why (rc -1 with err non-empty). */
static void xp_fuzz_raw_check(const struct xp_raw_node *n, int rc, const char *err)
{
	if (rc != 0 && rc != -1)
		abort();
	if (rc < 0 && !err[0])
		abort();
	if (n->n_devices < 0 || n->n_devices > XP_RAW_MAX_DEVICES || n->n_warnings < 0 ||
	    n->n_warnings > XP_RAW_MAX_WARNINGS)
		abort();
	XP_FUZZ_TEXT(n->hostname);
	for (int w = 0; w < n->n_warnings; w++)
		XP_FUZZ_TEXT(n->warnings[w]);
	for (int i = 0; i < n->n_devices; i++) {
		const struct xp_raw_device *d = &n->devices[i];
		if (d->n_reasons < 0 || d->n_reasons > XP_RAW_MAX_REASONS || d->n_slices < 0 ||
		    d->n_slices > XP_RAW_MAX_SLICES || d->n_procs < -1 || d->n_procs > XP_RAW_MAX_PROCS)
			abort();
		XP_FUZZ_TEXT(d->bus_id);
		XP_FUZZ_TEXT(d->name);
		XP_FUZZ_TEXT(d->arch);
		XP_FUZZ_TEXT(d->uuid);
		XP_FUZZ_TEXT(d->serial);
		XP_FUZZ_TEXT(d->driver);
		XP_FUZZ_TEXT(d->firmware);
		XP_FUZZ_TEXT(d->runtime);
		XP_FUZZ_TEXT(d->health);
		XP_FUZZ_TEXT(d->group);
		for (int r = 0; r < d->n_reasons; r++)
			XP_FUZZ_TEXT(d->reasons[r]);
		for (int s = 0; s < d->n_slices; s++) {
			XP_FUZZ_TEXT(d->slices[s].profile);
			XP_FUZZ_TEXT(d->slices[s].uuid);
		}
		for (int p = 0; p < d->n_procs; p++) {
			XP_FUZZ_TEXT(d->procs[p].type);
			XP_FUZZ_TEXT(d->procs[p].name);
			XP_FUZZ_TEXT(d->procs[p].user);
		}
	}
	if (n->has_links)
		for (int a = 0; a < XP_RAW_MAX_DEVICES; a++)
			for (int b = 0; b < XP_RAW_MAX_DEVICES; b++)
				XP_FUZZ_TEXT(n->links[a][b]);
}

#endif
