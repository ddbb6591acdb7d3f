/* probe.h: running a probe (a validation case's entry command, an agent's whitelisted
 * probe): an argv (never a shell) in its own process group, stdout and stderr into one
 * file descriptor up to a byte limit, killed with everything it started after a timeout. */
#ifndef XP_PROBE_H
#define XP_PROBE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "xp.h"

/* How a probe ended. */
struct xp_probe_result {
	int wstatus;     /* waitpid status of the probe (after a kill when it was killed) */
	bool timed_out;  /* killed at the timeout */
	bool cut;        /* printed more than the limit: the output was cut and the probe killed */
	bool cancelled;  /* killed because *cancel became non-zero */
	size_t bytes;    /* bytes written to the output descriptor */
};

/* Runs prog with argv and envp (stdin /dev/null), stdout and stderr into fd (at most max
 * bytes), killed with its process group after timeout_s or when cancel (may be NULL) turns
 * non-zero. 1 when it exited 0, 0 when it failed (res says how), -1 with err set when it
 * could not be started or the output could not be written. */
int xp_probe_run(const char *prog, char *const *argv, char *const *envp, int fd, double timeout_s, size_t max,
		 const atomic_int *cancel, struct xp_probe_result *res, struct xp_err *err);
/* One line saying how a failed (or passed) probe ended: "exit status 2", "timed out after 5 s". */
void xp_probe_note(const struct xp_probe_result *res, double timeout_s, size_t max, char *note, size_t len);

#endif
