#include "proxy/testing/kept_alive.h"

#include <httplib.h>

namespace migserve::proxy {

bool InferKeptAlive(httplib::Client* client, bool retry,
                    std::atomic<int>* closed) {
  auto res = client->Post("/v2/models/m/infer", "{}", "application/json");
  if (!res && (res.error() == httplib::Error::Read ||
               res.error() == httplib::Error::Write)) {
    ++*closed;
    if (retry) {
      res = client->Post("/v2/models/m/infer", "{}", "application/json");
    }
  }
  return res && res->status == 200;
}

}  // namespace migserve::proxy
