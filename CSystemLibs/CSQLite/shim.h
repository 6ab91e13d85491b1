#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/* Binds a copy of `length` bytes of UTF-8 text (SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift
   cannot import): the caller's buffer may go as soon as the call returns. */
static inline int CSQLite_bind_text_copy(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
#endif
