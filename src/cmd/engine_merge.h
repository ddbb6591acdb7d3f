/* engine_merge.h: one node seen by an engine (Slurm, Kubernetes) and by a hardware source (an
 * agent, a replay, an inventory snapshot) made one: the hardware from the hardware source, the
 * node state, governance labels and allocations from the engine, disagreements as warnings
 * (xpool-internals(7), "SOURCES"). */
#ifndef XP_ENGINE_MERGE_H
#define XP_ENGINE_MERGE_H

#include <stdbool.h>

#include "model.h"

/* The engine a node was read from ("slurm", "k8s"), NULL when it was read from its hardware. */
const char *xp_engine_of(const struct xp_node *n);
/* A new node (caller frees): eng's name; hw's source, hardware (devices, topology, links, health,
 * metrics) and warnings, with eng's node state when it is not up, its governance labels and
 * facts (hw's win on a clash), its zone/rack/switch where it has them, and its allocations
 * mapped onto hw's devices (by uuid, then by vendor index, then the first free device of the
 * kind); hw's own whole-device allocations are dropped (the engine says who holds what), its
 * slices (MIG instances) kept. Counts that differ, and held devices hw lacks, are warnings
 * that name the engine; who names hw's side in them ("the agent", "the replay"). The fact
 * "engine" names eng's source. */
struct xp_node *xp_engine_merge(const struct xp_node *eng, const struct xp_node *hw, const char *who);
/* Joins hw's nodes into c by name (hashed: 10,000 nodes cost 10,000 lookups), taking every node
 * of hw (hw is left empty; free it). A node of an engine in c with the name (or, for a hardware
 * node named "host.domain", the name "host") becomes xp_engine_merge of the two; when the
 * hardware node is unreachable (an agent that is down) the engine's node stays, with a warning.
 * A hardware node on a name c holds from no engine is left out with a warning on c's node (one
 * name, two machines); one whose name c lacks is added, with a warning when c holds nodes of an
 * engine (the engine does not know it: what is in use there is not known). agents: hw's nodes
 * are agents' (the warnings say "agent URL"), else a replay's or a snapshot's. */
void xp_engine_join(struct xp_cluster *c, struct xp_cluster *hw, bool agents);

#endif
