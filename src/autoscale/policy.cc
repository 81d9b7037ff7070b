#include "autoscale/policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace migserve::autoscale {

Status PolicyOptions::Validate() const {
  auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  if (!positive(interval_s)) {
    return Status::InvalidArgument("interval must be > 0 seconds");
  }
  if (!positive(window_s)) {
    return Status::InvalidArgument("window must be > 0 seconds");
  }
  if (!(quantile > 0 && quantile <= 1)) {
    return Status::InvalidArgument("quantile must be in (0, 1]");
  }
  if (!(trend_s >= 0 && std::isfinite(trend_s))) {
    return Status::InvalidArgument("trend must be >= 0 seconds");
  }
  if (!(up_step >= 0 && up_step <= 10)) {
    return Status::InvalidArgument("up-step must be in [0, 10]");
  }
  if (!(headroom >= 0 && headroom <= 10)) {
    return Status::InvalidArgument("headroom must be in [0, 10]");
  }
  if (!(up_limit >= 0 && up_limit <= 1000)) {
    return Status::InvalidArgument("up-limit must be in [0, 1000]");
  }
  if (!(down_limit >= 0 && down_limit < 1)) {
    return Status::InvalidArgument("down-limit must be in [0, 1)");
  }
  if (!(grid >= 0 && grid <= 1)) {
    return Status::InvalidArgument("grid must be in [0, 1]");
  }
  if (!positive(min_rate)) {
    return Status::InvalidArgument("min rate must be > 0 req/s");
  }
  if (!(down_below > 0 && down_below <= 1)) {
    return Status::InvalidArgument("down-below must be in (0, 1]");
  }
  if (!(cooldown_s >= 0 && std::isfinite(cooldown_s))) {
    return Status::InvalidArgument("cool-down must be >= 0 seconds");
  }
  if (!(start_cost_gpu_s >= 0 && std::isfinite(start_cost_gpu_s))) {
    return Status::InvalidArgument("start cost must be >= 0 GPU-seconds");
  }
  if (!(p99_near > 0 && p99_near <= 1)) {
    return Status::InvalidArgument("p99-near must be in (0, 1]");
  }
  if (!(margin_floor > 0 && margin_floor <= 1)) {
    return Status::InvalidArgument("margin-floor must be in (0, 1]");
  }
  return Status::Ok();
}

const char* MoveName(Move move) {
  switch (move) {
    case Move::kHold:
      return "hold";
    case Move::kUp:
      return "up";
    case Move::kDown:
      return "down";
  }
  return "hold";
}

Policy::Policy(PolicyOptions options, std::vector<std::string> services,
               std::vector<double> required)
    : options_(options),
      services_(std::move(services)),
      required_(std::move(required)),
      margin_(services_.size(), 1.0),
      low_since_(services_.size(), -1) {}

double Policy::Round(double rate) const {
  rate = std::max(rate, options_.min_rate);
  if (options_.grid == 0) return rate;
  double step = std::log1p(options_.grid);
  // The smallest power of 1 + grid at or above the rate (a hair of slack
  // for a rate that is a power already).
  return std::exp(std::ceil(std::log(rate) / step - 1e-9) * step);
}

double Policy::Want(size_t s, const std::vector<Observation>& window) const {
  if (window.empty()) return required_[s];
  std::vector<double> rates;
  std::vector<double> times;
  for (const Observation& o : window) {
    if (std::isnan(o.rates[s])) continue;
    rates.push_back(o.rates[s]);
    times.push_back(o.time_s);
  }
  if (rates.empty()) return std::nan("");
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  size_t rank = static_cast<size_t>(
      std::ceil(options_.quantile * static_cast<double>(sorted.size())));
  double level = sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
  // Least-squares slope of rate over time; only a rise counts.
  double n = static_cast<double>(rates.size());
  double mean_t = 0, mean_r = 0;
  for (size_t k = 0; k < rates.size(); ++k) {
    mean_t += times[k] / n;
    mean_r += rates[k] / n;
  }
  double cov = 0, var = 0;
  for (size_t k = 0; k < rates.size(); ++k) {
    cov += (times[k] - mean_t) * (rates[k] - mean_r);
    var += (times[k] - mean_t) * (times[k] - mean_t);
  }
  double slope = var > 0 ? cov / var : 0;
  return Round((level + std::max(0.0, slope) * options_.trend_s) *
               (1 + options_.headroom) / margin_[s]);
}

std::string Policy::Change(size_t s, double to,
                           std::vector<double>* required) const {
  const double was = required_[s];
  double limited = to;
  if (was > 0 && options_.up_limit > 0) {
    limited = std::min(limited, was * (1 + options_.up_limit));
  }
  if (was > 0 && options_.down_limit > 0) {
    limited = std::max(limited, was * (1 - options_.down_limit));
  }
  (*required)[s] = limited;
  if (limited == to) {
    return fmt::format("{} ({:.6g} -> {:.6g} req/s)", services_[s], was, to);
  }
  return fmt::format(
      "{} ({:.6g} -> {:.6g} req/s, a step of at most {:.0f}%; wants {:.6g})",
      services_[s], was, limited,
      100 * (to > was ? options_.up_limit : options_.down_limit), to);
}

namespace {

// "a (x -> y req/s), b (...) and 3 more".
std::string Listed(const std::vector<std::string>& parts) {
  constexpr size_t kShown = 3;
  std::string text;
  for (size_t k = 0; k < parts.size() && k < kShown; ++k) {
    text += (k == 0 ? "" : ", ") + parts[k];
  }
  if (parts.size() > kShown) {
    text += fmt::format(" and {} more", parts.size() - kShown);
  }
  return text;
}

}  // namespace

Decision Policy::Decide(double now_s, const std::vector<Observation>& window) {
  Decision d{Move::kHold, required_, ""};
  std::vector<std::string> up, along, down;
  std::vector<double> want(services_.size());
  auto above = [&](size_t s, double rate) {
    return rate > required_[s] * (1 + 1e-9);
  };
  // Per service: its latest p99 when near its SLO, else 0. Over the SLO
  // at a rate under its credits: its credits hold the SLO only up to that
  // rate.
  std::vector<double> hot(services_.size(), 0);
  std::vector<std::string> corrected;
  if (!window.empty() && !window.back().p99_ms.empty()) {
    const Observation& last = window.back();
    for (size_t s = 0; s < services_.size() && s < slo_ms_.size(); ++s) {
      double p99 = last.p99_ms[s];
      // Not a latency (the observer names such samples): no trigger, and
      // nothing learned from it.
      if (!std::isfinite(p99)) continue;
      if (p99 > options_.p99_near * slo_ms_[s]) hot[s] = p99;
      double credited = s < capacity_.size() ? capacity_[s] : 0;
      double rate = last.rates[s];
      if (!(p99 > slo_ms_[s]) || !(credited > 0) || !(rate < credited)) {
        continue;
      }
      double margin = std::max(options_.margin_floor, rate / credited);
      if (margin < margin_[s]) {
        margin_[s] = margin;
        corrected.push_back(fmt::format(
            "{} to {:.0f}% (p99 {:.4g} ms over its SLO {:.4g} ms at {:.6g} "
            "of {:.6g} credited req/s)",
            services_[s], 100 * margin, p99, slo_ms_[s], rate, credited));
      }
    }
  }
  bool rising = false, ripe = false;
  for (size_t s = 0; s < services_.size(); ++s) {
    want[s] = Want(s, window);
    if (hot[s] > 0) {
      // Its rate may say it has enough: its latency says it has not.
      double credited =
          std::max(required_[s], s < capacity_.size() ? capacity_[s] : 0.0);
      want[s] = Round(std::max(std::isnan(want[s]) ? 0 : want[s], credited) *
                      (1 + options_.up_step));
    }
    if (std::isnan(want[s])) {
      // Not observed: it keeps its rate and its cool-down starts over.
      low_since_[s] = -1;
      continue;
    }
    rising |= above(s, want[s]);
    if (want[s] >= options_.down_below * required_[s]) {
      low_since_[s] = -1;
    } else if (low_since_[s] < 0) {
      low_since_[s] = now_s;
    }
    ripe |= low_since_[s] >= 0 && now_s - low_since_[s] >= options_.cooldown_s;
  }
  for (size_t s = 0; s < services_.size(); ++s) {
    if (std::isnan(want[s])) continue;
    // Once one service has been low for a cool-down, every low one moves
    // down with it: one move, not one per service.
    bool down_too = ripe && low_since_[s] >= 0;
    double ahead = Round(want[s] * (1 + options_.up_step));
    auto change = [&](double to) { return Change(s, to, &d.required); };
    if (hot[s] > 0) {
      up.push_back(change(want[s]) +
                   fmt::format(" p99 {:.4g} ms near its SLO {:.4g} ms", hot[s],
                               slo_ms_[s]));
    } else if (above(s, want[s])) {
      up.push_back(change(std::max(want[s], ahead)));
    } else if (rising && above(s, ahead)) {
      along.push_back(change(ahead));
    } else if (down_too) {
      down.push_back(change(want[s]));
    }
  }
  if (!up.empty()) {
    d.move = Move::kUp;
    d.reason = "up: " + Listed(up) + " want more than required";
    if (!along.empty()) d.reason += "; along, rising: " + Listed(along);
    if (!down.empty()) d.reason += "; down with them: " + Listed(down);
    if (!corrected.empty()) {
      d.reason += "; credits corrected: " + Listed(corrected);
    }
  } else if (!down.empty()) {
    d.move = Move::kDown;
    d.reason = fmt::format(
        "down: {} want under {:.0f}% of their required rate, one of them "
        "for {:.0f} s",
        Listed(down), 100 * options_.down_below, options_.cooldown_s);
  }
  return d;
}

void Policy::Moved(const std::vector<double>& required) {
  for (size_t s = 0; s < required_.size(); ++s) {
    if (required[s] != required_[s]) low_since_[s] = -1;
  }
  required_ = required;
}

void Policy::Declined(double now_s) {
  for (double& since : low_since_) {
    if (since >= 0) since = now_s;
  }
}

PolicyState Policy::Remembered() const {
  PolicyState memory;
  for (size_t s = 0; s < services_.size(); ++s) {
    if (low_since_[s] >= 0) memory.low_since[services_[s]] = low_since_[s];
    if (margin_[s] < 1) memory.margins[services_[s]] = margin_[s];
  }
  return memory;
}

void Policy::Recall(const PolicyState& memory) {
  for (size_t s = 0; s < services_.size(); ++s) {
    if (auto it = memory.low_since.find(services_[s]);
        it != memory.low_since.end() && it->second >= 0) {
      low_since_[s] = it->second;
    }
    if (auto it = memory.margins.find(services_[s]);
        it != memory.margins.end()) {
      margin_[s] = std::min(margin_[s],
                            std::clamp(it->second, options_.margin_floor, 1.0));
    }
  }
}

bool Policy::WorthIt(int gpus_now, int gpus_after, int pod_starts) const {
  double saved = (gpus_now - gpus_after) * options_.cooldown_s;
  return saved > pod_starts * options_.start_cost_gpu_s;
}

}  // namespace migserve::autoscale
