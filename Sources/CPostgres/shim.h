#ifndef REPOSITORY_CPOSTGRES_SHIM_H
#define REPOSITORY_CPOSTGRES_SHIM_H

// The libpq client API and the type OIDs it speaks of, for the Swift `Repository` module.
#include <libpq-fe.h>
#include <postgres_ext.h>

// What waits for libpq's sockets on Linux (Glibc's Swift module leaves epoll out).
#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

#endif
