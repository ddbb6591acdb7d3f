/* agent_probe.c: POST /v1/probe/NAME's work: run a whitelisted probe with the shared
 * runner (src/evidence/probe.c) and describe the result as "xpool.probe/v1" evidence. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_int.h"
#include "model_json.h"
#include "probe.h"
#include "validate.h"

/* Where probes find programs (as validate.c and run.c): never the agent's own PATH. */
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

void xpa_probe_job_init(struct xpa_probe_job *job, struct xp_agent *a, const struct xp_agent_probe *p)
{
	memset(job, 0, sizeof *job);
	job->probe = p;
	job->cancel = &a->cancel;
	const struct xp_node *n = a->cluster && a->cluster->n_nodes ? a->cluster->nodes[0] : NULL;
	job->node = xp_strdup(n ? n->name : "");
	/* The environments this node shows, each once: the validation matrix's rows the
	 * evidence may be recorded against. */
	size_t cap = 0;
	for (size_t i = 0; n && i < n->n_devices; i++) {
		const struct xp_device *d = &n->devices[i];
		if (!d->vendor || !d->model || !d->driver)
			continue;
		char *id = xp_env_id(d->vendor, d->model, d->driver, d->firmware, d->runtime);
		bool dup = false;
		for (size_t k = 0; k < job->n_envs && !dup; k++)
			dup = strcmp(job->envs[k], id) == 0;
		if (dup) {
			free(id);
			continue;
		}
		xp_grow(&job->envs, sizeof *job->envs, job->n_envs, &cap);
		job->envs[job->n_envs++] = id;
	}
}

void xpa_probe_job_clear(struct xpa_probe_job *job)
{
	for (size_t i = 0; i < job->n_envs; i++)
		free(job->envs[i]);
	free(job->envs);
	free(job->node);
	memset(job, 0, sizeof *job);
}

static double now_s(int clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static char *error_reply(const char *msg, unsigned *code, size_t *len)
{
	json_t *o = json_object();
	json_object_set_new(o, "error", xp_json_str(msg));
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	*code = 500;
	*len = strlen(s);
	return s;
}

char *xpa_probe_run(const struct xpa_probe_job *job, unsigned *code, size_t *len)
{
	const struct xp_agent_probe *p = job->probe;
	/* The output goes to an anonymous memory file: bounded by the runner's cap, never on disk. */
	int fd = memfd_create("xpool-probe", MFD_CLOEXEC);
	if (fd < 0) {
		char msg[256];
		snprintf(msg, sizeof msg, "probe %s: memfd_create: %s", p->name, strerror(errno));
		return error_reply(msg, code, len);
	}
	char *envp[7];
	int k = 0;
	envp[k++] = xp_strdup("PATH=" SAFE_PATH);
	envp[k++] = xp_strdup("LANG=C");
	envp[k++] = xp_strdup("LC_ALL=C");
	envp[k++] = xp_asprintf("XPOOL_PROBE=%s", p->name);
	envp[k++] = xp_asprintf("XPOOL_LAYER=%s", xp_layer_name(p->layer));
	envp[k++] = xp_asprintf("XPOOL_NODE=%s", job->node);
	envp[k] = NULL;
	time_t started = time(NULL);
	double t0 = now_s(CLOCK_MONOTONIC);
	struct xp_probe_result res;
	struct xp_err err = {{0}};
	int ok = xp_probe_run(p->prog, p->argv, envp, fd, p->timeout_s, XP_AGENT_PROBE_MAX_OUT, job->cancel, &res,
			      &err);
	double dur = now_s(CLOCK_MONOTONIC) - t0;
	for (int i = 0; i < k; i++)
		free(envp[i]);
	if (ok < 0) {
		close(fd);
		return error_reply(err.msg, code, len);
	}
	/* Read the whole output back (at most the cap) for its digest; the reply keeps its end. */
	size_t n = res.bytes, got = 0;
	char *out = xp_malloc(n + 1);
	while (got < n) {
		ssize_t r = pread(fd, out + got, n - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	out[got] = '\0';
	unsigned char dg[32];
	char hex[65];
	struct xp_sha256 h;
	xp_sha256_init(&h);
	xp_sha256_update(&h, out, got);
	xp_sha256_final(&h, dg);
	xp_sha256_hex(dg, hex);
	size_t from = got > XP_AGENT_PROBE_TAIL ? got - XP_AGENT_PROBE_TAIL : 0;
	/* The kept tail may start inside a UTF-8 sequence: xp_json_str turns such bytes into U+FFFD,
	 * but skipping continuation bytes keeps the text clean. */
	while (from && from < got && ((unsigned char)out[from] & 0xc0) == 0x80)
		from++;

	char note[160];
	xp_probe_note(&res, p->timeout_s, XP_AGENT_PROBE_MAX_OUT, note, sizeof note);
	int st = res.wstatus;
	bool killed = res.timed_out || res.cut || res.cancelled;
	json_t *o = json_object();
	json_object_set_new(o, "schema", json_string("xpool.probe/v1"));
	json_object_set_new(o, "node", xp_json_str(job->node));
	json_object_set_new(o, "probe", xp_json_str(p->name));
	json_object_set_new(o, "layer", json_string(xp_layer_name(p->layer)));
	json_t *av = json_array();
	for (size_t i = 0; i < p->argc; i++)
		json_array_append_new(av, xp_json_str(p->argv[i]));
	json_object_set_new(o, "argv", av);
	json_object_set_new(o, "status", json_string(ok == 1 ? "pass" : "fail"));
	json_object_set_new(o, "note", xp_json_str(note));
	/* The exit status and signal are the probe's own: a kill by the agent is reported
	 * by timed_out / output_cut, and its SIGKILL is not the probe's signal. */
	json_object_set_new(o, "exit", !killed && WIFEXITED(st) ? json_integer(WEXITSTATUS(st)) : json_null());
	json_object_set_new(o, "signal", !killed && WIFSIGNALED(st) ? json_integer(WTERMSIG(st)) : json_null());
	json_object_set_new(o, "timed_out", json_boolean(res.timed_out));
	json_object_set_new(o, "output_cut", json_boolean(res.cut));
	json_object_set_new(o, "cancelled", json_boolean(res.cancelled));
	json_object_set_new(o, "timeout_s", json_real(p->timeout_s));
	json_object_set_new(o, "started", json_integer((json_int_t)started));
	json_object_set_new(o, "duration_s", json_real(dur));
	json_object_set_new(o, "output_bytes", json_integer((json_int_t)got));
	json_object_set_new(o, "output_truncated", json_boolean(from > 0));
	json_object_set_new(o, "output", xp_json_str(out + from));
	json_object_set_new(o, "output_sha256", json_string(hex));
	json_t *envs = json_array();
	for (size_t i = 0; i < job->n_envs; i++)
		json_array_append_new(envs, xp_json_str(job->envs[i]));
	json_object_set_new(o, "environments", envs);
	free(out);
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	*code = 200;
	*len = strlen(s);
	return s;
}
