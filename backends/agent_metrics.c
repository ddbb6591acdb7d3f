/* agent_metrics.c: the agent's GET /metrics (Prometheus text exposition 0.0.4) and
 * GET /v1/health bodies, both built from the last good node under the agent's lock. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "model_json.h"

const char *const xpa_route_names[XPA_ROUTE_COUNT] = {"/v1/node", "/v1/health", "/metrics", "/v1/probe",
							"other"};

/* Writes a label value escaped as the exposition format wants: \\, \" and \n. */
static void label(FILE *f, const char *key, const char *v, bool comma)
{
	fprintf(f, "%s%s=\"", comma ? "," : "", key);
	for (const char *p = v ? v : ""; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* The labels every device sample carries. */
static void dev_labels(FILE *f, const struct xp_node *n, const struct xp_device *d)
{
	char idx[24];
	snprintf(idx, sizeof idx, "%d", d->index);
	label(f, "node", n->name, false);
	label(f, "vendor", d->vendor, true);
	label(f, "model", d->model, true);
	label(f, "bus_id", d->pci_bus_id, true);
	label(f, "index", idx, true);
	label(f, "uuid", d->uuid, true);
}

static void help(FILE *f, const char *name, const char *type, const char *text)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/* Which per-device value a family shows; unknown values are left out, never NaN. */
enum fam { F_UTIL, F_MEM_USED, F_MEM_TOTAL, F_TEMP, F_POWER, F_POWER_LIMIT, F_ECC_CORR, F_ECC_UNCORR, F_RETIRED };

static const struct {
	const char *name, *type, *help;
} fams[] = {
	[F_UTIL] = {"xpool_device_utilization_ratio", "gauge", "Accelerator busy ratio (0 to 1)."},
	[F_MEM_USED] = {"xpool_device_memory_used_bytes", "gauge", "Accelerator memory in use."},
	[F_MEM_TOTAL] = {"xpool_device_memory_total_bytes", "gauge", "Accelerator memory in all."},
	[F_TEMP] = {"xpool_device_temperature_celsius", "gauge", "Accelerator temperature."},
	[F_POWER] = {"xpool_device_power_watts", "gauge", "Accelerator power draw."},
	[F_POWER_LIMIT] = {"xpool_device_power_limit_watts", "gauge", "Accelerator power limit."},
	[F_ECC_CORR] = {"xpool_device_ecc_corrected_errors_total", "counter",
			"Corrected ECC memory errors the vendor tool reports."},
	[F_ECC_UNCORR] = {"xpool_device_ecc_uncorrected_errors_total", "counter",
			  "Uncorrected ECC memory errors the vendor tool reports."},
	[F_RETIRED] = {"xpool_device_retired_pages", "gauge", "Memory pages the device has retired."},
};

/* The value of family f for d; false when not known. */
static bool fam_value(enum fam f, const struct xp_device *d, double *v)
{
	const double mib = 1048576.0;
	switch (f) {
	case F_UTIL:
		*v = d->utilization_pct / 100.0;
		return XP_HAS(d->utilization_pct);
	case F_MEM_USED:
		*v = (double)d->memory_used_mib * mib;
		return d->memory_used_mib >= 0;
	case F_MEM_TOTAL:
		*v = (double)d->memory_mib * mib;
		return d->memory_mib >= 0;
	case F_TEMP:
		*v = d->temperature_c;
		return XP_HAS(d->temperature_c);
	case F_POWER:
		*v = d->power_w;
		return XP_HAS(d->power_w);
	case F_POWER_LIMIT:
		*v = d->power_limit_w;
		return XP_HAS(d->power_limit_w);
	case F_ECC_CORR:
		*v = (double)d->ecc_corrected;
		return d->ecc_corrected >= 0;
	case F_ECC_UNCORR:
		*v = (double)d->ecc_uncorrected;
		return d->ecc_uncorrected >= 0;
	case F_RETIRED:
		*v = (double)d->retired_pages;
		return d->retired_pages >= 0;
	}
	return false;
}

char *xpa_metrics(struct xp_agent *a, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	const struct xp_node *n = a->cluster && a->cluster->n_nodes ? a->cluster->nodes[0] : NULL;
	size_t nd = n ? n->n_devices : 0;
	/* One family at a time: the format wants every sample of a family together after its TYPE. */
	for (size_t fi = 0; fi < sizeof fams / sizeof fams[0]; fi++) {
		bool any = false;
		for (size_t i = 0; i < nd; i++) {
			double v;
			if (!fam_value((enum fam)fi, &n->devices[i], &v) || !isfinite(v))
				continue;
			if (!any)
				help(f, fams[fi].name, fams[fi].type, fams[fi].help);
			any = true;
			fprintf(f, "%s{", fams[fi].name);
			dev_labels(f, n, &n->devices[i]);
			/* Byte counts print whole: 85899345920, not 8.589934592e+10. */
			if (v == floor(v) && fabs(v) < 1e15)
				fprintf(f, "} %.0f\n", v);
			else
				fprintf(f, "} %.10g\n", v);
		}
	}
	if (nd) {
		help(f, "xpool_device_health", "gauge", "Accelerator health: 1 for its current state, 0 for the others.");
		for (size_t i = 0; i < nd; i++)
			for (int h = XP_HEALTH_UNKNOWN; h < XP_HEALTH_COUNT; h++) {
				fputs("xpool_device_health{", f);
				dev_labels(f, n, &n->devices[i]);
				label(f, "state", xp_health_name(h), true);
				fprintf(f, "} %d\n", n->devices[i].health == h);
			}
		help(f, "xpool_device_info", "gauge", "Accelerator versions, as labels; always 1.");
		for (size_t i = 0; i < nd; i++) {
			const struct xp_device *d = &n->devices[i];
			fputs("xpool_device_info{", f);
			dev_labels(f, n, d);
			label(f, "arch", d->arch, true);
			label(f, "driver", d->driver, true);
			label(f, "firmware", d->firmware, true);
			label(f, "runtime", d->runtime, true);
			fputs("} 1\n", f);
		}
	}
	help(f, "xpool_node_devices", "gauge", "Accelerators this node reports.");
	fputs("xpool_node_devices{", f);
	label(f, "node", n ? n->name : "", false);
	fprintf(f, "} %zu\n", nd);

	help(f, "xpool_agent_generation", "gauge", "Changes of the node's inventory since the agent started.");
	fprintf(f, "xpool_agent_generation %" PRIu64 "\n", a->generation);
	help(f, "xpool_agent_discovery_duration_seconds", "gauge", "How long the last discovery took.");
	fprintf(f, "xpool_agent_discovery_duration_seconds %.6f\n", a->discovery_s);
	help(f, "xpool_agent_last_discovery_timestamp_seconds", "gauge",
	     "When the last successful discovery finished (Unix time).");
	fprintf(f, "xpool_agent_last_discovery_timestamp_seconds %lld\n", (long long)a->discovered);
	help(f, "xpool_agent_discovery_errors_total", "counter", "Rediscoveries that failed.");
	fprintf(f, "xpool_agent_discovery_errors_total %" PRIu64 "\n", a->discovery_errors);
	help(f, "xpool_agent_start_time_seconds", "gauge", "When the agent started (Unix time).");
	fprintf(f, "xpool_agent_start_time_seconds %lld\n", (long long)a->started);
	help(f, "xpool_agent_requests_total", "counter", "HTTP requests answered, by route and status code.");
	for (size_t i = 0; i < a->n_counts; i++) {
		fputs("xpool_agent_requests_total{", f);
		label(f, "path", xpa_route_names[a->counts[i].route], false);
		char code[16];
		snprintf(code, sizeof code, "%d", a->counts[i].code);
		label(f, "code", code, true);
		fprintf(f, "} %" PRIu64 "\n", a->counts[i].n);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	*len = size;
	return buf;
}

char *xpa_health(struct xp_agent *a, unsigned *code, size_t *len)
{
	const struct xp_node *n = a->cluster && a->cluster->n_nodes ? a->cluster->nodes[0] : NULL;
	json_t *o = json_object();
	json_object_set_new(o, "status", json_string(!n ? "failed" : a->error ? "degraded" : "ok"));
	json_object_set_new(o, "node", n ? xp_json_str(n->name) : json_null());
	json_object_set_new(o, "generation", json_integer((json_int_t)a->generation));
	json_object_set_new(o, "discovered", n ? json_integer((json_int_t)a->discovered) : json_null());
	json_object_set_new(o, "discovery_ms", json_real(a->discovery_s * 1000.0));
	json_object_set_new(o, "devices", json_integer(n ? (json_int_t)n->n_devices : 0));
	json_int_t hc[XP_HEALTH_COUNT] = {0};
	for (size_t i = 0; n && i < n->n_devices; i++) {
		int h = n->devices[i].health;
		hc[h >= 0 && h < XP_HEALTH_COUNT ? h : XP_HEALTH_UNKNOWN]++;
	}
	json_t *dh = json_object();
	json_object_set_new(dh, "ok", json_integer(hc[XP_HEALTH_OK]));
	json_object_set_new(dh, "warn", json_integer(hc[XP_HEALTH_WARN]));
	json_object_set_new(dh, "fail", json_integer(hc[XP_HEALTH_FAIL]));
	json_object_set_new(dh, "unknown", json_integer(hc[XP_HEALTH_UNKNOWN]));
	json_object_set_new(o, "devices_health", dh);
	json_object_set_new(o, "error", a->error ? xp_json_str(a->error) : json_null());
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	*code = n ? 200 : 503;
	*len = strlen(s);
	return s;
}
