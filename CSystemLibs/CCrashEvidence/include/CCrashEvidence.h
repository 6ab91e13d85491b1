#ifndef CCRASHEVIDENCE_H
#define CCRASHEVIDENCE_H

/*
 * Evidence of how the worker died, for the crash-loop guard. A process killed from outside (SIGKILL, the OOM
 * killer, a reboot) leaves nothing; one that faults (a decoder's SIGSEGV, an abort, a Swift trap) writes one
 * line to a file the run opened beforehand, then dies as it would have. Compiled once: one set of handlers per
 * process, installed on first arming, each handing the signal on to the handler that was there before it.
 *
 * CCrashEvidence_arm: from now on a fault writes "fault signal N\n" to `fd` (opened by the caller, kept open).
 * CCrashEvidence_disarm: faults write nothing (the descriptor stays the caller's to close).
 * CCrashEvidence_fault_for_tests: dereferences a null pointer, for the tests of a file that crashes the worker.
 */
void CCrashEvidence_arm(int fd);
void CCrashEvidence_disarm(void);
void CCrashEvidence_fault_for_tests(void);

#endif
