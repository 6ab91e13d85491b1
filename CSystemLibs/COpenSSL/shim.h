#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

/* Swift cannot import these macros; expose them as prefixed constants. */
static inline int COpenSSL_EVP_MAX_MD_SIZE(void) { return EVP_MAX_MD_SIZE; }

/* The newest error on this thread's OpenSSL queue as text, "" when the queue is empty. */
static inline void COpenSSL_last_error_string(char *buffer, size_t length) {
    unsigned long code = ERR_get_error();
    if (code == 0) { if (length > 0) buffer[0] = 0; return; }
    ERR_error_string_n(code, buffer, length);
}

/*
 * Hashing a file through a memory mapping skips the kernel's copy out of the page cache, but a file that
 * another process truncates meanwhile turns the next read of a lost page into SIGBUS. While this thread
 * hashes a mapping, COpenSSL_mapping_guard says where such a SIGBUS returns to; any other SIGBUS goes to
 * the handler that was there before (the Swift runtime's crash reporter, or the default action).
 */
/* Swift emits a header's functions but not its variables, so the state lives in function-local statics. */
static inline sigjmp_buf **COpenSSL_mapping_guard(void) {
    static __thread sigjmp_buf *guard;
    return &guard;
}

static inline struct sigaction *COpenSSL_previous_sigbus_action(void) {
    static struct sigaction previous;
    return &previous;
}

static void COpenSSL_sigbus_handler(int signal_number, siginfo_t *info, void *context) {
    sigjmp_buf *guard = *COpenSSL_mapping_guard();
    if (guard != NULL) siglongjmp(*guard, 1);
    /* Not a guarded read: put the earlier handler back; the faulting access repeats and reaches it. */
    sigaction(SIGBUS, COpenSSL_previous_sigbus_action(), NULL);
    (void)signal_number; (void)info; (void)context;
}

static void COpenSSL_install_sigbus_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = COpenSSL_sigbus_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, COpenSSL_previous_sigbus_action());
}

/* Feeds mapped bytes to the digest. Returns EVP_DigestUpdate's result (1 on success), or -1 when a page of
   the mapping was gone (the file shrank while it was read); the context must then be reset before reuse. */
static inline int COpenSSL_EVP_DigestUpdate_mapped(EVP_MD_CTX *context, const void *bytes, size_t count) {
    static pthread_once_t installed = PTHREAD_ONCE_INIT;
    pthread_once(&installed, COpenSSL_install_sigbus_handler);
    sigjmp_buf guard;
    if (sigsetjmp(guard, 1) != 0) {
        *COpenSSL_mapping_guard() = NULL;
        return -1;
    }
    *COpenSSL_mapping_guard() = &guard;
    int result = EVP_DigestUpdate(context, bytes, count);
    *COpenSSL_mapping_guard() = NULL;
    return result;
}
#endif
