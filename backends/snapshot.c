/* snapshot.c: loads an "xpool.inventory/v1" document from a file. */
#include "snapshot.h"

#include <sys/stat.h>
#include <unistd.h>

#include "model_json.h"

struct xp_cluster *xp_snapshot_load(const char *path, struct xp_err *err)
{
	struct stat st;
	/* xp_open_input already puts the path in front of its messages. */
	int fd = xp_open_input(path, &st, err);
	if (fd < 0)
		return NULL;
	/* Read in chunks and decoded as it comes: memory follows the model, not the file, so
	 * there is no cap on the file's size; the decoder's own limits (nodes, devices, string
	 * lengths, nesting) bound what a hostile file can make us hold. */
	struct xp_cluster *c = xp_cluster_read_fd(fd, path, err);
	close(fd);
	return c;
}
