#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#include <string.h>
#include <openssl/params.h>

/* Swift cannot import these macros; expose them as prefixed constants. */
static inline int COpenSSL_EVP_MAX_MD_SIZE(void) { return EVP_MAX_MD_SIZE; }

/* The newest error on this thread's OpenSSL queue as text, "" when the queue is empty. */
static inline void COpenSSL_last_error_string(char *buffer, size_t length) {
    unsigned long code = ERR_get_error();
    if (code == 0) { if (length > 0) buffer[0] = 0; return; }
    ERR_error_string_n(code, buffer, length);
}

/* A digest of one buffer in one call by the algorithm's name ("MD5", "SHA256"); returns 1 on success. */
static inline int COpenSSL_digest(const char *algorithm, const void *data, size_t length, unsigned char *output,
                                  size_t *output_length) {
    return EVP_Q_digest(NULL, algorithm, NULL, data, length, output, output_length);
}

/* HMAC-SHA256 in one call (OpenSSL 3's EVP_Q_mac); returns 1 on success, as EVP calls do. */
static inline int COpenSSL_hmac_sha256(const void *key, size_t key_length, const void *message, size_t message_length,
                                       unsigned char *output, size_t *output_length) {
    static char digest[] = "SHA256";
    OSSL_PARAM parameters[] = { OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end() };
    unsigned char *result = EVP_Q_mac(NULL, "HMAC", NULL, NULL, parameters, key, key_length, message, message_length,
                                      output, EVP_MAX_MD_SIZE, output_length);
    return result != NULL ? 1 : 0;
}

#endif
