/* fuzz_agents.c: agents files (`--agents FILE`: one `URL [TOKEN_FILE]` a line, `#` comments),
 * read by xp_agent_pool_load_file into a fresh pool as the program does (token paths are
 * relative to the file, here a private temporary folder); nothing is polled. A file that loads
 * holds at most XP_AGENT_MAX agents, each with a URL that passes xp_agent_url_check. */
#include "fuzz.h"

#include <stdlib.h>

#include "agent_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = xp_fuzz_tmpfile(data, size, "agents");
	struct xp_agent_pool *p = xp_agent_pool_new(NULL);
	struct xp_err err = {{0}};
	if (xp_agent_pool_load_file(p, path, NULL, &err) < 0) {
		if (!err.msg[0] || xp_agent_pool_size(p) != 0)
			abort(); /* a refusal says why and keeps none of the file */
	} else {
		if (xp_agent_pool_size(p) > XP_AGENT_MAX)
			abort();
		for (size_t i = 0; i < xp_agent_pool_size(p); i++) {
			struct xp_agent_status st;
			xp_agent_pool_status(p, i, &st);
			struct xp_err uerr = {{0}};
			if (xp_agent_url_check(st.url, &uerr) < 0)
				abort();
		}
	}
	xp_agent_pool_free(p);
	return 0;
}
