/* slurm_acct.c: what Slurm's accounting says of its queues: QOS (`sacctmgr -P -n show qos`) as
 * queues with quotas, and fair-share (`sshare -a -P -l`) as notes of the queue set. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "qmodel.h"
#include "slurm.h"

#define QOS_FIELDS 6 /* XP_SLURM_QOS_FORMAT */
#define MAX_NOTES 200 /* fair-share notes kept; a site with more accounts gets a count */

/* Splits line (modified) at '|' into at most max fields; the count. */
static size_t split_bars(char *line, char **f, size_t max)
{
	size_t n = 0;
	for (char *p = line; n < max;) {
		f[n++] = p;
		if (n == max) /* the rest, '|' and all: the caller sees a field too many */
			break;
		char *bar = strchr(p, '|');
		if (!bar)
			break;
		*bar = '\0';
		p = bar + 1;
	}
	return n;
}

/* The class a TRES name is counted in ("gres/gpu" gpu, "gres/gpu:h100" gpu.h100, "cpu", "mem"),
 * added to set when new; *res its resource. NULL when no quota of the model counts it (node,
 * billing, energy, licenses, a GRES that is no accelerator). */
static const char *tres_class(struct xp_qset *set, const char *tres, int *res, char *buf, size_t size)
{
	const char *vendor = NULL, *model = NULL;
	char type[128] = "";
	if (strcmp(tres, "cpu") == 0 || strcmp(tres, "mem") == 0) {
		snprintf(buf, size, "%s", tres);
		*res = tres[0] == 'c' ? XP_RES_CPUS : XP_RES_MEMORY;
	} else if (strncmp(tres, "gres/", 5) == 0) {
		const char *name = tres + 5;
		size_t nl = strcspn(name, ":");
		char gname[64];
		if (nl == 0 || nl >= sizeof gname)
			return NULL;
		memcpy(gname, name, nl);
		gname[nl] = '\0';
		if (!xp_slurm_gres_is_device(gname))
			return NULL;
		if (name[nl] == ':')
			snprintf(type, sizeof type, "%s", name + nl + 1);
		vendor = xp_slurm_gres_vendor(gname, type);
		model = type[0] ? type : NULL;
		if ((size_t)snprintf(buf, size, "%s%s%.*s", gname, type[0] ? "." : "", XP_QNAME_MAX, type) >= size)
			return NULL;
		*res = XP_RES_DEVICES;
	} else
		return NULL;
	if (xp_qname_check(buf, "class", NULL) < 0)
		return NULL;
	if (!xp_qset_class(set, buf)) {
		set->classes = xp_realloc(set->classes, (set->n_classes + 1) * sizeof *set->classes);
		struct xp_rclass *c = &set->classes[set->n_classes++];
		*c = (struct xp_rclass){.name = xp_strdup(buf), .builtin = *res != XP_RES_DEVICES};
		c->vendor = vendor ? xp_strdup(vendor) : NULL;
		c->model = model ? xp_strdup(model) : NULL;
	}
	return buf;
}

/* A TRES count as milli-units of the model: memory in GiB (Slurm writes MB, or a K/M/G/T/P
 * suffix), the rest as counted. -1 when not a count. */
static int64_t tres_amount(const char *v, int res)
{
	char *end;
	if (!isdigit((unsigned char)*v))
		return -1;
	double x = strtod(v, &end);
	double mib = 1;
	if (res == XP_RES_MEMORY) {
		switch (*end) {
		case 'K': mib = 1.0 / 1024; end++; break;
		case 'M': end++; break;
		case '\0': break;
		case 'G': mib = 1024; end++; break;
		case 'T': mib = 1024.0 * 1024; end++; break;
		case 'P': mib = 1024.0 * 1024 * 1024; end++; break;
		default: return -1;
		}
		x = x * mib / 1024; /* GiB */
	}
	if (*end || x < 0 || x > (double)XP_QUOTA_MAX_UNITS)
		return -1;
	return (int64_t)(x * 1000 + 0.5);
}

/* GrpTRES ("cpu=64,gres/gpu=16,gres/gpu:h100=8,node=4") into q's quotas: the most the QOS's
 * running jobs hold together, a hard limit (deserved = max, nothing borrowed or lent). What
 * no quota counts is added to *rest. -1 with err on a malformed entry. */
static int grp_tres(struct xp_qset *set, struct xp_queue *q, const char *v, char **rest, struct xp_err *err)
{
	char *copy = xp_strdup(v);
	int rc = 0;
	for (char *s = copy; *s && rc == 0;) {
		size_t l = strcspn(s, ",");
		char *next = s + l + (s[l] == ',');
		s[l] = '\0';
		char *eq = strchr(s, '=');
		if (!eq || eq == s) {
			rc = xp_errf(err, "GrpTRES: '%.60s' is not TRES=COUNT", s);
			break;
		}
		*eq = '\0';
		char buf[XP_QNAME_MAX + 1];
		int res = 0;
		const char *cls = tres_class(set, s, &res, buf, sizeof buf);
		int64_t m = cls ? tres_amount(eq + 1, res) : 0;
		if (cls && m < 0) {
			rc = xp_errf(err, "GrpTRES: %s='%.40s' is not a count", s, eq + 1);
			break;
		}
		if (cls) {
			q->quotas = xp_realloc(q->quotas, (q->n_quotas + 1) * sizeof *q->quotas);
			q->quotas[q->n_quotas++] = (struct xp_quota){.rclass = xp_strdup(cls), .res = res, .guaranteed = 0,
								     .deserved = m, .max = m, .borrowing_limit = 0,
								     .lending_limit = 0};
		} else {
			char *r = xp_asprintf("%s%s%s=%s", *rest ? *rest : "", *rest ? "," : "", s, eq + 1);
			free(*rest);
			*rest = r;
		}
		s = next;
	}
	free(copy);
	return rc;
}

int xp_slurm_parse_qos(const char *text, size_t len, const char *what, struct xp_qset *set, struct xp_err *err)
{
	size_t line_no = 0, pos = 0;
	int rc = 0;
	while (pos < len && rc == 0) {
		const char *s;
		size_t l;
		int nl = xp_slurm_next_line(text, len, &pos, &s, &l);
		line_no++;
		if (l == 0)
			continue;
		rc = xp_slurm_line_check(s, l, nl, err);
		if (rc == 0 && set->n_queues >= 100000)
			rc = xp_errf(err, "more than 100000 queues");
		if (rc < 0)
			break;
		char *copy = xp_strndup(s, l);
		char *f[QOS_FIELDS];
		size_t nf = split_bars(copy, f, QOS_FIELDS);
		char *name = NULL, *end, *rest = NULL;
		long long prio = 0;
		struct xp_queue q = {0};
		if (nf != QOS_FIELDS || strchr(f[QOS_FIELDS - 1], '|'))
			rc = xp_errf(err, "%s%zu fields, not %d ('|'-separated %s)", nf == QOS_FIELDS ? "more than " : "",
				     nf, QOS_FIELDS, XP_SLURM_QOS_FORMAT);
		else if (xp_qname_check(f[0], "field 1 (QOS name)", err) < 0)
			rc = -1;
		else if (*f[1] && ((prio = strtoll(f[1], &end, 10)) < 0 || *end || prio > 4294967295LL))
			rc = xp_errf(err, "field 2 (priority): '%.40s' is not a number", f[1]);
		else if (strlen(f[0]) + 4 > XP_QNAME_MAX)
			rc = xp_errf(err, "field 1 (QOS name): '%.40s' is too long for a queue name", f[0]);
		if (rc == 0) {
			name = xp_asprintf("qos.%s", f[0]);
			if (xp_qset_queue(set, name))
				rc = xp_errf(err, "QOS %s is listed twice", f[0]);
		}
		if (rc == 0) {
			q.name = name;
			name = NULL;
			q.weight = 1.0;
			q.priority = prio > 2147483647LL ? 2147483647 : (int)prio;
			q.order = XP_QO_BEST_EFFORT;
			q.state = XP_QS_OPEN;
			q.within = XP_QP_NEVER;
			q.reclaim = XP_QP_NEVER;
			rc = grp_tres(set, &q, f[2], &rest, err);
		}
		if (rc == 0) {
			/* What the queue model has no field for, in Slurm's words. */
			char *t = xp_asprintf("Slurm QOS %s%s%s%s%s%s%s%s%s", f[0], rest ? "; GrpTRES also " : "",
					      rest ? rest : "", *f[3] ? "; MaxTRESPerUser " : "", f[3],
					      *f[4] ? "; MaxWall " : "", f[4], *f[5] ? "; preempts " : "", f[5]);
			q.engine_text = xp_mask_controls(t);
			set->queues = xp_realloc(set->queues, (set->n_queues + 1) * sizeof *set->queues);
			set->queues[set->n_queues++] = q;
		} else
			xp_queue_clear(&q);
		free(rest);
		free(name);
		free(copy);
	}
	if (rc < 0)
		xp_err_prefix(err, "%s: line %zu", what, line_no);
	return rc;
}

/* The column called name in a header's fields; -1 when absent. */
static int column(char **h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(h[i], name) == 0)
			return (int)i;
	return -1;
}

int xp_slurm_parse_sshare(const char *text, size_t len, const char *what, struct xp_qset *set, struct xp_err *err)
{
	size_t line_no = 0, pos = 0, rows = 0, cut = 0;
	int rc = 0;
	char *header = NULL, *h[64];
	size_t nh = 0;
	int ca = -1, cu = -1, cf = -1, cn = -1, ce = -1;
	while (pos < len && rc == 0) {
		const char *s;
		size_t l;
		int nl = xp_slurm_next_line(text, len, &pos, &s, &l);
		line_no++;
		if (l == 0)
			continue;
		if ((rc = xp_slurm_line_check(s, l, nl, err)) < 0)
			break;
		if (!header) {
			/* The header names the columns: sshare's -l adds some, versions others. */
			header = xp_strndup(s, l);
			nh = split_bars(header, h, 64);
			ca = column(h, nh, "Account");
			cu = column(h, nh, "User");
			cf = column(h, nh, "FairShare");
			cn = column(h, nh, "NormShares");
			ce = column(h, nh, "EffectvUsage");
			if (ca < 0 || cu < 0 || cf < 0)
				rc = xp_errf(err, "the header has no Account, User and FairShare columns: '%.*s'",
					     (int)(l < 60 ? l : 60), s);
			continue;
		}
		char *copy = xp_strndup(s, l);
		char *f[64];
		size_t nf = split_bars(copy, f, 64);
		if (nf != nh) {
			rc = xp_errf(err, "%zu fields, not %zu as the header", nf, nh);
			free(copy);
			break;
		}
		/* Accounts are indented by their depth in the tree. */
		const char *acct = f[ca];
		while (*acct == ' ')
			acct++;
		const char *fs = f[cf];
		/* The root and accounts without a factor of their own (sshare leaves it empty). */
		if (*fs && strcmp(acct, "root") != 0) {
			if (rows < MAX_NOTES) {
				char *n = xp_asprintf("fair-share %s%s%s: %s (NormShares %s, EffectvUsage %s)", acct,
						      *f[cu] ? "/" : "", f[cu], fs, cn >= 0 && *f[cn] ? f[cn] : "-",
						      ce >= 0 && *f[ce] ? f[ce] : "-");
				xp_strv_add(&set->notes, &set->n_notes, xp_mask_controls(n));
				free(n);
			} else
				cut++;
			rows++;
		}
		free(copy);
	}
	if (rc == 0 && !header)
		rc = xp_errf(err, "no header line");
	if (rc == 0 && rows == 0)
		xp_strv_add(&set->notes, &set->n_notes, "fair-share not available (sshare lists no association: no accounting)");
	if (rc == 0 && cut) {
		char *n = xp_asprintf("fair-share: %zu more associations not listed", cut);
		xp_strv_add(&set->notes, &set->n_notes, n);
		free(n);
	}
	free(header);
	if (rc < 0)
		xp_err_prefix(err, "%s: line %zu", what, line_no);
	return rc;
}
