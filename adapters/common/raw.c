/* raw.c: helpers for the raw records every adapter fills (compiled into each adapter). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_adapter.h"

void xp_raw_device_init(struct xp_raw_device *d)
{
	/* The process slots (most of the record) are cleared one by one as they are taken
	 * (xp_raw_add_proc): `sim gen` inits millions of devices. */
	memset(d, 0, offsetof(struct xp_raw_device, procs));
	d->procs_left_out = 0;
	d->index = -1;
	d->memory_total_mib = d->memory_used_mib = -1;
	d->temperature_c = d->power_w = d->power_limit_w = d->utilization_pct = NAN;
	d->ecc_corrected = d->ecc_uncorrected = d->retired_pages = -1;
	d->mig_mode = -1;
	d->numa = -1;
	d->n_procs = -1;
}

void xp_raw_node_init(struct xp_raw_node *n)
{
	memset(n, 0, sizeof *n);
}

void xp_raw_warn(struct xp_raw_node *n, const char *fmt, ...)
{
	if (n->n_warnings >= XP_RAW_MAX_WARNINGS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(n->warnings[n->n_warnings++], sizeof n->warnings[0], fmt, ap);
	va_end(ap);
}

void xp_raw_set(char *dst, size_t size, const char *src, size_t len)
{
	if (!size)
		return;
	if (!src)
		len = 0;
	while (len && (*src == ' ' || *src == '\t' || *src == '\r' || *src == '\n')) {
		src++;
		len--;
	}
	while (len && (src[len - 1] == ' ' || src[len - 1] == '\t' || src[len - 1] == '\r' ||
		       src[len - 1] == '\n'))
		len--;
	if (len >= size)
		len = size - 1;
	if (len)
		memcpy(dst, src, len);
	dst[len] = '\0';
}

void xp_raw_add_reason(struct xp_raw_device *d, const char *reason)
{
	/* One reason once: NVML and the XML can both say "HW slowdown" of one device. */
	for (int i = 0; i < d->n_reasons; i++)
		if (strcmp(d->reasons[i], reason) == 0)
			return;
	if (d->n_reasons < XP_RAW_MAX_REASONS)
		xp_raw_set(d->reasons[d->n_reasons++], sizeof d->reasons[0], reason, strlen(reason));
}

struct xp_raw_slice *xp_raw_add_slice(struct xp_raw_node *node, struct xp_raw_device *d, const char *what)
{
	if (d->n_slices >= XP_RAW_MAX_SLICES) {
		xp_raw_warn(node, "GPU %d: more than %d %s; the rest are left out", d->index, XP_RAW_MAX_SLICES, what);
		return NULL;
	}
	struct xp_raw_slice *s = &d->slices[d->n_slices++];
	memset(s, 0, sizeof *s);
	/* Unknown until the tool says: 0 is a real instance id and a real size. */
	s->gpu_instance = s->compute_instance = -1;
	s->memory_mib = -1;
	return s;
}

struct xp_raw_proc *xp_raw_add_proc(struct xp_raw_node *node, struct xp_raw_device *d, const char *unit)
{
	if (d->n_procs < 0)
		d->n_procs = 0;
	if (d->n_procs >= XP_RAW_MAX_PROCS) {
		if (d->procs_left_out++ == 0)
			xp_raw_warn(node, "%s %d: more than %d processes; the rest are left out", unit, d->index,
				    XP_RAW_MAX_PROCS);
		return NULL;
	}
	struct xp_raw_proc *p = &d->procs[d->n_procs++];
	memset(p, 0, sizeof *p);
	p->pid = -1;
	p->memory_mib = -1;
	p->util_pct = NAN;
	return p;
}

void xp_raw_copy_fresh(struct xp_raw_device *d, const struct xp_raw_device *f, bool metrics)
{
	if (metrics) {
		/* Processes come and go between reads: the fresh list replaces the old one. */
		d->n_procs = f->n_procs;
		d->procs_left_out = f->procs_left_out;
		if (f->n_procs > 0)
			memcpy(d->procs, f->procs, (size_t)f->n_procs * sizeof d->procs[0]);
		d->memory_total_mib = f->memory_total_mib;
		d->memory_used_mib = f->memory_used_mib;
		d->temperature_c = f->temperature_c;
		d->power_w = f->power_w;
		d->power_limit_w = f->power_limit_w;
		d->utilization_pct = f->utilization_pct;
	} else {
		memcpy(d->health, f->health, sizeof d->health);
		memcpy(d->reasons, f->reasons, sizeof d->reasons);
		d->n_reasons = f->n_reasons;
	}
	d->ecc_corrected = f->ecc_corrected;
	d->ecc_uncorrected = f->ecc_uncorrected;
	d->retired_pages = f->retired_pages;
}

int xp_raw_reread(struct xp_raw_node *node, bool metrics, int (*read)(void *st, struct xp_raw_node *fresh),
		  void *st, const char *unit, char *err, size_t errlen)
{
	/* A node holds up to XP_RAW_MAX_DEVICES devices inline: too large for an adapter's stack. */
	struct xp_raw_node *fresh = malloc(sizeof *fresh);
	if (!fresh) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	xp_raw_node_init(fresh);
	if (read(st, fresh) < 0) {
		free(fresh);
		return -1;
	}
	for (int i = 0; i < node->n_devices; i++) {
		struct xp_raw_device *d = &node->devices[i];
		const struct xp_raw_device *f = NULL;
		for (int k = 0; k < fresh->n_devices && !f; k++)
			if (fresh->devices[k].index == d->index)
				f = &fresh->devices[k];
		if (f)
			xp_raw_copy_fresh(d, f, metrics);
		else
			xp_raw_warn(node, "%s%d is no longer listed", unit, d->index);
	}
	free(fresh);
	return 0;
}
