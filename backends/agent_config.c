/* agent_config.c: the agent's config file: the whitelist of probes it may run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_server.h"
#include "run.h"
#include "validate.h"
#include "words.h"

/* A config is a handful of lines; anything this large is a mistake. */
#define CONFIG_MAX_BYTES ((size_t)1 << 20)
/* Most probes one agent whitelists. */
#define CONFIG_MAX_PROBES 256

bool xp_agent_probe_name_ok(const char *name)
{
	size_t n = 0;
	for (; name[n]; n++) {
		char c = name[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '-'))
			return false;
		if (n >= XP_AGENT_PROBE_NAME_MAX)
			return false;
	}
	return n > 0;
}

const struct xp_agent_probe *xp_agent_config_find(const struct xp_agent_config *cfg, const char *name)
{
	for (size_t i = 0; cfg && i < cfg->n; i++)
		if (strcmp(cfg->probes[i].name, name) == 0)
			return &cfg->probes[i];
	return NULL;
}

static void probe_clear(struct xp_agent_probe *p)
{
	free(p->name);
	free(p->prog);
	for (size_t i = 0; p->argv && i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	memset(p, 0, sizeof *p);
}

void xp_agent_config_free(struct xp_agent_config *cfg)
{
	for (size_t i = 0; i < cfg->n; i++)
		probe_clear(&cfg->probes[i]);
	free(cfg->probes);
	cfg->probes = NULL;
	cfg->n = 0;
}

/* Parses one probe line's words into p; -1 with err (no file:line: the caller adds it). */
static int parse_probe(int argc, char **argv, const struct xp_agent_config *cfg, struct xp_agent_probe *p,
		       struct xp_err *err)
{
	if (strcmp(argv[0], "probe") != 0)
		return xp_errf(err, "unknown directive '%s' (expected: probe NAME [timeout=S] [layer=L] -- PROGRAM ARGS...)",
			       argv[0]);
	if (argc < 2)
		return xp_errf(err, "probe: missing NAME");
	if (!xp_agent_probe_name_ok(argv[1]))
		return xp_errf(err, "probe name '%s': use 1 to %d of A-Z a-z 0-9 _ . -", argv[1],
			       XP_AGENT_PROBE_NAME_MAX);
	if (xp_agent_config_find(cfg, argv[1]))
		return xp_errf(err, "probe %s: defined twice", argv[1]);
	p->timeout_s = XP_AGENT_PROBE_TIMEOUT;
	p->layer = XP_LAYER_EXECUTES;
	int i = 2;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *w = argv[i];
		if (strncmp(w, "timeout=", 8) == 0) {
			char *end;
			double t = strtod(w + 8, &end);
			/* A day bounds a probe: the agent runs one at a time. */
			if (end == w + 8 || *end || !(t >= 0.1 && t <= 86400))
				return xp_errf(err, "probe %s: timeout '%s' is not a number of seconds from 0.1 to 86400",
					       argv[1], w + 8);
			p->timeout_s = t;
		} else if (strncmp(w, "layer=", 6) == 0) {
			int l = xp_layer_parse(w + 6);
			if (l < 0)
				return xp_errf(err, "probe %s: unknown layer '%s' (discovered, schedulable, launches, "
						    "executes, accepted)", argv[1], w + 6);
			p->layer = l;
		} else
			return xp_errf(err, "probe %s: unknown option '%s' (timeout=S, layer=L, then -- PROGRAM)",
				       argv[1], w);
	}
	if (i >= argc)
		return xp_errf(err, "probe %s: missing '-- PROGRAM ARGS...'", argv[1]);
	i++;
	if (i >= argc)
		return xp_errf(err, "probe %s: missing PROGRAM after --", argv[1]);
	const char *prog = argv[i];
	if (strchr(prog, '/')) {
		/* Relative paths would depend on the directory the agent happens to start in. */
		if (prog[0] != '/')
			return xp_errf(err, "probe %s: %s: give an absolute path or a name found on PATH", argv[1], prog);
		if (access(prog, X_OK) < 0)
			return xp_errf(err, "probe %s: %s: %s", argv[1], prog, strerror(errno));
		p->prog = xp_strdup(prog);
	} else if (!(p->prog = xp_which(prog)))
		return xp_errf(err, "probe %s: %s: program not found on PATH", argv[1], prog);
	p->name = xp_strdup(argv[1]);
	p->argc = (size_t)(argc - i);
	p->argv = xp_calloc(p->argc + 1, sizeof *p->argv);
	for (size_t k = 0; k < p->argc; k++)
		p->argv[k] = xp_strdup(argv[i + (int)k]);
	return 0;
}

int xp_agent_config_load(const char *path, struct xp_agent_config *cfg, struct xp_err *err)
{
	memset(cfg, 0, sizeof *cfg);
	size_t len = 0;
	char *text = xp_read_file(path, CONFIG_MAX_BYTES, &len, err);
	if (!text)
		return -1;
	if (strlen(text) != len) {
		free(text);
		return xp_errf(err, "%s: holds a NUL byte: not a text file", path);
	}
	size_t cap = 0;
	int rc = 0, lineno = 0;
	char *save = NULL;
	/* strtok_r would skip empty lines and shift the numbers: split by hand. */
	for (char *line = text; line && rc == 0; line = save) {
		lineno++;
		char *nl = strchr(line, '\n');
		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		int argc = 0;
		char **argv = NULL;
		struct xp_err e = {{0}};
		if (xp_cmd_split(line, &argc, &argv, &e) < 0) {
			rc = xp_errf(err, "%s:%d: %s", path, lineno, e.msg);
			break;
		}
		if (argc > 0) {
			struct xp_agent_probe p = {0};
			if (cfg->n >= CONFIG_MAX_PROBES)
				rc = xp_errf(err, "%s:%d: more than %d probes", path, lineno, CONFIG_MAX_PROBES);
			else if (parse_probe(argc, argv, cfg, &p, &e) < 0) {
				probe_clear(&p);
				rc = xp_errf(err, "%s:%d: %s", path, lineno, e.msg);
			} else {
				xp_grow(&cfg->probes, sizeof *cfg->probes, cfg->n, &cap);
				cfg->probes[cfg->n++] = p;
			}
		}
		xp_cmd_split_free(argc, argv);
	}
	free(text);
	if (rc < 0)
		xp_agent_config_free(cfg);
	return rc;
}
