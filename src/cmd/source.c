/* source.c: picks the backends for a run and hands back a cluster. */
#include "source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapters.h"
#include "agent_client.h"
#include "engine_merge.h"
#include "files.h"
#include "k8s_nodes.h"
#include "k8s_watch.h"
#include "local/local.h"
#include "normalize.h"
#include "slurm.h"
#include "snapshot.h"
#include "store.h"

/* True when an adapter gave up because a file of the replay directory could not be read: its
 * reason names the file, "DIR/NAME: why" (a link refused, no permission; files.h). A missing
 * file is an idle adapter, not this. */
static bool replay_refused(const char *replay, const char *reason)
{
	size_t l = replay ? strlen(replay) : 0;
	return l && strncmp(reason, replay, l) == 0 && reason[l] == '/';
}

void xp_source_adapters(struct xp_node *n, const char *replay)
{
	struct xp_adapters a;
	xp_adapters_open(&a, replay);
	xp_adapters_enumerate(&a);
	for (size_t i = 0; i < a.n; i++) {
		struct xp_adapter_slot *s = &a.slots[i];
		if (s->state == XP_AD_ACTIVE && s->raw)
			xp_normalize_merge(n, s->raw, s->manifest, s->name);
		/* An absent vendor is silent; a broken adapter or a vendor tool that fails is a
		 * problem with this node, and `health` and the console must say so. */
		else if (s->state == XP_AD_BROKEN ||
			 (s->state == XP_AD_UNAVAILABLE && (strncmp(s->reason, "enumerate:", 10) == 0 ||
							    replay_refused(replay, s->reason)))) {
			char *w = xp_asprintf("adapter %s %s: %s", s->name, xp_adapter_state_name(s->state), s->reason);
			xp_strv_add_once(&n->warnings, &n->n_warnings, w);
			free(w);
		}
	}
	xp_adapters_close(&a);
}

/* The node's name in a replay directory: its hostname file, else the directory's name; NULL
 * with err when the hostname file is there but may not be read (a link, not a regular file). */
static char *replay_name(const char *dir, struct xp_err *err)
{
	size_t len;
	char *text = NULL;
	if (xp_read_beneath(dir, "hostname", 4096, &text, &len, err) < 0)
		return NULL;
	if (text) {
		size_t k = strcspn(text, "\r\n");
		text[k] = '\0';
		char *s = text;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s) {
			char *name = xp_strndup(s, XP_MAX_NODE_NAME);
			free(text);
			return name;
		}
		free(text);
	}
	/* No hostname file: the directory's own name, resolved so that `.` or `..` name the
	 * directory they stand for. */
	char *real = realpath(dir, NULL);
	const char *d = real ? real : dir;
	size_t l = strlen(d);
	while (l > 1 && d[l - 1] == '/')
		l--;
	const char *b = d + l;
	while (b > d && b[-1] != '/')
		b--;
	bool named = l > (size_t)(b - d) && !(l - (size_t)(b - d) <= 2 && b[0] == '.') && b[0] != '/';
	char *name = named ? xp_strndup(b, l - (size_t)(b - d)) : xp_strdup("node");
	free(real);
	return name;
}

static struct xp_node *load_replay(const struct xp_source_opts *o, struct xp_err *err)
{
	struct stat st;
	if (stat(o->replay, &st) < 0) {
		xp_errf(err, "%s: %s", o->replay, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		xp_errf(err, "%s: not a directory (a replay is a directory of recorded outputs)", o->replay);
		return NULL;
	}
	char *xml = o->topology ? xp_strdup(o->topology) : xp_asprintf("%s/hwloc.xml", o->replay);
	/* The directory may come from anyone: its own hwloc.xml is read without leaving it (no link
	 * followed: files.h); a --topology the user named is read as it is. */
	char *text = NULL;
	size_t len = 0;
	int got = o->topology ? 1 : xp_read_beneath(o->replay, "hwloc.xml", XP_TOPOLOGY_MAX_BYTES, &text, &len, err);
	struct xp_node *n = NULL;
	if (got > 0) {
		struct xp_local_opts lo = {.topology_xml = xml, .topology_text = text, .topology_len = len};
		n = xp_local_discover(&lo, err);
	} else if (got == 0) {
		/* No topology recorded: the node is what the vendor tools say, without PCI locality. */
		n = xp_node_new("node");
	}
	free(text);
	free(xml);
	if (!n)
		return NULL;
	char *name = replay_name(o->replay, err);
	if (!name) {
		xp_node_free(n);
		return NULL;
	}
	free(n->name);
	n->name = name;
	free(n->source);
	n->source = xp_asprintf("replay:%s", o->replay);
	if (!o->no_adapters)
		xp_source_adapters(n, o->replay);
	xp_node_clean(n);
	return n;
}

/* The engine's cluster with the hardware of a replay or an inventory snapshot joined in by node
 * name (xp_engine_join): an engine knows what is held, the recorded outputs what is there. */
static struct xp_cluster *engine_with_hardware(const struct xp_source_opts *o, struct xp_cluster *eng,
					       struct xp_err *err)
{
	if (!eng || !(o->inventory || o->replay))
		return eng;
	struct xp_source_opts ho = {.inventory = o->inventory, .replay = o->replay, .topology = o->topology,
				    .no_adapters = o->no_adapters};
	struct xp_cluster *hw = xp_source_load(&ho, err);
	if (!hw) {
		xp_cluster_free(eng);
		return NULL;
	}
	xp_engine_join(eng, hw, false);
	xp_cluster_free(hw);
	return eng;
}

struct xp_cluster *xp_source_load(const struct xp_source_opts *o, struct xp_err *err)
{
	if (o->inventory && (o->topology || o->replay)) {
		xp_errf(err, "--inventory and --%s both name a source; give one", o->topology ? "topology" : "replay");
		return NULL;
	}
	if (o->slurm && xp_source_has_k8s(o)) {
		xp_errf(err, "--slurm and --k8s both name a source; give one");
		return NULL;
	}
	/* With an engine, a replay (one node's recorded outputs, its --topology with it) or an
	 * inventory snapshot gives the hardware of the nodes it names; a topology file alone names
	 * no node of the engine. */
	if ((o->slurm || xp_source_has_k8s(o)) && o->topology && !o->replay) {
		xp_errf(err, "--%s and --topology: a topology file goes with --replay here (it names no node)",
			o->slurm ? "slurm" : "k8s");
		return NULL;
	}
	if (o->slurm)
		return engine_with_hardware(o, xp_slurm_load(o->slurm, err), err);
	if (xp_source_has_k8s(o)) {
		/* The console keeps what it listed and watches for changes (live.c); a command lists. */
		if (o->k8s_watch)
			return engine_with_hardware(o, xp_k8s_watch_cluster(o->k8s_watch, err), err);
		struct xp_k8s_opts ko = {.server = o->k8s_server, .token_file = o->k8s_token_file, .ca_file = o->k8s_ca};
		return engine_with_hardware(o, xp_k8s_load(&ko, err), err);
	}
	if (o->inventory) {
		struct xp_cluster *c = xp_snapshot_load(o->inventory, err);
		for (size_t i = 0; c && i < c->n_nodes; i++)
			c->nodes[i]->from_file = xp_strdup(o->inventory);
		return c;
	}
	struct xp_node *n;
	if (o->replay) {
		n = load_replay(o, err);
	} else {
		struct xp_local_opts lo = {.topology_xml = o->topology};
		n = xp_local_discover(&lo, err);
		/* The tools on this machine describe this machine: not a topology file from elsewhere. */
		const char *env = getenv("HWLOC_XMLFILE");
		bool live = !o->topology && !(env && *env);
		if (n && live && !o->no_adapters) {
			xp_source_adapters(n, NULL);
			xp_node_clean(n);
		}
		if (n && !live)
			n->from_file = xp_strdup(o->topology ? o->topology : env);
	}
	if (!n)
		return NULL;
	struct xp_cluster *c = xp_cluster_new();
	xp_cluster_add(c, n);
	return c;
}

bool xp_source_has_k8s(const struct xp_source_opts *o)
{
	return o->k8s || o->k8s_server || o->k8s_token_file || o->k8s_ca;
}

bool xp_source_has_agents(const struct xp_source_opts *o)
{
	return (o->agents && *o->agents) || o->agents_file;
}

bool xp_source_has_base(const struct xp_source_opts *o)
{
	return o->topology || o->inventory || o->replay || o->slurm || xp_source_has_k8s(o) || !xp_source_has_agents(o);
}

struct xp_agent_pool *xp_source_agent_pool(const struct xp_source_opts *o, struct xp_err *err)
{
	struct xp_agent_pool_opts po = {.timeout_s = o->agent_timeout, .ca_file = o->agent_ca};
	/* A connection that takes more than a second on a cluster network is not coming. */
	po.connect_timeout_s = o->agent_timeout > 0 && o->agent_timeout < 2 ? o->agent_timeout : 2;
	struct xp_agent_pool *p = xp_agent_pool_new(&po);
	if (o->agents_file && xp_agent_pool_load_file(p, o->agents_file, o->agent_token, err) < 0) {
		xp_agent_pool_free(p);
		return NULL;
	}
	for (const char *s = o->agents; s && *s;) {
		size_t l = strcspn(s, "\n");
		char *url = xp_strndup(s, l);
		int rc = *url ? xp_agent_pool_add(p, url, o->agent_token, err) : 0;
		free(url);
		if (rc < 0) {
			xp_agent_pool_free(p);
			return NULL;
		}
		s += l + (s[l] == '\n');
	}
	return p;
}

/* Names the database's state (its and its WAL's identity, size and time): the stored baselines
 * an agent's node was rebased with are those of this state. 0 without a database. */
static uint64_t db_basis(const char *db)
{
	if (!db)
		return 0;
	uint64_t h = 1469598103934665603ULL;
	for (int k = 0; k < 2; k++) {
		char *path = k ? xp_asprintf("%s-wal", db) : xp_strdup(db);
		struct stat st;
		uint64_t v[5] = {0};
		if (stat(path, &st) == 0)
			v[0] = (uint64_t)st.st_dev, v[1] = (uint64_t)st.st_ino, v[2] = (uint64_t)st.st_size,
			v[3] = (uint64_t)st.st_mtim.tv_sec, v[4] = (uint64_t)st.st_mtim.tv_nsec;
		free(path);
		for (int i = 0; i < 5; i++)
			h = (h ^ v[i]) * 1099511628211ULL;
	}
	return h;
}

void xp_source_merge_agents(struct xp_cluster *c, struct xp_agent_pool *p, time_t now, uint64_t basis)
{
	/* The agents' nodes that did not change since the last cluster are the same nodes, shared:
	 * only changed ones are copied and rebased (the agent counted ECU with its own manifests;
	 * this side's measured baselines win). */
	struct xp_cluster *a = xp_agent_pool_cluster_kept(p, now, basis, xp_normalize_rebase);
	/* By name: an engine's node takes the agent's hardware, another base's keeps its own. */
	xp_engine_join(c, a, true);
	xp_cluster_free(a);
	size_t down = 0;
	xp_agent_pool_counts(p, NULL, &down);
	c->sources_down = down;
	c->generation++;
}

struct xp_cluster *xp_source_load_all(const struct xp_source_opts *o, const char *db,
				      struct xp_agent_pool *pool, struct xp_err *err)
{
	/* Stored benchmark baselines replace the manifests' default ECU coefficients when there is
	 * a database to ask; reading never creates one. */
	struct xp_err serr = {{0}};
	struct xp_store *store = db && access(db, F_OK) == 0 ? xp_store_open_existing(db, &serr) : NULL;
	xp_store_use_baselines(store);
	struct xp_cluster *c = xp_source_has_base(o) ? xp_source_load(o, err) : xp_cluster_new();
	if (c && pool)
		xp_source_merge_agents(c, pool, time(NULL), store ? db_basis(db) : 0);
	xp_store_use_baselines(NULL);
	/* A damaged baselines table would silently give the manifests' coefficients: an error. */
	if (c && store && xp_store_damage(store)) {
		xp_errf(err, "%s", xp_store_damage(store));
		xp_cluster_free(c);
		c = NULL;
	}
	xp_store_close(store);
	return c;
}
