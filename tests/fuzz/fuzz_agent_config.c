/* fuzz_agent_config.c: the agent's config file (`xpool agent --config FILE`: the probe
 * whitelist, `probe NAME [timeout=S] [layer=L] -- PROGRAM ARGS...` lines), read by
 * xp_agent_config_load from a file as the agent reads it. A config that loads names only valid,
 * distinct probes, each with a program and a positive timeout. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "agent_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = xp_fuzz_tmpfile(data, size, "agent.conf");
	struct xp_agent_config cfg;
	struct xp_err err = {{0}};
	if (xp_agent_config_load(path, &cfg, &err) < 0) {
		if (!err.msg[0])
			abort(); /* a refusal must say why */
		xp_agent_config_free(&cfg);
		return 0;
	}
	for (size_t i = 0; i < cfg.n; i++) {
		const struct xp_agent_probe *p = &cfg.probes[i];
		if (!xp_agent_probe_name_ok(p->name) || !p->argv || !p->argv[0] || !(p->timeout_s > 0))
			abort();
		if (xp_agent_config_find(&cfg, p->name) != p)
			abort(); /* two probes of one name */
	}
	xp_agent_config_free(&cfg);
	return 0;
}
