#include "proxy/testing/open_loop_load.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>

namespace migserve::proxy {
namespace {

using Clock = std::chrono::steady_clock;

size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }

struct Request {
  CURL* easy = nullptr;
  double due_s = 0;
  bool counted = false;
};

}  // namespace

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(q * values.size()));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

LoadResult RunOpenLoop(const LoadOptions& options) {
  LoadResult result;
  std::mt19937_64 rng(options.seed);
  double shape = 1 / (options.cv * options.cv);
  std::gamma_distribution<double> gap(shape, 1 / (options.rate * shape));
  std::uniform_int_distribution<size_t> pick(0, options.proxies.size() - 1);
  std::vector<std::string> urls;
  for (int port : options.proxies) {
    urls.push_back("http://127.0.0.1:" + std::to_string(port) + options.path);
  }
  curl_slist* headers = nullptr;
  if (!options.service.empty()) {
    std::string header = "migserve-service: " + options.service;
    headers = curl_slist_append(headers, header.c_str());
  }
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 4096L);
  std::vector<CURL*> idle;
  std::vector<Request> running;
  auto start = Clock::now();
  auto now_s = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double next = gap(rng);
  int active = 0;
  while (next < options.duration_s || active > 0) {
    while (next < options.duration_s && next <= now_s()) {
      CURL* easy = nullptr;
      if (!idle.empty()) {
        easy = idle.back();
        idle.pop_back();
      } else {
        easy = curl_easy_init();
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, "{}");
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, Discard);
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 30000L);
        curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
        // Without it libcurl swaps the SIGPIPE handler in and out around
        // every call: two sigactions per loop, most of a core at these rates.
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
      }
      curl_easy_setopt(easy, CURLOPT_URL, urls[pick(rng)].c_str());
      running.push_back({easy, next, next >= options.warmup_s});
      curl_multi_add_handle(multi, easy);
      ++active;
      ++result.sent;
      next += gap(rng);
    }
    int still = 0;
    curl_multi_perform(multi, &still);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      double done = now_s();
      auto it = std::find_if(running.begin(), running.end(),
                             [&](const Request& r) { return r.easy == easy; });
      long code = 0;
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
      if (msg->data.result != CURLE_OK || code != 200) {
        ++result.failed;
      } else if (it->counted) {
        result.latencies_ms.push_back((done - it->due_s) * 1000);
      }
      running.erase(it);
      curl_multi_remove_handle(multi, easy);
      idle.push_back(easy);
      --active;
    }
    // Rounded up: a wait under a millisecond is a wait, not a spin. A request
    // sent up to 1 ms late counts its lateness (latency runs from due_s).
    double wait_s = next < options.duration_s ? next - now_s() : 0.01;
    int wait_ms =
        static_cast<int>(std::clamp(std::ceil(wait_s * 1000), 0.0, 10.0));
    curl_multi_poll(multi, nullptr, 0, wait_ms, nullptr);
  }
  for (CURL* easy : idle) curl_easy_cleanup(easy);
  curl_multi_cleanup(multi);
  curl_slist_free_all(headers);
  return result;
}

}  // namespace migserve::proxy
