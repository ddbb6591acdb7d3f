/* qmodel.c: the queue model's names, command-line forms and checks (qmodel.h). */
#include "qmodel.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "model_json.h"
#include "names.h"

static const char *const res_names[XP_RES_COUNT] = {"devices", "ecu", "cpus", "memory"};
static const char *const policy_names[XP_QP_COUNT] = {"never", "lower-priority", "lower-or-newer", "any"};
static const char *const order_names[XP_QO_COUNT] = {"best-effort", "strict"};
static const char *const state_names[XP_QS_COUNT] = {"open", "hold", "drain"};

XP_NAMES_DEFINE(xp_res, res_names, XP_RES_COUNT)
XP_NAMES_DEFINE(xp_qpolicy, policy_names, XP_QP_COUNT)
XP_NAMES_DEFINE(xp_qorder, order_names, XP_QO_COUNT)
XP_NAMES_DEFINE(xp_qstate, state_names, XP_QS_COUNT)

/* A character of a name: what Kubernetes, Slurm and file names all take. */
static bool name_char(unsigned char c)
{
	return isalnum(c) || c == '.' || c == '_' || c == '-';
}

int xp_qname_check(const char *name, const char *what, struct xp_err *err)
{
	if (!name || !*name)
		return xp_errf(err, "%s is empty", what);
	size_t len = strlen(name);
	if (len > XP_QNAME_MAX)
		return xp_errf(err, "%s is %zu characters long (at most %d)", what, len, XP_QNAME_MAX);
	if (!isalnum((unsigned char)name[0]))
		return xp_errf(err, "%s must start with a letter or digit", what);
	for (size_t i = 0; i < len; i++)
		if (!name_char((unsigned char)name[i]))
			/* Not echoed raw: it may be a control character that would act on the terminal. */
			return xp_errf(err, "%s has character 0x%02x at %zu (letters, digits, '.', '_', '-' only)",
				       what, (unsigned char)name[i], i + 1);
	return 0;
}

int xp_qglob_check(const char *glob, const char *option, struct xp_err *err)
{
	size_t len = strlen(glob);
	if (!len)
		return xp_errf(err, "%s: empty glob", option);
	if (len > XP_QGLOB_MAX)
		return xp_errf(err, "%s: glob is %zu characters long (at most %d)", option, len, XP_QGLOB_MAX);
	bool open = false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)glob[i];
		if (c < 0x20 || c == 0x7f)
			return xp_errf(err, "%s: control character 0x%02x at %zu", option, c, i + 1);
		if (c == '[')
			open = true;
		else if (c == ']')
			open = false;
	}
	if (open)
		return xp_errf(err, "%s: '[' without its ']' in the glob", option);
	return 0;
}

int xp_qlabel_check(const char *label, struct xp_err *err)
{
	const char *eq = strchr(label, '=');
	if (!eq)
		return xp_errf(err, "--label: '%s' is not KEY=VALUE", label);
	char *key = xp_strndup(label, (size_t)(eq - label));
	int rc = xp_qname_check(key, "--label key", err);
	free(key);
	return rc < 0 ? rc : xp_qname_check(eq + 1, "--label value", err);
}

int xp_qamount_parse(const char *text, bool unlimited_ok, const char *field, int64_t *milli, struct xp_err *err)
{
	if (unlimited_ok && strcmp(text, "-") == 0) {
		*milli = XP_UNLIMITED;
		return 0;
	}
	/* Digits by hand, not strtod: no exponents, no rounding, and a huge number is refused
	 * before it can overflow. */
	const char *p = text;
	int64_t units = 0, frac = 0;
	int digits = 0, decimals = 0;
	for (; isdigit((unsigned char)*p); p++, digits++) {
		units = units * 10 + (*p - '0');
		if (units > XP_QUOTA_MAX_UNITS)
			return xp_errf(err, "%s: '%.40s' is too large (at most %lld)", field, text,
				       (long long)XP_QUOTA_MAX_UNITS);
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++) {
			if (++decimals > 3)
				return xp_errf(err, "%s: '%.40s' has more than 3 decimals", field, text);
			frac = frac * 10 + (*p - '0');
		}
		if (!decimals)
			digits = 0; /* "1." is a typo, not 1 */
		else
			digits += decimals; /* ".5" is half */
	}
	if (!digits || *p)
		return xp_errf(err, "%s: '%.40s' is not a number%s", field, text,
			       unlimited_ok ? " or '-' (unlimited)" : "");
	for (int d = decimals; d < 3; d++)
		frac *= 10;
	*milli = units * 1000 + frac;
	return 0;
}

char *xp_qamount_format(int64_t milli, char *buf, size_t size)
{
	if (milli < 0) {
		snprintf(buf, size, "unlimited");
		return buf;
	}
	long long u = (long long)(milli / 1000), f = (long long)(milli % 1000);
	if (!f)
		snprintf(buf, size, "%lld", u);
	else if (f % 100 == 0)
		snprintf(buf, size, "%lld.%lld", u, f / 100);
	else if (f % 10 == 0)
		snprintf(buf, size, "%lld.%02lld", u, f / 10);
	else
		snprintf(buf, size, "%lld.%03lld", u, f);
	return buf;
}

/* Parses one CLASS:RES=G/D[/M[/B[/L]]] of length len into q. */
static int quota_one(const char *entry, size_t len, struct xp_quota *q, struct xp_err *err)
{
	char *e = xp_strndup(entry, len);
	int rc = -1;
	char *colon = strchr(e, ':'), *eq = colon ? strchr(colon, '=') : NULL;
	if (!colon || !eq) {
		xp_errf(err, "--quota: '%.80s' is not CLASS:RESOURCE=GUARANTEED/DESERVED[/MAX[/BORROW[/LEND]]]", e);
		goto out;
	}
	*colon = *eq = '\0';
	if (xp_qname_check(e, "--quota class", err) < 0)
		goto out;
	q->res = xp_res_parse(colon + 1);
	if (q->res < 0) {
		xp_errf(err, "--quota %s: resource '%.40s' is not devices, ecu, cpus or memory", e, colon + 1);
		goto out;
	}
	static const char *const fields[] = {"guaranteed", "deserved", "max", "borrowing limit", "lending limit"};
	int64_t v[5] = {0, 0, XP_UNLIMITED, XP_UNLIMITED, XP_UNLIMITED};
	char *p = eq + 1;
	int i = 0;
	for (; i < 5; i++) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		char field[96];
		snprintf(field, sizeof field, "--quota %s:%s %s", e, colon + 1, fields[i]);
		if (xp_qamount_parse(p, i >= 2, field, &v[i], err) < 0)
			goto out;
		if (!slash)
			break;
		p = slash + 1;
	}
	if (i == 5) {
		xp_errf(err, "--quota %s:%s: more than 5 numbers (GUARANTEED/DESERVED/MAX/BORROW/LEND)", e, colon + 1);
		goto out;
	}
	if (i < 1) {
		xp_errf(err, "--quota %s:%s: needs at least GUARANTEED/DESERVED", e, colon + 1);
		goto out;
	}
	q->rclass = xp_strdup(e);
	q->guaranteed = v[0];
	q->deserved = v[1];
	q->max = v[2];
	q->borrowing_limit = v[3];
	q->lending_limit = v[4];
	rc = 0;
out:
	free(e);
	return rc;
}

int xp_quotas_parse(const char *text, struct xp_quota **out, size_t *n, struct xp_err *err)
{
	*out = NULL;
	*n = 0;
	size_t cap = 0;
	const char *p = text;
	for (;;) {
		size_t len = strcspn(p, ",");
		xp_grow(out, sizeof **out, *n, &cap);
		struct xp_quota *q = &(*out)[*n];
		memset(q, 0, sizeof *q);
		if (quota_one(p, len, q, err) < 0)
			goto fail;
		for (size_t j = 0; j < *n; j++)
			if (strcmp((*out)[j].rclass, q->rclass) == 0 && (*out)[j].res == q->res) {
				xp_errf(err, "--quota %s:%s given twice", q->rclass, xp_res_name(q->res));
				free(q->rclass);
				goto fail;
			}
		(*n)++;
		if (!p[len])
			return 0;
		p += len + 1;
	}
fail:
	xp_quotas_free(*out, *n);
	*out = NULL;
	*n = 0;
	return -1;
}

int xp_quota_check(const struct xp_quota *q, const struct xp_rclass *c, struct xp_err *err)
{
	const char *res = xp_res_name(q->res);
	if (!c)
		return xp_errf(err, "--quota %s:%s: no resource class '%s' (see `xpool queue class list`)", q->rclass,
			       res, q->rclass);
	if (c->builtin && strcmp(c->name, "cpu") == 0 && q->res != XP_RES_CPUS)
		return xp_errf(err, "--quota %s:%s: class cpu limits cpus only", q->rclass, res);
	if (c->builtin && strcmp(c->name, "mem") == 0 && q->res != XP_RES_MEMORY)
		return xp_errf(err, "--quota %s:%s: class mem limits memory only", q->rclass, res);
	if (!c->builtin && q->res != XP_RES_DEVICES && q->res != XP_RES_ECU)
		return xp_errf(err, "--quota %s:%s: a device class limits devices or ecu (cpus: class cpu, memory: "
				    "class mem)", q->rclass, res);
	if (q->guaranteed > q->deserved)
		return xp_errf(err, "--quota %s:%s: guaranteed is above deserved", q->rclass, res);
	if (q->max != XP_UNLIMITED && q->deserved > q->max)
		return xp_errf(err, "--quota %s:%s: deserved is above max", q->rclass, res);
	if (q->lending_limit != XP_UNLIMITED && q->lending_limit > q->deserved)
		return xp_errf(err, "--quota %s:%s: lending limit is above deserved (only what is deserved can be lent)",
			       q->rclass, res);
	return 0;
}

int xp_tenants_parse(const char *text, char ***out, size_t *n, struct xp_err *err)
{
	*out = NULL;
	*n = 0;
	if (!*text || strcmp(text, "-") == 0)
		return 0;
	size_t cap = 0;
	const char *p = text;
	for (;;) {
		size_t len = strcspn(p, ",");
		char *t = xp_strndup(p, len);
		if (xp_qname_check(t, "--tenants name", err) < 0) {
			free(t);
			xp_strv_free(*out, *n);
			*out = NULL;
			*n = 0;
			return -1;
		}
		xp_grow(out, sizeof **out, *n, &cap);
		(*out)[(*n)++] = t;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

struct xp_rclass *xp_qset_class(const struct xp_qset *set, const char *name)
{
	for (size_t i = 0; i < set->n_classes; i++)
		if (strcmp(set->classes[i].name, name) == 0)
			return &set->classes[i];
	return NULL;
}

struct xp_queue *xp_qset_queue(const struct xp_qset *set, const char *name)
{
	for (size_t i = 0; i < set->n_queues; i++)
		if (strcmp(set->queues[i].name, name) == 0)
			return &set->queues[i];
	return NULL;
}

int xp_qset_parent_check(const struct xp_qset *set, const char *name, const char *parent, struct xp_err *err)
{
	if (!parent)
		return 0;
	if (strcmp(parent, name) == 0)
		return xp_errf(err, "--parent: queue %s cannot be its own parent", name);
	/* Walk up from the new parent; at most n_queues steps, so a cycle already stored (which
	 * the store never holds) cannot loop here either. */
	const char *p = parent;
	for (size_t steps = 0; p; steps++) {
		const struct xp_queue *q = xp_qset_queue(set, p);
		if (!q)
			return xp_errf(err, "--parent: no queue '%s'", p);
		if (steps > set->n_queues)
			return xp_errf(err, "--parent: the queues above %s loop", parent);
		if (q->parent && strcmp(q->parent, name) == 0)
			return xp_errf(err, "--parent: %s is below %s already; making it %s's parent would make a cycle",
				       parent, name, name);
		p = q->parent;
	}
	return 0;
}

size_t xp_qset_children(const struct xp_qset *set, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n_queues; i++)
		if (set->queues[i].parent && strcmp(set->queues[i].parent, name) == 0)
			n++;
	return n;
}

/* milli-units as JSON: a number in units, null when unlimited. */
static json_t *amount_json(int64_t milli)
{
	if (milli < 0)
		return json_null();
	if (milli % 1000 == 0)
		return json_integer((json_int_t)(milli / 1000));
	return json_real((double)milli / 1000.0);
}

json_t *xp_queue_json(const struct xp_queue *q)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", xp_json_str(q->name));
	json_object_set_new(o, "parent", q->parent ? xp_json_str(q->parent) : json_null());
	json_t *t = json_array();
	for (size_t i = 0; i < q->n_tenants; i++)
		json_array_append_new(t, xp_json_str(q->tenants[i]));
	json_object_set_new(o, "tenants", t);
	json_object_set_new(o, "weight", json_real(q->weight));
	json_object_set_new(o, "priority", json_integer(q->priority));
	json_object_set_new(o, "ordering", json_string(xp_qorder_name(q->order)));
	json_object_set_new(o, "state", json_string(xp_qstate_name(q->state)));
	json_object_set_new(o, "reclaimable", json_boolean(q->reclaimable));
	json_object_set_new(o, "within", json_string(xp_qpolicy_name(q->within)));
	json_object_set_new(o, "reclaim", json_string(xp_qpolicy_name(q->reclaim)));
	json_t *a = json_array();
	for (size_t i = 0; i < q->n_quotas; i++) {
		const struct xp_quota *u = &q->quotas[i];
		json_t *e = json_object();
		json_object_set_new(e, "class", xp_json_str(u->rclass));
		json_object_set_new(e, "resource", json_string(xp_res_name(u->res)));
		json_object_set_new(e, "used", json_null()); /* what jobs use: filled in by the readers that schedule */
		json_object_set_new(e, "guaranteed", amount_json(u->guaranteed));
		json_object_set_new(e, "deserved", amount_json(u->deserved));
		json_object_set_new(e, "max", amount_json(u->max));
		json_object_set_new(e, "borrowing_limit", amount_json(u->borrowing_limit));
		json_object_set_new(e, "lending_limit", amount_json(u->lending_limit));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "quotas", a);
	if (q->engine_text)
		json_object_set_new(o, "engine_text", json_string(q->engine_text));
	return o;
}

json_t *xp_rclass_json(const struct xp_rclass *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", xp_json_str(c->name));
	json_object_set_new(o, "vendor", c->vendor ? xp_json_str(c->vendor) : json_null());
	json_object_set_new(o, "model", c->model ? xp_json_str(c->model) : json_null());
	json_object_set_new(o, "label", c->label ? xp_json_str(c->label) : json_null());
	json_object_set_new(o, "builtin", json_boolean(c->builtin));
	return o;
}

void xp_quotas_free(struct xp_quota *q, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(q[i].rclass);
	free(q);
}

void xp_queue_clear(struct xp_queue *q)
{
	free(q->name);
	free(q->parent);
	xp_strv_free(q->tenants, q->n_tenants);
	xp_quotas_free(q->quotas, q->n_quotas);
	free(q->engine_text);
	memset(q, 0, sizeof *q);
}

void xp_rclass_clear(struct xp_rclass *c)
{
	free(c->name);
	free(c->vendor);
	free(c->model);
	free(c->label);
	memset(c, 0, sizeof *c);
}

void xp_qset_clear(struct xp_qset *set)
{
	for (size_t i = 0; i < set->n_classes; i++)
		xp_rclass_clear(&set->classes[i]);
	free(set->classes);
	for (size_t i = 0; i < set->n_queues; i++)
		xp_queue_clear(&set->queues[i]);
	free(set->queues);
	xp_strv_free(set->notes, set->n_notes);
	memset(set, 0, sizeof *set);
}
