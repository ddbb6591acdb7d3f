/* fuzz_filter.c: the filter grammar (src/model/filter.c), as the console's `/`, `--filter`
 * and batch scripts hand it a line: compiled against the node fields, then evaluated on a row
 * whose every field has a value, so the evaluator walks whatever tree the parser built. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "filter.h"

/* Every numeric field is 42 and every text field "H100-SXM": both kinds of comparison run. */
static bool get_any(void *row, const char *field, struct xp_fval *out)
{
	(void)row;
	for (const struct xp_filter_field *f = xp_filter_node_fields; f->name; f++) {
		size_t n = strlen(f->name);
		bool match = f->name[n - 1] == '.' ? strncmp(field, f->name, n) == 0 : strcmp(field, f->name) == 0;
		if (!match)
			continue;
		if (f->numeric) {
			out->kind = XP_FV_NUM;
			out->num = 42;
		} else {
			out->kind = XP_FV_STR;
			out->str = "H100-SXM";
		}
		return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *expr = xp_fuzz_str(data, size);
	struct xp_err err = {{0}};
	struct xp_filter *f = xp_filter_compile(expr, xp_filter_node_fields, &err);
	if (f) {
		(void)xp_filter_eval(f, get_any, NULL, "node-1\nnvidia\nH100-SXM\nrack-a");
		(void)xp_filter_is_text(f);
		xp_filter_free(f);
	} else if (!err.msg[0]) {
		abort(); /* a refusal must say why */
	}
	free(expr);
	return 0;
}
