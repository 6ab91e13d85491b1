#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#include <string.h>

/* Swift cannot import these macros; expose them as prefixed constants. */
static inline int COpenSSL_EVP_MAX_MD_SIZE(void) { return EVP_MAX_MD_SIZE; }

/* The newest error on this thread's OpenSSL queue as text, "" when the queue is empty. */
static inline void COpenSSL_last_error_string(char *buffer, size_t length) {
    unsigned long code = ERR_get_error();
    if (code == 0) { if (length > 0) buffer[0] = 0; return; }
    ERR_error_string_n(code, buffer, length);
}

#endif
