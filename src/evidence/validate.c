/* validate.c: the validation matrix in the store: environments, cases, layered
 * evidence, staleness when a node's driver or firmware changes, the probe runner,
 * import and export. This file holds the layer and status names; the rest lives in
 * validate_common.c (the helpers the files share, declared in validate_int.h),
 * validate_env.c, validate_case.c, validate_evidence.c, validate_sync.c,
 * validate_matrix.c, validate_run.c and validate_io.c.
 *
 * Rules the validate files keep (xpool(1), VALIDATION MATRIX):
 * - The current state of a cell layer is its latest results row (max id); no row is
 *   untested. Rows are never updated or deleted except with their case or
 *   environment: the table is the evidence history.
 * - A pass on layer L needs layers 0..L-1 currently pass; a fail may always be
 *   recorded. Recording on a lower layer does not touch the layers above it: the
 *   matrix shows each layer as recorded, and xp_validate_highest counts only an
 *   unbroken run of passes from the bottom, which is what placement relies on.
 * - Imported records are history from elsewhere: the layer rule is not applied to them.
 * - Every change writes an audit row in the same transaction as the change. */
#include "validate.h"

#include <string.h>

static const char *const layer_names[XP_LAYER_COUNT] = {"discovered", "schedulable", "launches", "executes",
							 "accepted"};
static const char *const status_names[XP_V_COUNT] = {"untested", "pass", "fail", "stale"};
static const char status_marks[XP_V_COUNT] = {'.', 'P', 'F', 'S'};

const char *xp_layer_name(int layer)
{
	return layer >= 0 && layer < XP_LAYER_COUNT ? layer_names[layer] : "unknown";
}

int xp_layer_parse(const char *s)
{
	if (!s || !*s)
		return -1;
	/* "2" for launches: the layer's number as the matrix columns count them. */
	if (s[0] >= '0' && s[0] < '0' + XP_LAYER_COUNT && s[1] == '\0')
		return s[0] - '0';
	size_t n = strlen(s);
	int found = -1;
	for (int i = 0; i < XP_LAYER_COUNT; i++) {
		if (strcmp(layer_names[i], s) == 0)
			return i;
		if (strncmp(layer_names[i], s, n) == 0) {
			if (found >= 0)
				return -1;
			found = i;
		}
	}
	return found;
}

const char *xp_vstatus_name(int status)
{
	return status >= 0 && status < XP_V_COUNT ? status_names[status] : "unknown";
}

int xp_vstatus_parse(const char *s)
{
	for (int i = 0; s && i < XP_V_COUNT; i++)
		if (strcmp(status_names[i], s) == 0)
			return i;
	return -1;
}

char xp_vstatus_mark(int status)
{
	return status >= 0 && status < XP_V_COUNT ? status_marks[status] : '?';
}
