/* cmd_record.c: `xpool record DIR`: a replay directory from the live machine:
 * hwloc.xml, hostname, and every vendor tool output the adapters' manifests name. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adapters.h"
#include "cmd.h"
#include "files.h"
#include "local/local.h"
#include "run.h"

#define RECORD_TIMEOUT_S 60.0
#define RECORD_MAX_BYTES ((size_t)64 << 20)

/* Writes a file inside dir: a new file renamed into place, so a link planted at its name is
 * replaced, never followed; 0600, as vendor outputs name hosts, serial numbers and the commands
 * of running processes. */
static int write_file(const char *dir, const char *name, const char *data, size_t len, struct xp_err *err)
{
	char *path = xp_asprintf("%s/%s", dir, name);
	int rc = xp_write_atomic(path, data, len, XP_FMODE_PRIVATE, err);
	free(path);
	return rc;
}

static int record_exec(struct xp_ctx *ctx, const struct xp_args *a)
{
	const char *dir = a->argv[0];
	struct xp_err err = {{0}};
	/* Made 0700 when missing; one that exists must not let another user swap what is written. */
	if (xp_shared_dir_check(dir, true, false, &err) < 0) {
		xp_ctx_error(ctx, "record: %s", err.msg);
		return XP_EXIT_ERROR;
	}
	char *xml = NULL;
	size_t len = 0;
	if (xp_local_export_xml(&xml, &len, &err) < 0 || write_file(dir, "hwloc.xml", xml, len, &err) < 0) {
		xp_ctx_error(ctx, "record: %s", err.msg);
		free(xml);
		return XP_EXIT_ERROR;
	}
	free(xml);
	fprintf(ctx->out, "wrote    hwloc.xml (%zu bytes)\n", len);
	char host[256] = "";
	if (gethostname(host, sizeof host - 1) == 0 && host[0]) {
		char line[260];
		int n = snprintf(line, sizeof line, "%s\n", host);
		if (write_file(dir, "hostname", line, (size_t)n, &err) == 0)
			fprintf(ctx->out, "wrote    hostname (%s)\n", host);
	}

	/* Every tool every adapter's manifest names, whether or not its hardware is here:
	 * a bring-up engineer wants to see which tools are missing too. */
	struct xp_adapters ad;
	xp_adapters_open(&ad, NULL);
	int written = 0, failed = 0;
	for (size_t i = 0; i < ad.n; i++) {
		const struct xp_manifest *m = ad.slots[i].manifest;
		/* Records naming one file are alternatives, tried in order (rocm-smi, else Hygon's
		 * hy-smi): the first installed tool that succeeds writes the file replay reads. */
		for (size_t r = 0; m && r < m->n_records; r++) {
			const struct xp_mrecord *rec = &m->records[r];
			bool earlier = false;
			for (size_t k = 0; k < r; k++)
				earlier |= strcmp(m->records[k].file, rec->file) == 0;
			if (earlier)
				continue;
			char tried[256] = "", why[512] = "";
			bool done = false, ran = false;
			for (size_t k = r; k < m->n_records && !done; k++) {
				const struct xp_mrecord *alt = &m->records[k];
				if (strcmp(alt->file, rec->file) != 0)
					continue;
				char *prog = xp_which(alt->argv[0]);
				if (!prog) {
					size_t tl = strlen(tried);
					snprintf(tried + tl, sizeof tried - tl, "%s%s", tl ? ", " : "", alt->argv[0]);
					continue;
				}
				free(prog);
				ran = true;
				char *out = NULL;
				size_t olen = 0;
				if (xp_run_tool((const char *const *)alt->argv, RECORD_TIMEOUT_S, RECORD_MAX_BYTES, &out,
						&olen, why, sizeof why) < 0) {
					/* Said even when an alternative then succeeds: a tool that is there
					 * but fails is worth knowing about at bring-up. */
					bool more = false;
					for (size_t j = k + 1; j < m->n_records; j++)
						more |= strcmp(m->records[j].file, rec->file) == 0;
					fprintf(ctx->out, "failed   %s with %s (%s)%s\n", alt->file, alt->argv[0], why,
						more ? "; trying the next tool" : "");
					continue;
				}
				done = true;
				if (write_file(dir, alt->file, out, olen, &err) < 0) {
					xp_ctx_error(ctx, "record: %s", err.msg);
					failed++;
				} else {
					fprintf(ctx->out, "wrote    %s (%zu bytes, from %s)\n", alt->file, olen, alt->argv[0]);
					written++;
				}
				free(out);
			}
			if (!ran) {
				fprintf(ctx->out, "skipped  %s (%s not found)\n", rec->file, tried);
			} else if (!done) {
				failed++; /* each tool's failure is said above */
			}
		}
	}
	xp_adapters_close(&ad);
	fprintf(ctx->out, "%s: %d vendor output%s recorded; rehearse with: xpool --replay %s inventory\n", dir,
		written, written == 1 ? "" : "s", dir);
	return failed ? XP_EXIT_ERROR : XP_EXIT_OK;
}

const struct xp_cmd_entry xp_cmd_record_entry = {
	.name = "record",
	.alias = NULL,
	.usage = "DIR",
	.summary = "record this machine (hwloc.xml, vendor tool outputs) into DIR for --replay",
	.opts = NULL,
	.min_args = 1,
	.max_args = 1,
	.exec = record_exec,
};
