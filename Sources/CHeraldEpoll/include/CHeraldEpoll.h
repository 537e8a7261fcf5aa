#ifndef C_HERALD_EPOLL_H
#define C_HERALD_EPOLL_H

// epoll and eventfd, which Swift's Glibc module doesn't export: the gateway's parking
// lot watches parked sockets with them.
#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

#endif
