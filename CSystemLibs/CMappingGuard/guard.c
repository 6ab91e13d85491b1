#include "CMappingGuard.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

/* Where a SIGBUS during a guarded read returns to, on this thread; NULL outside one. */
static __thread sigjmp_buf *guard;
/* The handler that was installed before ours: any SIGBUS outside a guarded read goes back to it. */
static struct sigaction previous;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void sigbus_handler(int signal_number, siginfo_t *info, void *context) {
    (void)signal_number; (void)info; (void)context;
    if (guard != NULL) siglongjmp(*guard, 1);
    /* Not a guarded read: put the earlier handler back; the faulting access repeats and reaches it. */
    sigaction(SIGBUS, &previous, NULL);
}

static void install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = sigbus_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &previous);
}

int CMappingGuard_digest_update(EVP_MD_CTX *context, const void *bytes, size_t count) {
    pthread_once(&installed, install);
    sigjmp_buf here;
    if (sigsetjmp(here, 1) != 0) {
        guard = NULL;
        return -1;
    }
    guard = &here;
    int result = EVP_DigestUpdate(context, bytes, count);
    guard = NULL;
    return result;
}
