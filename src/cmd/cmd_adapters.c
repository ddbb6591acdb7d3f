/* cmd_adapters.c: `xpool adapters [--json] [-v]`: each vendor adapter and its state. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "adapters.h"
#include "cmd.h"
#include "model_json.h"
#include "table.h"

/* Accelerators no active adapter claims: named by vendor and PCI id alone. */
static size_t generic_count(const struct xp_adapters *a, const struct xp_node *n)
{
	size_t k = 0;
	for (size_t i = 0; n && i < n->n_devices; i++) {
		unsigned v = 0, dev = 0;
		const struct xp_device *d = &n->devices[i];
		if (!d->pci_id || sscanf(d->pci_id, "%x:%x", &v, &dev) != 2)
			continue;
		bool claimed = false;
		for (size_t s = 0; s < a->n && !claimed; s++)
			claimed = a->slots[s].state == XP_AD_ACTIVE && a->slots[s].manifest &&
				  xp_manifest_has_vendor(a->slots[s].manifest, v);
		k += !claimed;
	}
	return k;
}

static void detail(const struct xp_adapter_slot *s, char *buf, size_t len)
{
	if (s->state == XP_AD_ACTIVE)
		snprintf(buf, len, "%d device%s", s->raw ? s->raw->n_devices : 0,
			 s->raw && s->raw->n_devices == 1 ? "" : "s");
	else if (s->state == XP_AD_IDLE)
		snprintf(buf, len, "no matching hardware%s%s", s->reason[0] ? ": " : "", s->reason);
	else
		snprintf(buf, len, "%s", s->reason);
}

static int adapters_exec(struct xp_ctx *ctx, const struct xp_args *args)
{
	(void)args;
	struct xp_adapters a;
	xp_adapters_open(&a, ctx->replay);
	xp_adapters_enumerate(&a);
	/* The generic count needs the PCI view of the same machine (or replay). */
	struct xp_cluster *c = ctx->inventory ? NULL : xp_ctx_cluster(ctx);
	const struct xp_node *node = c && c->n_nodes ? c->nodes[0] : NULL;
	size_t generic = generic_count(&a, node);
	char buf[1100];
	if (ctx->json) {
		json_t *list = json_array();
		for (size_t i = 0; i < a.n; i++) {
			const struct xp_adapter_slot *s = &a.slots[i];
			json_t *o = json_object();
			detail(s, buf, sizeof buf);
			json_object_set_new(o, "name", json_string(s->name));
			json_object_set_new(o, "state", json_string(xp_adapter_state_name(s->state)));
			json_object_set_new(o, "devices", json_integer(s->state == XP_AD_ACTIVE && s->raw ? s->raw->n_devices : 0));
			json_object_set_new(o, "detail", xp_json_str(buf));
			json_object_set_new(o, "library", xp_json_str(s->so_path));
			json_object_set_new(o, "manifest", xp_json_str(s->manifest_path));
			json_array_append_new(list, o);
		}
		json_t *g = json_object();
		json_object_set_new(g, "name", json_string("generic"));
		json_object_set_new(g, "state", json_string(generic ? "active" : "idle"));
		json_object_set_new(g, "devices", json_integer((json_int_t)generic));
		json_object_set_new(g, "detail", json_string("built in: accelerators named by vendor and PCI id"));
		json_object_set_new(g, "library", json_null());
		json_object_set_new(g, "manifest", json_null());
		json_array_append_new(list, g);
		xp_print_json_list(ctx->out, "adapters", list);
	} else {
		struct xp_table t;
		xp_table_init(&t, ctx->verbose ? 4 : 3);
		if (ctx->verbose)
			xp_table_row(&t, "ADAPTER", "STATE", "DETAIL", "LOADED FROM");
		else
			xp_table_row(&t, "ADAPTER", "STATE", "DETAIL");
		for (size_t i = 0; i < a.n; i++) {
			const struct xp_adapter_slot *s = &a.slots[i];
			detail(s, buf, sizeof buf);
			if (ctx->verbose)
				xp_table_row(&t, s->name, xp_adapter_state_name(s->state), buf, s->so_path);
			else
				xp_table_row(&t, s->name, xp_adapter_state_name(s->state), buf);
		}
		snprintf(buf, sizeof buf, "%zu device%s named by vendor and PCI id", generic, generic == 1 ? "" : "s");
		if (ctx->verbose)
			xp_table_row(&t, "generic", generic ? "active" : "idle", buf, "built in");
		else
			xp_table_row(&t, "generic", generic ? "active" : "idle", buf);
		xp_table_print(&t, ctx->out, "");
		xp_table_free(&t);
		if (ctx->verbose) {
			char **dirs;
			size_t nd = xp_adapter_dirs(&dirs);
			fprintf(ctx->out, "\nsearch path:\n");
			for (size_t i = 0; i < nd; i++)
				fprintf(ctx->out, "  %s\n", dirs[i]);
			xp_strv_free(dirs, nd);
		}
	}
	xp_adapters_close(&a);
	return XP_EXIT_OK;
}

const struct xp_cmd_entry xp_cmd_adapters_entry = {
	.name = "adapters",
	.alias = NULL,
	.usage = "[--json] [-v]",
	.summary = "list the vendor adapters and their state (active, idle, unavailable, ...)",
	.opts = NULL,
	.min_args = 0,
	.max_args = 0,
	.exec = adapters_exec,
	.json = true,
};
