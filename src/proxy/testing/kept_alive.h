// A client's request on a kept-alive connection through the proxy, as the
// docs advise clients to send it (docs/serving.md, "Reloads and
// keep-alive"): a reload closes a connection idle between two requests,
// and a request written at that instant gets no response.
#ifndef MIGSERVE_PROXY_TESTING_KEPT_ALIVE_H_
#define MIGSERVE_PROXY_TESTING_KEPT_ALIVE_H_

#include <atomic>

namespace httplib {
class Client;
}  // namespace httplib

namespace migserve::proxy {

// Posts an inference request for model "m" on `client`; one that got no
// response because its connection closed counts in `closed` and, when
// `retry`, is sent once more. Whether it was answered 200.
bool InferKeptAlive(httplib::Client* client, bool retry,
                    std::atomic<int>* closed);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_KEPT_ALIVE_H_
