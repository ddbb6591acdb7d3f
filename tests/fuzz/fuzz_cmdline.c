/* fuzz_cmdline.c: batch scripts (`xpool batch FILE`, `-b FILE`) and the console's `:` prompt
 * lines: each line split into words as xp_batch_run splits it (xp_cmd_split), then taken
 * through everything xp_cmd_run does before running a command (xp_cmd_check: global options,
 * the command table, its options and arguments, --json), with nothing run: no command writes
 * the store or a file. Every word must quote (xp_cmd_quote) back to itself through the
 * splitter, which the console's bookmarks and view strings rely on. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "words.h"

/* Each word quoted and split again must come back whole and alone. */
static void check_quote(const char *w)
{
	char *q = xp_cmd_quote(w);
	int argc;
	char **argv;
	struct xp_err err = {{0}};
	if (xp_cmd_split_argv(q, &argc, &argv, &err) < 0)
		abort();
	if (argc != 1 || strcmp(argv[0], w) != 0)
		abort();
	xp_cmd_split_free(argc, argv);
	free(q);
}

static void one_line(struct xp_ctx *ctx, const char *line)
{
	int argc = 0;
	char **argv = NULL;
	struct xp_err err = {{0}};
	if (xp_cmd_split(line, &argc, &argv, &err) < 0) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		return;
	}
	if (argc > XP_CMD_MAX_WORDS)
		abort();
	for (int i = 0; i < argc; i++)
		if (*argv[i])
			check_quote(argv[i]);
	struct xp_err cerr = {{0}};
	if (xp_cmd_check(ctx, argc, argv, &cerr) < 0 && !cerr.msg[0])
		abort();
	xp_cmd_split_free(argc, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Lines are independent (each one's global options are undone after it): a long script
	 * reaches nothing a short one does not, and costs the fuzzer its speed. */
	if (size > 4096)
		return 0;
	char *text = xp_fuzz_str(data, size);
	struct xp_ctx ctx;
	xp_ctx_init(&ctx, NULL, NULL);
	/* Lines as xp_batch_run reads them: one at a time; a NUL or an over-long one is refused
	 * before it is split. */
	const char *end = text + size;
	for (char *s = text; s < end;) {
		char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		if (n <= XP_BATCH_MAX_LINE && !memchr(s, '\0', n)) {
			s[n] = '\0';
			one_line(&ctx, s);
		}
		s += n + 1;
	}
	xp_ctx_free(&ctx);
	free(text);
	return 0;
}
