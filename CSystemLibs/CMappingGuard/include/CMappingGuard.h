#ifndef CMAPPINGGUARD_H
#define CMAPPINGGUARD_H
#include <openssl/evp.h>
#include <stddef.h>

/*
 * Hashing a file through a memory mapping skips the kernel's copy out of the page cache, but a file that
 * another process truncates meanwhile turns the next read of a lost page into SIGBUS. This is compiled once
 * (not a header's static functions, which every including translation unit would copy, each with its own
 * handler state): one process-wide SIGBUS handler, one guard per thread.
 *
 * Feeds mapped bytes to the digest. Returns EVP_DigestUpdate's result (1 on success), or -1 when a page of
 * the mapping was gone (the file shrank while it was read); the context must then be reset before reuse.
 */
int CMappingGuard_digest_update(EVP_MD_CTX *context, const void *bytes, size_t count);

#endif
