/* model_json.h: the resource model as JSON (the "xpool.inventory/v1" document).
 *
 * The document is a stable interface that scripts read, so the encoder always
 * writes every key (null where a value is not known) and the decoder accepts
 * any document a newer xpool writes with the same schema tag: unknown keys are
 * ignored, missing keys mean "not known". Everything else is validated, because
 * snapshots and agent replies come from other machines; the first error names
 * its full JSON path ("$.nodes[0].devices[3].memory_mib: ...").
 *
 * One decoder reads every document: a streaming one (jsonpull.h) that builds the model as it
 * reads the text, in chunks from a file, with no document tree (xpool-internals(7), "The
 * inventory document"); the json_t entry points below spell their tree out and read it back.
 * xp_cluster_write streams too, with the same bytes jansson writes for xp_cluster_to_json. */
#ifndef XP_MODEL_JSON_H
#define XP_MODEL_JSON_H

#include <jansson.h>
#include <stdio.h>

#include "model.h"
#include "xp.h"

/* Schema tag; bump it only for changes that old readers would misread. */
#define XP_INVENTORY_SCHEMA "xpool.inventory/v1"

/* Encodes a whole cluster (schema tag included); the caller owns the reference. */
json_t *xp_cluster_to_json(const struct xp_cluster *c);
/* Encodes one node, as it appears in "nodes", for agents that report a single machine. */
json_t *xp_node_to_json(const struct xp_node *n);
/* Decodes and validates doc (the caller keeps its reference) with the text decoder; NULL with err set on error. */
struct xp_cluster *xp_cluster_from_json(json_t *doc, struct xp_err *err);
/* Decodes one node; path ("$.nodes[3]") starts its error messages, to point into the whole document. */
struct xp_node *xp_node_from_json(json_t *obj, const char *path, struct xp_err *err);
/* Parses len bytes of text; errors start with name (a file name) and give line:column for syntax errors. */
struct xp_cluster *xp_cluster_parse(const char *text, size_t len, const char *name,
				    struct xp_err *err);
/* As xp_cluster_parse, reading fd in chunks to its end: memory follows the model, not the text. */
struct xp_cluster *xp_cluster_read_fd(int fd, const char *name, struct xp_err *err);
/* As xp_cluster_parse without a name: "LINE:COL: ..." with *syntax set when the text is not JSON,
 * else "$.path: ..." (an agent's reply says which it was). syntax may be NULL. */
struct xp_cluster *xp_cluster_decode(const char *text, size_t len, bool *syntax, struct xp_err *err);
/* A JSON string of s, null for NULL; bytes that are not UTF-8 become U+FFFD (never fails). */
json_t *xp_json_str(const char *s);
/* A JSON integer, null when v is negative (the model's "not known"). */
json_t *xp_json_int(int64_t v);
/* A PCI class code as four hex digits ("0302"), null when not known. */
json_t *xp_json_class(int cls);

/* The type of j as decoders' messages name it: "an object", "a real number", "null". */
const char *xp_json_type_name(const json_t *j);
/* Ends out (cap bytes, cap >= 4) with "..." when n, snprintf's result, says the path was cut short. */
void xp_json_path_cut(char *out, size_t cap, int n);
/* Writes "path[i]" into out (cap bytes), cut short as xp_json_path_cut does. */
void xp_json_path_idx(char *out, size_t cap, const char *path, size_t i);

/* Writes the document and a newline to f (indented when pretty), spelled as json_dumpf would
 * spell xp_cluster_to_json's tree but streamed node by node; -1 with err set on failure. */
int xp_cluster_write(const struct xp_cluster *c, FILE *f, int pretty, struct xp_err *err);

/* The real precision (15 to 17 digits) the document of c is written with: the fewest that read back exactly. */
int xp_cluster_real_digits(const struct xp_cluster *c);

#endif
