/* sha256.h: SHA-256 digests, for evidence logs, the agent's ETags and token checks. */
#ifndef XP_SHA256_H
#define XP_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "xp.h"

/* SHA-256 (FIPS 180-4), streaming: init, update any number of times, final. */
struct xp_sha256 {
	uint32_t h[8];
	uint64_t bytes;          /* message length so far */
	unsigned char buf[64];   /* a partial block */
	size_t used;
};
/* Starts a digest. */
void xp_sha256_init(struct xp_sha256 *c);
/* Adds len bytes of data. */
void xp_sha256_update(struct xp_sha256 *c, const void *data, size_t len);
/* Ends the digest: 32 bytes into out. */
void xp_sha256_final(struct xp_sha256 *c, unsigned char out[32]);
/* 32 bytes as 64 lower-case hex digits and a NUL. */
void xp_sha256_hex(const unsigned char digest[32], char hex[65]);
/* SHA-256 of a file as 64 hex digits into hex[65]; -1 with err when it cannot be read. */
int xp_sha256_file(const char *path, char hex[65], struct xp_err *err);

#endif
