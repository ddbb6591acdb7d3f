/* validate_matrix.c: the whole matrix read at once: its string arena, the name ->
 * index maps, the cells array, and its JSON form. */
#include "validate_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model_json.h"

/* The matrix's strings, bump-allocated: 100,000 cells would otherwise be a million
 * small allocations to make and to free. */
struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

#define CHUNK_SIZE 65536

static char *arena_col(struct chunk **a, sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	if (!t)
		return NULL;
	size_t n = strlen((const char *)t); /* not column_bytes: each sqlite call takes the connection's mutex */
	if (!*a || (*a)->cap - (*a)->used < n + 1) {
		size_t cap = n + 1 > CHUNK_SIZE ? n + 1 : CHUNK_SIZE;
		struct chunk *c = xp_malloc(sizeof *c + cap);
		c->next = *a;
		c->used = 0;
		c->cap = cap;
		*a = c;
	}
	char *p = (*a)->data + (*a)->used;
	memcpy(p, t, n);
	p[n] = '\0';
	(*a)->used += n + 1;
	return p;
}

/* A name -> index map over the matrix's sorted envs or cases: open addressing, FNV-1a.
 * Results arrive in id order, not by cell, so each row looks both names up; a binary
 * search of 500 ids sharing a long "vendor:model" prefix costs more than the row. */
struct index_map {
	size_t mask;
	size_t *slot; /* index + 1; 0 is empty */
};

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static void map_init(struct index_map *map, size_t n, const char *(*name)(const void *, size_t), const void *arr)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	map->mask = cap - 1;
	map->slot = xp_calloc(cap, sizeof *map->slot);
	for (size_t i = 0; i < n; i++) {
		const char *k = name(arr, i);
		size_t h = (size_t)fnv(k, strlen(k)) & map->mask;
		while (map->slot[h])
			h = (h + 1) & map->mask;
		map->slot[h] = i + 1;
	}
}

/* The index of key (len bytes), or -1. */
static long map_find(const struct index_map *map, const char *key, size_t len,
		     const char *(*name)(const void *, size_t), const void *arr)
{
	for (size_t h = (size_t)fnv(key, len) & map->mask; map->slot[h]; h = (h + 1) & map->mask) {
		const char *k = name(arr, map->slot[h] - 1);
		if (strncmp(k, key, len) == 0 && k[len] == '\0')
			return (long)(map->slot[h] - 1);
	}
	return -1;
}

static const char *env_name(const void *arr, size_t i)
{
	return ((const struct xp_env *)arr)[i].id;
}

static const char *case_name(const void *arr, size_t i)
{
	return ((const struct xp_case *)arr)[i].name;
}

void xp_matrix_free(struct xp_matrix *m)
{
	if (!m)
		return;
	xp_env_list_free(m->envs, m->n_envs);
	xp_case_list_free(m->cases, m->n_cases);
	free(m->cells);
	for (struct chunk *c = m->arena, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(m, 0, sizeof *m);
}

/* Fills the cells: one scan of results in id order, each row overwriting its cell layer,
 * so that the latest row wins. Measured at 100,000 results this is several times faster
 * than a GROUP BY max(id) over the results_cell index, which fetches every table row
 * at random. The cells carry what the matrix shows (status, time, actor, note, node,
 * log digest); the log path, driver and firmware come with xp_validate_cell and history. */
static int matrix_fill(struct xp_store *s, struct xp_matrix *m, struct xp_err *err)
{
	sqlite3_stmt *st;
	if (xp_store_prep(s, "SELECT id, layer, status, time, actor, note, log_sha256, node, env, case_name FROM results "
			  "ORDER BY id", &st, err, "reading the matrix") < 0)
		return -1;
	struct index_map envs, cases;
	map_init(&envs, m->n_envs, env_name, m->envs);
	map_init(&cases, m->n_cases, case_name, m->cases);
	struct chunk *arena = NULL;
	long env = -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int l = sqlite3_column_int(st, 1);
		const char *eid = (const char *)sqlite3_column_text(st, 8);
		const char *cname = (const char *)sqlite3_column_text(st, 9);
		if (!eid || !cname || l < 0 || l >= XP_LAYER_COUNT)
			continue;
		size_t elen = strlen(eid), clen = strlen(cname);
		/* Bulk recording goes env by env: the last env is often the next. */
		if (env < 0 || strncmp(m->envs[env].id, eid, elen) != 0 || m->envs[env].id[elen])
			env = map_find(&envs, eid, elen, env_name, m->envs);
		long k = map_find(&cases, cname, clen, case_name, m->cases);
		/* A row of an environment or case added after we listed them: the next read shows it. */
		if (env < 0 || k < 0)
			continue;
		struct xp_evidence *e = &m->cells[(size_t)env * m->n_cases + (size_t)k].layers[l];
		e->id = sqlite3_column_int64(st, 0);
		const char *status = (const char *)sqlite3_column_text(st, 2);
		e->status = !status ? XP_V_UNTESTED : status[0] == 'p' ? XP_V_PASS : status[0] == 'f' ? XP_V_FAIL
			  : status[0] == 's' ? XP_V_STALE : XP_V_UNTESTED;
		e->time = (time_t)sqlite3_column_int64(st, 3);
		/* A superseded row's strings stay in the arena until the matrix is freed: cheaper
		 * than reading each cell's history first to find its latest row. */
		e->actor = arena_col(&arena, st, 4);
		e->note = arena_col(&arena, st, 5);
		e->log_sha256 = arena_col(&arena, st, 6);
		e->node = arena_col(&arena, st, 7);
	}
	m->arena = arena;
	free(envs.slot);
	free(cases.slot);
	return xp_store_finish(s, st, rc, err, "reading the matrix");
}

/* The cells array: 100,000 cells are 40 MiB, and faulting that in 4 KiB pages costs
 * more than reading the results. Huge pages where the kernel offers them on request
 * (transparent huge pages in "madvise" mode); plain pages otherwise. */
static struct xp_cell *cells_alloc(size_t n)
{
	size_t bytes = n * sizeof(struct xp_cell), huge = (size_t)2 << 20;
	if (bytes >= 2 * huge) {
		void *p = aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
		if (p) {
			madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
			return p;
		}
	}
	return xp_malloc(bytes);
}

int xp_validate_matrix(struct xp_store *s, struct xp_matrix *m, struct xp_err *err)
{
	memset(m, 0, sizeof *m);
	/* One read transaction: the lists and the cells are one snapshot even while another
	 * process records. Inside a caller's transaction that one already is. */
	bool own = sqlite3_get_autocommit(s->db);
	if (own && sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return xp_store_fail(s, err, "reading the matrix");
	int rc = xp_validate_env_list(s, &m->envs, &m->n_envs, err);
	if (rc == 0)
		rc = xp_validate_case_list(s, &m->cases, &m->n_cases, err);
	if (rc == 0) {
		size_t n = m->n_envs * m->n_cases;
		m->cells = n ? cells_alloc(n) : NULL;
		for (size_t i = 0; i < n; i++) {
			struct xp_cell *c = &m->cells[i];
			memset(c, 0, sizeof *c);
			c->env = i / m->n_cases;
			c->kase = i % m->n_cases;
			for (int l = 0; l < XP_LAYER_COUNT; l++)
				c->layers[l].layer = l;
		}
		rc = matrix_fill(s, m, err);
	}
	if (own)
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc < 0)
		xp_matrix_free(m);
	return rc;
}

json_t *xp_matrix_to_json(const struct xp_matrix *m)
{
	json_t *envs = json_array(), *cases = json_array(), *cells = json_array();
	for (size_t i = 0; i < m->n_envs; i++)
		json_array_append_new(envs, xp_env_to_json(&m->envs[i]));
	for (size_t i = 0; i < m->n_cases; i++)
		json_array_append_new(cases, xp_case_to_json(&m->cases[i]));
	for (size_t i = 0; i < m->n_envs * m->n_cases; i++) {
		const struct xp_cell *c = &m->cells[i];
		json_t *o = json_object(), *layers = json_object();
		json_object_set_new(o, "env", xp_json_str(m->envs[c->env].id));
		json_object_set_new(o, "case", xp_json_str(m->cases[c->kase].name));
		for (int l = 0; l < XP_LAYER_COUNT; l++)
			json_object_set_new(layers, xp_layer_name(l), xp_evidence_to_json(&c->layers[l], false));
		json_object_set_new(o, "layers", layers);
		json_array_append_new(cells, o);
	}
	json_t *doc = json_object();
	json_object_set_new(doc, "environments", envs);
	json_object_set_new(doc, "cases", cases);
	json_object_set_new(doc, "cells", cells);
	return doc;
}
