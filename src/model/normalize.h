/* normalize.h: turning what adapters report (raw inventory) into the model:
 * matching vendor devices to the hwloc view, naming models from the manifests,
 * effective compute units, health with reasons, affinity groups and links.
 *
 * ECU (effective compute units) makes vendors comparable: one ECU is one dense
 * bf16/fp16 TFLOPS. ECU = peak(precision) x conversion x coefficient, where the
 * precision is the model's (or the adapter's) ecu_precision, by default bf16
 * (then fp16) for training-class parts and int8 for inference-class parts; the
 * conversion is 1 for bf16, fp16, tf32 and fp32 peaks and 1/2 for int8 and fp8
 * peaks (they run twice as many operations as 16-bit on the same silicon); the
 * coefficient is the manifest's default until a stored benchmark baseline
 * overrides it (xp_normalize_set_coefficient_hook). */
#ifndef XP_NORMALIZE_H
#define XP_NORMALIZE_H

#include "manifest.h"
#include "model.h"
#include "xp_adapter.h"

/* A stored benchmark baseline for (model, driver), or NAN when there is none. */
typedef double (*xp_coefficient_fn)(const char *model, const char *driver, void *arg);

/* Installs the lookup of stored baselines for the calling thread (the store sets it; NULL removes it). */
void xp_normalize_set_coefficient_hook(xp_coefficient_fn fn, void *arg);

/* Applies the calling thread's stored baselines (see the hook) to a node counted elsewhere (an
 * agent's, with its manifests' coefficients): each device's ECU is counted again from the peak
 * it was counted with. Nothing changes without a hook or a baseline for (model, driver). */
void xp_normalize_rebase(struct xp_node *n);
/* Merges one adapter's report into node using its manifest; adapter names the source in warnings. */
void xp_normalize_merge(struct xp_node *node, const struct xp_raw_node *raw, const struct xp_manifest *m,
			const char *adapter);
/* Health of one device from its measurements against the thresholds (warn, crit), keeping
 * what the vendor already said; exposed for tests. */
void xp_normalize_health(struct xp_device *d, double temp_warn, double temp_crit, double power_warn,
			 double power_crit);
/* Rewrites a PCI bus id the way hwloc spells it ("00000000:3B:00.0" -> "0000:3b:00.0"); false if not one. */
bool xp_normalize_bus_id(const char *in, char *out, size_t len);
/* True when two names of one device name different products: each holds a product token
 * (letters and digits: H100, M2075, K40m; not 80GB, HBM3, SXM5) and they share none. */
bool xp_normalize_names_disagree(const char *a, const char *b);
/* Gives each device of n that has no affinity group (an inventory written without them) the
 * group discovery would: its model's rule in the manifests ms[0..nm), the [layout] the node's
 * count of the model selects, by device index (a card: consecutive indices). */
void xp_normalize_groups(struct xp_node *n, const struct xp_manifest *const *ms, size_t nm);
/* xp_normalize_groups on the node in *slot, a cluster's; a node that other clusters share
 * (refcounted) and that would change is replaced in *slot by a changed copy first. */
void xp_normalize_groups_cow(struct xp_node **slot, const struct xp_manifest *const *ms, size_t nm);
/* Sets the node's facts labels (accelerator vendor, model, driver) from its devices. */
void xp_normalize_facts(struct xp_node *node);

#endif
