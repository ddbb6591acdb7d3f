/* run.h: running a vendor tool safely: an argv (never a shell), a timeout, a
 * bounded output size and a clean environment. */
#ifndef XP_RUN_H
#define XP_RUN_H

#include <stdbool.h>
#include <stddef.h>

/* Runs argv[0] (found on PATH when it has no '/') with argv; captures at most max_out
 * bytes of stdout (stderr is discarded). 0 with *out (free()) on exit status 0;
 * -1 with err set on a missing program, a timeout, too much output or a failure. */
int xp_run_tool(const char *const *argv, double timeout_s, size_t max_out, char **out, size_t *len,
		char *err, size_t errlen);
/* xp_run_tool with the NAME=value settings of env (NULL-terminated, at most 12; NULL for
 * none) added to the clean environment. */
int xp_run_tool_env(const char *const *argv, const char *const *env, double timeout_s, size_t max_out,
		    char **out, size_t *len, char *err, size_t errlen);
/* xp_run_tool_env with stderr read too (merged into *out, in order) and any exit status
 * kept in *status with the output: for a tool whose refusal is its answer (sbatch
 * --test-only). -1 only on a missing program, a timeout, too much output or a signal. */
int xp_run_tool_answer(const char *const *argv, const char *const *env, double timeout_s, size_t max_out,
		       char **out, size_t *len, int *status, char *err, size_t errlen);
/* Finds a program on PATH (or the safe default path when PATH is unset); caller frees. */
char *xp_which(const char *prog);

#endif
