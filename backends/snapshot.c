/* snapshot.c: loads an "xpool.inventory/v1" document from a file. */
#include "snapshot.h"

#include <stdlib.h>

#include "model_json.h"

struct xp_cluster *xp_snapshot_load(const char *path, struct xp_err *err)
{
	size_t len = 0;
	/* xp_read_file already puts the path in front of its messages. */
	char *text = xp_read_file(path, XP_SNAPSHOT_MAX, &len, err);
	if (!text)
		return NULL;
	struct xp_cluster *c = xp_cluster_parse(text, len, path, err);
	free(text);
	return c;
}
