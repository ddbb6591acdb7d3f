/* fuzz_inventory.c: the inventory document ("xpool.inventory/v1"), as `--inventory FILE`,
 * `--from`, replays and an agent's /v1/node reply are read: xp_cluster_parse on the text.
 * A document that decodes must encode again (xp_cluster_write) and decode to the same counts:
 * the model a hostile file builds is one the rest of the program can print and read back. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>

#include "model_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_err err = {{0}};
	struct xp_cluster *c = xp_cluster_parse((const char *)data, size, "fuzz.json", &err);
	if (!c) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		return 0;
	}
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		abort();
	struct xp_err werr = {{0}};
	if (xp_cluster_write(c, f, 0, &werr) < 0)
		abort(); /* a decoded model must always encode */
	fclose(f);
	struct xp_err rerr = {{0}};
	struct xp_cluster *again = xp_cluster_parse(text, len, "again.json", &rerr);
	if (!again || again->n_nodes != c->n_nodes)
		abort(); /* what xpool writes, xpool reads */
	for (size_t i = 0; i < c->n_nodes; i++)
		if (again->nodes[i]->n_devices != c->nodes[i]->n_devices)
			abort();
	xp_cluster_free(again);
	free(text);
	xp_cluster_free(c);
	return 0;
}
