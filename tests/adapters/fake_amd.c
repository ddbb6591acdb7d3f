/* fake_amd.c: a test adapter that stands in for "amd": two devices, no tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_adapter.h"

static int probe(const struct xp_host *h, void **st, char *err, size_t len)
{
	(void)err;
	(void)len;
	*st = malloc(1);
	/* In replay mode it is active only when the directory holds its file, like a real one. */
	if (h->replay_dir) {
		char *out = NULL, e[128];
		size_t n;
		int r = h->replay(h, "fake.txt", 1024, &out, &n, e, sizeof e);
		h->free(out);
		return r == 1 ? XP_PROBE_ACTIVE : XP_PROBE_IDLE;
	}
	return XP_PROBE_ACTIVE;
}

static int enumerate(void *st, struct xp_raw_node *node)
{
	(void)st;
	for (int i = 0; i < 2; i++) {
		struct xp_raw_device *d = &node->devices[node->n_devices++];
		xp_raw_device_init(d);
		d->index = i;
		snprintf(d->bus_id, sizeof d->bus_id, "0000:%02x:00.0", 0xc1 + i);
		snprintf(d->name, sizeof d->name, "Fake Accelerator X1");
		snprintf(d->driver, sizeof d->driver, "1.2.3");
		snprintf(d->health, sizeof d->health, i ? "Warning" : "OK");
		d->temperature_c = 40 + 50 * i;
		d->memory_total_mib = 16384;
	}
	return 0;
}

static const char *last_error(void *st)
{
	(void)st;
	return "";
}

static void close_(void *st)
{
	free(st);
}

const struct xp_adapter xp_adapter_amd = {
	.abi = XP_ADAPTER_ABI,
	.name = "amd",
	.probe = probe,
	.enumerate = enumerate,
	.last_error = last_error,
	.close = close_,
};
