// What the tests' HTTP stand-ins (the API server, emulated replicas, a
// Triton metrics endpoint) share: serving a cpp-httplib server on a free
// port of 127.0.0.1 from a thread of its own.
#ifndef MIGSERVE_UTIL_TESTING_HTTP_LISTENER_H_
#define MIGSERVE_UTIL_TESTING_HTTP_LISTENER_H_

#include <thread>

namespace httplib {
class Server;
}  // namespace httplib

namespace migserve::testing {

// Binds `server` to a free port of 127.0.0.1 and serves it on a new thread,
// returning once it listens (stopped before then, it would listen for
// ever). `port` receives the port (<= 0: none bound, and no thread runs).
// Join the thread after server->stop().
std::thread ListenOnLocalPort(httplib::Server* server, int* port);

}  // namespace migserve::testing

#endif  // MIGSERVE_UTIL_TESTING_HTTP_LISTENER_H_
