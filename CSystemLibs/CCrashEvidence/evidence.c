#include "CCrashEvidence.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* SIGBUS is left out: hashing through mappings turns it into an error (CMappingGuard), not a death. */
static const int fault_signals[] = {SIGSEGV, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
#define FAULT_SIGNAL_COUNT (sizeof fault_signals / sizeof fault_signals[0])

static struct sigaction previous[FAULT_SIGNAL_COUNT];
static atomic_int evidence_fd = -1;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void fault_handler(int signal_number, siginfo_t *info, void *context) {
    (void)context;
    int fd = atomic_exchange(&evidence_fd, -1);
    if (fd >= 0) {
        /* Only async-signal-safe calls: the line is built by hand. */
        char line[32] = "fault signal ";
        size_t length = strlen(line);
        char digits[12];
        int count = 0, number = signal_number;
        do { digits[count++] = (char)('0' + number % 10); number /= 10; } while (number > 0 && count < 11);
        while (count > 0) line[length++] = digits[--count];
        line[length++] = '\n';
        ssize_t written = write(fd, line, length);
        (void)written;
        fsync(fd);
    }
    for (size_t index = 0; index < FAULT_SIGNAL_COUNT; index++) {
        if (fault_signals[index] != signal_number) continue;
        sigaction(signal_number, &previous[index], NULL);
    }
    /* A fault the kernel raised repeats when the handler returns and reaches the earlier handler; one sent by
     * kill, raise or abort does not repeat, so it is sent again. */
    if (info == NULL || info->si_code <= 0) raise(signal_number);
}

static void install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = fault_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t index = 0; index < FAULT_SIGNAL_COUNT; index++) {
        sigaction(fault_signals[index], &action, &previous[index]);
    }
}

void CCrashEvidence_arm(int fd) {
    pthread_once(&installed, install);
    atomic_store(&evidence_fd, fd);
}

void CCrashEvidence_disarm(void) {
    atomic_store(&evidence_fd, -1);
}

void CCrashEvidence_fault_for_tests(void) {
    volatile int *nowhere = NULL;
    *nowhere = 1;
}
